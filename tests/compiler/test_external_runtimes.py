"""trainspec never emits an object it does not own: built-in names of its own, external runtimes.

Kubeflow Trainer installs ClusterTrainingRuntimes (``torch-distributed``, ...). trainspec's
hardened built-ins take names of their own; a job may still name Kubeflow Trainer's runtimes, or
another team's runtime (a ``Runtime`` with ``spec.external: true``), and then trainspec emits
only the TrainJob.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from trainspec.compiler.pipeline import compile_paths, compile_specs
from trainspec.compiler.plan import SHARDED_SUFFIX
from trainspec.compiler.resolve import RuntimeEntry, RuntimeIndex, build_index
from trainspec.dsl.diagnostics import CODES
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.load.spec_sources import load_string
from trainspec.dsl.spec.models import Framework, Runtime
from trainspec.dsl.spec.reserved_runtimes import UPSTREAM_RUNTIME_NAMES, is_upstream_name
from trainspec.runtimes import builtin_names, builtin_runtime
from trainspec.runtimes.upstream import CATALOG, unmodeled, upstream_runtime

UPSTREAM = Path(__file__).resolve().parents[2].parent / "shared" / "upstream" / "trainer-runtimes"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


def job(runtime: str, body: str = "", name: str = "j") -> str:
    return textwrap.dedent(f"""\
        apiVersion: trainspec.dev/v1alpha1
        kind: TrainingJob
        metadata: {{name: {name}, namespace: ns}}
        spec:
          runtime: {runtime}
          queue: q
        """) + textwrap.indent(textwrap.dedent(body), "  ")


TEAM_RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: vision-h100}
spec:
  framework: torch
  external: true
  image: registry.example.com/vision/torch:2.13
  nodes: 2
  maxNodes: 4
  resourcesPerNode: {gpu: 8}
"""


def load(*docs: str) -> tuple[list[LoadedSpec], list]:
    return load_string("---\n".join(docs), "t.yaml")


def compile_text(*docs: str):
    specs, problems = load(*docs)
    assert [d for d in problems if d.is_error] == []
    return compile_specs(specs)


def emitted_runtimes(result) -> list[str]:
    return sorted(o.metadata.name for o in result.objects() if type(o).__name__ in RUNTIME_KINDS)


def trainjob(result):
    (tj,) = [o for o in result.objects() if type(o).__name__ == "TrainJob"]
    return tj


# -- 1. built-in names of trainspec's own ---------------------------------------------------------


def test_no_builtin_nor_its_sharded_variant_takes_an_upstream_name() -> None:
    assert builtin_names() == ("trainspec-deepspeed", "trainspec-jax", "trainspec-mpi", "trainspec-torch")
    for name in builtin_names():
        runtime = builtin_runtime(name)
        assert runtime is not None and runtime.spec.spec.data_sharding is not None  # so -sharded exists
        for emitted in (name, name + SHARDED_SUFFIX):
            assert not is_upstream_name(emitted), emitted
            assert emitted not in {entry.name for entry in CATALOG}


def test_builtin_objects_carry_their_own_names() -> None:
    # The built-ins name no stage image: the project's spec.defaults.stageImage gives it.
    project = (
        "apiVersion: trainspec.dev/v1alpha1\nkind: Project\n"
        "spec: {defaults: {stageImage: registry.example.com/trainspec:0.1.0}}\n"
    )
    result = compile_text(job("trainspec-torch", "data: {source: s3://d/}\n"), project)
    assert emitted_runtimes(result) == ["trainspec-torch-sharded"]
    assert trainjob(result).spec.runtime_ref.name == "trainspec-torch-sharded"


def test_upstream_names_cover_every_runtime_kubeflow_trainer_installs() -> None:
    if not UPSTREAM.is_dir():
        pytest.skip(f"../shared/upstream/trainer-runtimes not found: {UPSTREAM}")
    installed = {
        doc["metadata"]["name"]
        for path in UPSTREAM.rglob("*.yaml")
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and doc.get("kind") in RUNTIME_KINDS
    }
    assert installed == set(UPSTREAM_RUNTIME_NAMES) == {entry.name for entry in CATALOG}
    assert is_upstream_name("torchtune-llama3.3-70b")  # any torchtune-* is Trainer's to add
    assert not is_upstream_name("torch-h100") and not is_upstream_name("trainspec-torch")


def _trainer_rjob(doc: dict) -> dict:
    rjobs = doc["spec"]["template"]["spec"]["replicatedJobs"]
    ancestor = "trainer.kubeflow.org/trainjob-ancestor-step"
    return next(r for r in rjobs if (r["template"].get("metadata") or {}).get("labels", {}).get(ancestor) == "trainer")


