"""The ray target (issue 13, item 2): KubeRay 1.7 RayJobs for Ray Train.

What each spec field becomes, what the target cannot express (located diagnostics naming the
target, the same from validate and compile), Kueue's RayJob rules, the CRD check of every object
against ../shared/crds/kuberay with the recorded API-server verdicts, and the in-pod helper.
"""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from trainspec.compiler.emit import render_stream
from trainspec.compiler.lower.ray.ray_rules import kueue_problems, max_podsets
from trainspec.compiler.pipeline import Options, Stop, run
from trainspec.dsl.load.spec_sources import load_string
from trainspec.stages.ray import RayConfigError, failure_config, scaling_config, storage_path

EXAMPLE = ROOT / "examples" / "ray-train"
VERDICTS = ROOT.parent / "shared" / "apiserver-verdicts"

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: ray-gpu}
spec:
  engine: ray
  framework: torch
  image: rayproject/ray:2.52.0-py311-gpu
  resourcesPerNode: {gpu: 4, cpu: 16, memory: 64Gi}
"""


def job(body: str = "", name: str = "rj", runtime: str = "ray-gpu") -> str:
    return textwrap.dedent(f"""\
        apiVersion: trainspec.dev/v1alpha1
        kind: TrainingJob
        metadata: {{name: {name}, namespace: ns}}
        spec:
          runtime: {runtime}
          command: [python, train.py]
        """) + textwrap.indent(textwrap.dedent(body), "  ")


def compile_text(*docs: str, stop: Stop = Stop.LOWER, target: dict | None = None):
    specs, problems = load_string("---\n".join(docs), "t.yaml")
    assert [d for d in problems if d.is_error] == []
    return run(specs, Options(project=None, stop=stop, target=target))


def objects(result) -> list[dict]:
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
    return list(yaml.safe_load_all(render_stream(result.outputs)))


def rayjob_of(result) -> dict:
    (found,) = [o for o in objects(result) if o["kind"] == "RayJob"]
    return found


def pods(rayjob: dict) -> list[dict]:
    cluster = rayjob["spec"]["rayClusterSpec"]
    return [cluster["headGroupSpec"]["template"], *(g["template"] for g in cluster["workerGroupSpecs"])]


def env_of(template: dict) -> dict:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in template["spec"]["containers"][0].get("env", [])}


def codes(result) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in result.diagnostics]


# -- what the example becomes -----------------------------------------------------------------------


def test_the_example_is_one_pvc_then_one_rayjob_and_no_runtime_object(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    result = run([EXAMPLE], Options(project=None))
    docs = objects(result)
    assert [d["kind"] for d in docs] == ["PersistentVolumeClaim", "RayJob"]
    assert [o.path for o in result.outputs] == ["team-ml/ray-finetune.yaml"]
    rayjob = docs[1]
    assert rayjob["apiVersion"] == "ray.io/v1"
    spec = rayjob["spec"]
    assert spec["entrypoint"] == "python /app/finetune.py --model meta-llama/Llama-3.1-8B --epochs 3"
    assert spec["shutdownAfterJobFinishes"] is True
    assert "suspend" not in spec and rayjob["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-ml"
    assert spec["activeDeadlineSeconds"] == 24 * 3600
    assert spec["backoffLimit"] == 2  # runtime restarts.max
    assert spec["submissionMode"] == "K8sJobMode"
    (workers,) = spec["rayClusterSpec"]["workerGroupSpecs"]
    assert (workers["replicas"], workers["minReplicas"], workers["maxReplicas"]) == (4, 4, 4)
    limits = workers["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert (
        limits["nvidia.com/gpu"] == 8
        and limits == workers["template"]["spec"]["containers"][0]["resources"]["requests"]
    )
    head = spec["rayClusterSpec"]["headGroupSpec"]
    assert head["rayStartParams"] == {"num-cpus": "0"}  # no training worker on the head
    assert "nvidia.com/gpu" not in head["template"]["spec"]["containers"][0]["resources"]["limits"]


def test_every_pod_has_the_env_the_secrets_and_the_checkpoint_volume(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    rayjob = rayjob_of(run([EXAMPLE], Options(project=None)))
    for template in pods(rayjob):
        env = env_of(template)
        assert env["WANDB_PROJECT"] == "ray-finetune"
        assert env["HF_TOKEN"] == {"secretKeyRef": {"name": "hf-token", "key": "token"}}
        assert env["TRAINSPEC_CHECKPOINT_DIR"] == "/checkpoints"
        assert (env["TRAINSPEC_NUM_NODES"], env["TRAINSPEC_PROCS_PER_NODE"], env["TRAINSPEC_GPUS_PER_NODE"]) == (
            "4",
            "8",
            "8",
        )
        claims = [
            v["persistentVolumeClaim"]["claimName"] for v in template["spec"]["volumes"] if "persistentVolumeClaim" in v
        ]
        assert claims == ["ray-finetune-checkpoints"]
        mounts = {m["mountPath"] for m in template["spec"]["containers"][0]["volumeMounts"]}
        assert mounts == {"/checkpoints", "/dev/shm"}
        assert template["spec"]["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    worker_env = env_of(pods(rayjob)[1])
    assert worker_env["NCCL_SOCKET_IFNAME"] == "eth0" and "NCCL_SOCKET_IFNAME" not in env_of(pods(rayjob)[0])


def test_the_checkpoint_volume_defaults_to_read_write_many_even_on_one_node() -> None:
    result = compile_text(RUNTIME, job("checkpoint: {size: 10Gi}\n"))
    (pvc,) = [o for o in objects(result) if o["kind"] == "PersistentVolumeClaim"]
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]  # head and worker both mount it


def test_args_are_shell_quoted_into_the_entrypoint() -> None:
    result = compile_text(RUNTIME, job('args: [--msg, "two words", "it\'s"]\n'))
    assert rayjob_of(result)["spec"]["entrypoint"] == "python train.py --msg 'two words' 'it'\"'\"'s'"


def test_a_gpu_resource_kuberay_does_not_recognise_is_given_to_ray_start() -> None:
    runtime = RUNTIME.replace("framework: torch", "framework: torch\n  gpuResource: habana.ai/gaudi")
    workers = rayjob_of(compile_text(runtime, job()))["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    assert workers["rayStartParams"] == {"num-gpus": "4"}
    nvidia = rayjob_of(compile_text(RUNTIME, job()))["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    assert nvidia["rayStartParams"] == {}  # KubeRay reads nvidia.com/gpu from the limits itself


def test_engine_precedence_the_command_line_over_the_runtime() -> None:
    as_trainer = compile_text(RUNTIME, job(), target={"engine": "trainer"})
    assert {o["kind"] for o in objects(as_trainer)} == {"TrainJob", "ClusterTrainingRuntime"}
    plain = RUNTIME.replace("  engine: ray\n", "")
    as_ray = compile_text(plain, job(), target={"engine": "ray"})
    assert [o["kind"] for o in objects(as_ray)] == ["RayJob"]


def test_no_queue_means_not_suspended_and_no_kueue_labels() -> None:
    rayjob = rayjob_of(compile_text(RUNTIME, job()))
    assert "suspend" not in rayjob["spec"]
    assert not [key for key in rayjob["metadata"]["labels"] if key.startswith("kueue.x-k8s.io/")]


def test_provenance_points_replicas_at_the_jobs_nodes_line() -> None:
    result = compile_text(RUNTIME, job("nodes: 3\n"))
    (out,) = result.outputs
    sources = out.provenance[-1]
    ref = sources.lookup(("spec", "rayClusterSpec", "workerGroupSpecs", 0, "replicas"))
    assert ref is not None and ref.path == ("spec", "nodes")
    text = "---\n".join([RUNTIME, job("nodes: 3\n")]).splitlines()
    assert text[ref.location().line - 1].strip() == "nodes: 3"


# -- what the target cannot express: located, naming the target, validate == compile --------------


@pytest.mark.parametrize(
    ("runtime_edit", "job_body", "path"),
    [
        (("framework: torch", "framework: mpi"), "", "spec.framework"),
        (("framework: torch", "framework: torch\n  gang: volcano"), "", "spec.gang"),
        (None, "data: {source: s3://bucket/data/}\n", "spec.data"),
    ],
)
def test_what_ray_cannot_express_is_a_located_ts521(runtime_edit, job_body, path) -> None:
    runtime = RUNTIME.replace(*runtime_edit) if runtime_edit else RUNTIME
    compiled = compile_text(runtime, job(job_body))
    validated = compile_text(runtime, job(job_body), stop=Stop.CHECK)
    assert not compiled.ok and compiled.outputs == []
    found = [d for d in compiled.diagnostics if d.code == "TS521"]
    assert [(d.path, d.file) for d in found] == [(path, "t.yaml")] and found[0].line
    assert "target ray" in found[0].message
    assert [d.message for d in validated.diagnostics] == [d.message for d in compiled.diagnostics]


def test_a_job_without_a_command_has_no_entrypoint() -> None:
    body = job().replace("  command: [python, train.py]\n", "")
    found = [d for d in compile_text(RUNTIME, body).diagnostics if d.code == "TS521"]
    assert len(found) == 1 and "entrypoint" in found[0].message


def test_mpi_settings_of_a_builtin_runtime_point_at_the_jobs_runtime_line() -> None:
    result = compile_text(job(runtime="trainspec-deepspeed"), target={"engine": "ray"})
    found = [d for d in result.diagnostics if d.code == "TS521"]
    assert [d.path for d in found] == ["spec.runtime"] and "spec.mpi" in found[0].message


def test_the_ray_contract_env_names_are_reserved() -> None:
    result = compile_text(RUNTIME, job("env: {TRAINSPEC_NUM_NODES: '9'}\n"))
    assert ("TS303", "spec.env.TRAINSPEC_NUM_NODES") in codes(result)


def test_a_read_write_once_checkpoint_is_flagged_even_on_one_node() -> None:
    result = compile_text(RUNTIME, job("checkpoint: {size: 10Gi, accessMode: ReadWriteOnce}\n"))
    assert ("TS301", "spec.checkpoint.accessMode") in codes(result)
    assert result.ok  # a warning: both pods may land on one node


def test_kuberay_caps_rayjob_names_at_47_characters() -> None:
    # The RayJob is <name>-<run id> (7 more characters): a job name of 41 makes a RayJob of 48.
    long = "r" + "a" * 40  # 41: within the Trainer budget of a one-node job, over KubeRay's
    assert ("TS401", "metadata.name") in codes(compile_text(RUNTIME, job(name=long)))
    assert ("TS401", "metadata.name") not in codes(compile_text(RUNTIME, job(name=long[:40])))


# -- Kueue's RayJob rules -----------------------------------------------------------------------------


def _manifest(groups: int, **spec) -> dict:
    template = {"spec": {"containers": [{"name": "ray-worker", "image": "ray"}]}}
    return {
        "spec": {
            "shutdownAfterJobFinishes": True,
            **spec,
            "rayClusterSpec": {
                "headGroupSpec": {"template": template},
                "workerGroupSpecs": [
                    {"groupName": f"g{i}", "minReplicas": 1, "maxReplicas": 1, "template": template}
                    for i in range(groups)
                ],
            },
        }
    }


def test_the_podset_limit_follows_the_kueue_version() -> None:
    assert (max_podsets((0, 17)), max_podsets((0, 18)), max_podsets((0, 19)), max_podsets((0, 14))) == (8, 10, 18, 8)
    # head + 6 groups + submitter = 8: fits 0.17; one more group does not.
    assert kueue_problems(_manifest(6), (0, 17)) == []
    ((path, message),) = kueue_problems(_manifest(7), (0, 17))
    assert path == "spec.rayClusterSpec.workerGroupSpecs" and "9 PodSets" in message and "submitter" in message
    assert kueue_problems(_manifest(7), (0, 19)) == []
    # Without the submitter Job (HTTPMode) the same cluster fits.
    assert kueue_problems(_manifest(7, submissionMode="HTTPMode"), (0, 17)) == []


def test_kueue_refuses_a_group_named_head_a_selector_with_a_spec_and_a_kept_cluster() -> None:
    named_head = _manifest(1)
    named_head["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["groupName"] = "head"
    assert [p for p, _ in kueue_problems(named_head, (0, 19))] == ["spec.rayClusterSpec.workerGroupSpecs[0].groupName"]
    selector = _manifest(1, clusterSelector={"ray.io/cluster": "shared"})
    assert [p for p, _ in kueue_problems(selector, (0, 19))] == ["spec.clusterSelector"]
    kept = _manifest(1, shutdownAfterJobFinishes=False)
    assert [p for p, _ in kueue_problems(kept, (0, 19))] == ["spec.shutdownAfterJobFinishes"]
    autoscaled = _manifest(1)
    autoscaled["spec"]["rayClusterSpec"]["enableInTreeAutoscaling"] = True
    assert [p for p, _ in kueue_problems(autoscaled, (0, 19))] == ["spec.rayClusterSpec.enableInTreeAutoscaling"]


def test_the_compiled_queued_rayjob_passes_kueues_rules(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    assert kueue_problems(rayjob_of(run([EXAMPLE], Options(project=None))), (0, 17)) == []


# -- the CRDs and the recorded API-server verdicts ----------------------------------------------------


def _crds():
    from trainspec.check import default_crd_dirs

    dirs = default_crd_dirs()
    if not dirs:
        pytest.skip("../shared/crds not found (set TRAINSPEC_CRDS_DIR)")
    return dirs


def _check(docs: list[dict]) -> list[str]:
    from trainspec.check import check_manifests

    return [
        f"{d.code} {d.path}: {d.message}"
        for d in check_manifests([(f"m[{i}]", m) for i, m in enumerate(docs)], _crds())
    ]


@pytest.mark.parametrize(
    "body",
    [
        "",
        "nodes: 3\ncheckpoint: {size: 10Gi}\nqueue: q\nmaxRunTime: 1h\n",
        "podLabels: {a: b}\npodAnnotations: {c: d}\nsecretEnv: {T: {secret: s, key: k}}\n",
    ],
)
def test_compiled_objects_pass_the_kuberay_crds(body: str) -> None:
    docs = objects(compile_text(RUNTIME, job(body)))
    assert _check(docs) == []


def test_the_checker_rejects_our_rayjob_broken_the_ways_the_api_server_did() -> None:
    rayjob = rayjob_of(compile_text(RUNTIME, job()))
    for edit, path in (
        (lambda s: s.update(shutdownAfterJobFinishes="yes"), "spec.shutdownAfterJobFinishes"),
        (lambda s: s.update(gpus=8), "spec.gpus"),
        (lambda s: s["rayClusterSpec"].pop("headGroupSpec"), "spec.rayClusterSpec.headGroupSpec"),
        (lambda s: s.update(activeDeadlineSeconds="1h"), "spec.activeDeadlineSeconds"),
    ):
        broken = copy.deepcopy(rayjob)
        edit(broken["spec"])
        assert any(f.startswith("TS500 " + path) for f in _check([broken])), path


def _verdicts() -> list[Path]:
    return sorted(VERDICTS.glob("*.yaml")) if VERDICTS.is_dir() else []


@pytest.mark.parametrize("path", [p for p in _verdicts() if "-ray-" in p.name], ids=lambda p: p.name)
def test_the_checker_agrees_with_the_recorded_rayjob_verdicts(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    accepted = "# verdict: ACCEPTED" in text
    findings = _check([yaml.safe_load(text)])
    assert (findings == []) == accepted, findings


# -- the in-pod helper --------------------------------------------------------------------------------

ENV = {
    "TRAINSPEC_NUM_NODES": "4",
    "TRAINSPEC_PROCS_PER_NODE": "8",
    "TRAINSPEC_GPUS_PER_NODE": "8",
    "TRAINSPEC_CPUS_PER_NODE": "64",
}


def test_scaling_config_is_nodes_times_processes_with_an_even_split() -> None:
    assert scaling_config(ENV) == {"num_workers": 32, "use_gpu": True, "resources_per_worker": {"CPU": 7.875, "GPU": 1}}
    assert scaling_config(ENV, reserve_cpus_per_node=0)["resources_per_worker"]["CPU"] == 8


def test_scaling_config_on_cpus_and_without_known_cpus() -> None:
    cpu_only = {
        **ENV,
        "TRAINSPEC_GPUS_PER_NODE": "0",
        "TRAINSPEC_PROCS_PER_NODE": "2",
        "TRAINSPEC_CPUS_PER_NODE": "0.5",
    }
    assert scaling_config(cpu_only) == {"num_workers": 8, "use_gpu": False, "resources_per_worker": {"CPU": 0.25}}
    unknown = {k: v for k, v in ENV.items() if k != "TRAINSPEC_CPUS_PER_NODE"}
    assert scaling_config(unknown)["resources_per_worker"] == {"GPU": 1}


def test_an_elastic_job_gets_a_worker_range_and_its_restart_budget() -> None:
    env = {**ENV, "TRAINSPEC_MIN_NODES": "2", "TRAINSPEC_MAX_RESTARTS": "5"}
    assert scaling_config(env)["num_workers"] == (16, 32)
    assert failure_config(env) == {"max_failures": 5} and failure_config(ENV) == {}


@pytest.mark.parametrize(
    "env",
    [
        {},
        {**ENV, "TRAINSPEC_NUM_NODES": "four"},
        {**ENV, "TRAINSPEC_PROCS_PER_NODE": "0"},
        {**ENV, "TRAINSPEC_NUM_NODES": "1.5"},
        {**ENV, "TRAINSPEC_GPUS_PER_NODE": "nan"},
        {**ENV, "TRAINSPEC_MIN_NODES": "9"},
    ],
)
def test_a_broken_environment_is_a_clear_error(env: dict) -> None:
    with pytest.raises(RayConfigError):
        scaling_config(env)


def test_the_helper_reads_what_the_lowering_wrote() -> None:
    rayjob = rayjob_of(compile_text(RUNTIME, job("nodes: 2\ncheckpoint: {size: 10Gi}\n")))
    env = {k: v for k, v in env_of(pods(rayjob)[0]).items() if isinstance(v, str)}
    assert scaling_config(env) == {"num_workers": 8, "use_gpu": True, "resources_per_worker": {"CPU": 3.75, "GPU": 1}}
    assert storage_path(env) == "/checkpoints" and storage_path({}) is None


def test_the_helper_imports_no_ray_and_nothing_heavy() -> None:
    import subprocess
    import sys

    code = "import sys, trainspec.stages.ray; print(sorted(m for m in sys.modules if m.split('.')[0] in ('ray', 'pydantic', 'yaml')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


# -- elastic training (issue 13, item 4, the Ray part) -------------------------------------------------


def test_a_node_range_becomes_the_worker_groups_min_and_max_at_full_size() -> None:
    rayjob = rayjob_of(compile_text(RUNTIME, job("nodes: {min: 2, max: 4, maxRestarts: 5}\nqueue: q\n")))
    (workers,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    # Kueue admits (and KubeRay without its autoscaler runs) `replicas`: the maximum.
    assert (workers["replicas"], workers["minReplicas"], workers["maxReplicas"]) == (4, 2, 4)
    env = {k: v for k, v in env_of(pods(rayjob)[0]).items() if isinstance(v, str)}
    assert scaling_config(env)["num_workers"] == (8, 16)  # 4 processes per node (GPUs)
    assert failure_config(env) == {"max_failures": 5}
    assert kueue_problems(rayjob, (0, 19)) == []
    assert _check([rayjob]) == []