def test_catalog_summaries_match_the_upstream_manifests() -> None:
    """The catalog is written by hand; this reads the manifests and compares every fact it keeps."""
    if not UPSTREAM.is_dir():
        pytest.skip(f"../shared/upstream/trainer-runtimes not found: {UPSTREAM}")
    by_name = {entry.name: entry for entry in CATALOG}
    for path in sorted(UPSTREAM.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or doc.get("kind") not in RUNTIME_KINDS:
                continue
            entry = by_name[doc["metadata"]["name"]]
            policy = doc["spec"]["mlPolicy"]
            rjobs = [r["name"] for r in doc["spec"]["template"]["spec"]["replicatedJobs"]]
            trainer = _trainer_rjob(doc)
            (node,) = [c for c in trainer["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == "node"]
            limits = (node.get("resources") or {}).get("limits") or {}
            assert entry.framework == doc["metadata"]["labels"]["trainer.kubeflow.org/framework"], entry.name
            assert entry.policy == next(k for k in policy if k != "numNodes"), entry.name
            assert entry.nodes == policy.get("numNodes", 1), entry.name
            assert entry.image == node["image"], entry.name
            assert entry.gpus == limits.get("nvidia.com/gpu"), entry.name
            assert entry.procs_per_node == (policy.get("mpi") or {}).get("numProcPerNode"), entry.name
            assert entry.initializers == tuple(r for r in rjobs if r.endswith("-initializer")), entry.name
            mpi = policy.get("mpi") or {}
            assert entry.ssh_auth_mount_path == mpi.get("sshAuthMountPath"), entry.name
            assert entry.launcher_as_node == mpi.get("runLauncherAsNode"), entry.name


# -- the rule: a Runtime spec must not take an upstream name ------------------------------------------


def test_runtime_named_like_an_upstream_runtime_is_an_error() -> None:
    runtime = TEAM_RUNTIME.replace("vision-h100", "torch-distributed").replace("  external: true\n", "")
    specs, problems = load(runtime)
    (diag,) = problems
    assert diag.code == "TS414" and diag.is_error
    assert diag.path == "metadata.name" and (diag.line, diag.column) == (3, 18)
    assert "Kubeflow Trainer installs" in diag.message and "external: true" in diag.hint
    assert len(specs) == 1  # the spec still loads, so a job naming it gets no TS305 on top


def test_compile_refuses_a_runtime_named_like_upstream(tmp_path: Path) -> None:
    runtime = TEAM_RUNTIME.replace("vision-h100", "torch-distributed").replace("  external: true\n", "")
    spec = tmp_path / "specs.yaml"
    spec.write_text("---\n".join([runtime, job("torch-distributed")]), encoding="utf-8")
    result = compile_paths([str(spec)])
    assert not result.ok
    assert [d.code for d in result.diagnostics] == ["TS414"]


def test_torchtune_prefix_is_reserved_too() -> None:
    runtime = TEAM_RUNTIME.replace("vision-h100", "torchtune-mine").replace("  external: true\n", "")
    _, problems = load(runtime)
    assert [d.code for d in problems] == ["TS414"]


def test_the_same_name_with_external_true_is_fine() -> None:
    _, problems = load(TEAM_RUNTIME.replace("vision-h100", "torch-distributed"))
    assert problems == []


def test_python_runtime_named_like_upstream_is_reported(tmp_path: Path) -> None:
    from trainspec.dsl.load.spec_sources import load_path

    spec = tmp_path / "rt.py"
    spec.write_text(
        "from trainspec import Runtime\n\n"
        "rt = Runtime(name='jax-distributed', framework='jax', image='nvcr.io/nvidia/jax:25.10-py3')\n"
    )
    _, problems = load_path(spec)
    assert [(d.code, d.line) for d in problems] == [("TS414", 3)]


# -- 2a. Kubeflow Trainer's runtimes as external catalog entries ------------------------------------


def test_job_on_upstream_torch_references_it_and_emits_no_runtime() -> None:
    result = compile_text(job("torch-distributed", "nodes: 2\nresourcesPerNode: {cpu: 2}\n"))
    assert result.ok, [d.message for d in result.diagnostics]
    assert emitted_runtimes(result) == []
    ref = trainjob(result).spec.runtime_ref
    assert (ref.name, ref.kind) == ("torch-distributed", "ClusterTrainingRuntime")
    (plan,) = result.plans
    entry = plan.resolved.runtime
    assert entry.external and not entry.builtin
    assert plan.resolved.image.value == "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
    assert plan.resolved.framework is Framework.TORCH


def test_upstream_deepspeed_resolves_as_mpi_with_launcher() -> None:
    result = compile_text(job("deepspeed-distributed", "nodes: 3\nresourcesPerNode: {gpu: 4}\n"))
    (plan,) = result.plans
    assert [r.name for r in plan.rjobs] == ["node", "launcher"]
    assert plan.resolved.procs_per_node.value == 4  # Trainer turns numProcPerNode 1 into the GPU count
    assert emitted_runtimes(result) == []


def test_upstream_torchtune_counts_its_initializers_in_the_name_budget() -> None:
    result = compile_text(job("torchtune-llama3.2-1b", name="a" * 34))
    (diag,) = [d for d in result.diagnostics if d.code == "TS401"]
    assert "at most 26" in diag.message
    fits = compile_text(job("torchtune-llama3.2-1b", name="a" * 26))
    assert fits.ok and [r.name for r in fits.plans[0].rjobs][:2] == ["dataset-initializer", "model-initializer"]
    assert fits.plans[0].resolved.gpus_per_node.value == 2


def test_data_sharding_on_an_upstream_runtime_is_refused() -> None:
    result = compile_text(job("torch-distributed", "data: {source: s3://d/}\n"))
    assert "TS402" in [d.code for d in result.diagnostics if d.is_error]


@pytest.mark.parametrize(("name", "framework"), [("mlx-distributed", "mlx"), ("xgboost-distributed", "xgboost")])
def test_frameworks_trainspec_does_not_model_are_a_clear_diagnostic(name: str, framework: str) -> None:
    result = compile_text(job(name))
    (diag,) = result.diagnostics
    assert diag.code == "TS415" and diag.is_error and diag.path == "spec.runtime"
    assert framework in diag.message and "trainspec-torch" in diag.hint
    assert upstream_runtime(name) is None and unmodeled(name) is not None


def test_typo_of_an_upstream_name_suggests_it() -> None:
    result = compile_text(job("torch-distributd"))
    (diag,) = result.diagnostics
    assert diag.code == "TS305" and diag.hint == "did you mean torch-distributed?"


def test_new_codes_are_registered() -> None:
    assert {"TS414", "TS415"} <= set(CODES)


# -- 2b. another team's runtime: spec.external ---------------------------------------------------


def test_external_runtime_resolves_like_any_other() -> None:
    result = compile_text(TEAM_RUNTIME, job("vision-h100", "nodes: 8\n"))
    (diag,) = [d for d in result.diagnostics if d.code == "TS400"]  # the runtime rules still apply
    assert "caps at 4" in diag.message
    ok = compile_text(TEAM_RUNTIME, job("vision-h100"))
    (plan,) = ok.plans
    assert plan.resolved.nodes.value == 2 and plan.resolved.procs_per_node.value == 8
    assert plan.resolved.runtime.external and not plan.resolved.runtime.builtin


def test_external_runtime_is_never_emitted() -> None:
    """Needs the pipeline to skip external runtimes when lowering (pipeline.py, owned elsewhere)."""
    result = compile_text(TEAM_RUNTIME, job("vision-h100"))
    assert result.ok
    assert emitted_runtimes(result) == []
    assert trainjob(result).spec.runtime_ref.name == "vision-h100"


def test_runtime_entry_external_property() -> None:
    specs, _ = load(TEAM_RUNTIME, TEAM_RUNTIME.replace("vision-h100", "own").replace("  external: true\n", ""))
    external, own = (RuntimeEntry(s, builtin=False) for s in specs)
    assert external.external and not own.external
    torch = builtin_runtime("trainspec-torch")
    assert torch is not None and not RuntimeEntry(torch, builtin=True).external
    index: RuntimeIndex = build_index([])
    found = index.find("ns", "jax-distributed")
    assert found is not None and found.external and found.name == "jax-distributed"
    assert isinstance(found.spec, Runtime) and found.spec.spec.framework is Framework.JAX
    assert index.find("ns", "mlx-distributed") is None


def test_an_input_runtime_replaces_the_upstream_entry() -> None:
    local = TEAM_RUNTIME.replace("vision-h100", "torch-distributed")
    result = compile_text(local, job("torch-distributed"))
    (plan,) = result.plans
    assert plan.resolved.image.value == "registry.example.com/vision/torch:2.13"
    assert plan.resolved.runtime.loaded.file == "t.yaml"


def test_namespaced_runtime_named_like_upstream_would_shadow_it() -> None:
    runtime = TEAM_RUNTIME.replace("{name: vision-h100}", "{name: jax-distributed, namespace: team-a}").replace(
        "  external: true\n", "  scope: namespace\n"
    )
    _, problems = load(runtime)
    (diag,) = problems
    assert diag.code == "TS414" and "shadow the cluster's own in namespace team-a" in diag.message


def test_every_modeled_catalog_entry_is_an_external_runtime() -> None:
    for entry in CATALOG:
        loaded = upstream_runtime(entry.name)
        if entry.modeled is None:
            assert loaded is None and entry.framework in ("mlx", "xgboost")
            continue
        assert loaded is not None and loaded.name == entry.name and loaded.spec.spec.external
        assert loaded.spec.spec.image == entry.image and loaded.spec.spec.framework is entry.modeled
