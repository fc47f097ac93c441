"""Per-pass fixtures: small spec texts in, the resolved values, plans and findings out."""

from __future__ import annotations

import textwrap

from trainspec.compiler.pipeline import compile_specs
from trainspec.compiler.resolve import Origin
from trainspec.dsl.load.spec_sources import load_string

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: torch-a100}
spec:
  framework: torch
  image: nvcr.io/nvidia/pytorch:25.01-py3
  nodes: 2
  maxNodes: 8
  resourcesPerNode: {gpu: 8, cpu: 64, memory: 512Gi}
  network: {resources: {rdma/ib: 4}}
  dataSharding: {image: ghcr.io/trainspec/trainspec:0.1.0}
"""


def job(body: str, name: str = "j", extra: str = "") -> str:
    return (
        textwrap.dedent(f"""\
        apiVersion: trainspec.dev/v1alpha1
        kind: TrainingJob
        metadata: {{name: {name}, namespace: ns}}
        spec:
          runtime: torch-a100
          queue: q
        """)
        + textwrap.indent(textwrap.dedent(body), "  ")
        + extra
    )


def compile_text(*docs: str):
    specs, problems = load_string("---\n".join(docs), "t.yaml")
    assert [d for d in problems if d.is_error] == []
    return compile_specs(specs)


def test_resolve_takes_values_from_runtime_with_their_origin() -> None:
    result = compile_text(RUNTIME, job(""))
    (plan,) = result.plans
    r = plan.resolved
    assert (r.nodes.value, r.nodes.origin) == (2, Origin.RUNTIME)
    assert (r.procs_per_node.value, r.procs_per_node.origin) == (8, Origin.RUNTIME)  # one per GPU
    assert r.world_size == 16
    assert r.resources["rdma/ib"].origin is Origin.RUNTIME
    assert r.image.value == "nvcr.io/nvidia/pytorch:25.01-py3"


def test_resolve_merges_job_resources_over_the_runtime() -> None:
    result = compile_text(RUNTIME, job("nodes: 4\nresourcesPerNode: {gpu: 4}\n"))
    r = result.plans[0].resolved
    assert r.gpus_per_node.value == 4 and r.gpus_per_node.origin is Origin.JOB
    assert r.resources["memory"].origin is Origin.RUNTIME
    job_obj = next(o for o in result.objects() if type(o).__name__ == "TrainJob")
    limits = job_obj.spec.trainer.resources_per_node.limits
    assert limits == {"nvidia.com/gpu": 4, "cpu": 64, "memory": "512Gi", "rdma/ib": 4}


def test_a_conflict_names_both_origins() -> None:
    result = compile_text(RUNTIME, job("nodes: 16\n"))
    (diag,) = [d for d in result.diagnostics if d.code == "TS400"]
    assert diag.message == "nodes=16 from the job, but runtime torch-a100 caps at 8 (maxNodes)"
    assert (diag.line, diag.column) == (19, 10)
    assert diag.related[0].line == 8  # maxNodes in the runtime
    assert result.outputs == []  # nothing is produced from invalid input


def test_plan_shards_by_rank_or_node() -> None:
    by_rank = compile_text(RUNTIME, job("data: {source: s3://d/, shardBy: rank}\n")).plans[0]
    by_node = compile_text(RUNTIME, job("data: {source: /mnt/data, shardBy: node}\n")).plans[0]
    assert by_rank.data.num_shards == 16 and by_rank.runtime_name == "torch-a100-sharded"
    assert by_node.data.num_shards == 2
    assert by_node.data.storage_uri == "file:///mnt/data"  # Trainer's storageUri wants a scheme
    assert [r.name for r in by_rank.rjobs] == ["dataset-initializer", "node"]


def test_pvc_source_is_mounted_into_the_stage() -> None:
    result = compile_text(RUNTIME, job("data: {source: pvc://corpora/c4}\n"))
    text = str(result.objects())
    assert "claim_name='corpora'" in text and "mount_path='/mnt/pvc/corpora'" in text


def test_name_budget_depends_on_the_replicated_jobs() -> None:
    long_name = "a" * 40
    plain = compile_text(RUNTIME, job("", name=long_name))
    sharded = compile_text(RUNTIME, job("data: {source: s3://d/}\n", name=long_name))
    assert not [d for d in plain.diagnostics if d.code == "TS401"]
    (diag,) = [d for d in sharded.diagnostics if d.code == "TS401"]
    assert "at most 26" in diag.message


def test_runtime_without_sharding_is_not_emitted_as_a_sharded_variant() -> None:
    runtime = RUNTIME.replace("  dataSharding: {image: ghcr.io/trainspec/trainspec:0.1.0}\n", "")
    result = compile_text(runtime, job(""))
    names = [o.metadata.name for o in result.objects() if type(o).__name__ == "ClusterTrainingRuntime"]
    assert names == ["torch-a100"]


def test_project_defaults_fill_unset_fields_only() -> None:
    project = "apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec:\n  defaults: {queue: shared, namespace: dflt, gang: coscheduling}\n"
    no_queue = job("").replace("  queue: q\n", "")
    result = compile_text(project, RUNTIME, no_queue, job("", name="k"))
    plans = {p.resolved.name: p.resolved for p in result.plans}
    assert plans["j"].job.spec.queue == "shared" and plans["j"].origin_of("queue") is Origin.PROJECT
    assert plans["k"].job.spec.queue == "q" and plans["k"].origin_of("queue") is Origin.JOB
    runtime = next(o for o in result.objects() if type(o).__name__ == "ClusterTrainingRuntime")
    assert runtime.spec.pod_group_policy.coscheduling is not None


def test_missing_runtime_suggests_a_close_name() -> None:
    result = compile_text(RUNTIME, job("").replace("torch-a100", "torch-a10"))
    (diag,) = [d for d in result.diagnostics if d.code == "TS305"]
    assert diag.hint == "did you mean torch-a100?"


def test_builtin_runtimes_are_emitted_only_when_used() -> None:
    result = compile_text(job("").replace("torch-a100", "trainspec-jax"))
    names = sorted(o.metadata.name for o in result.objects() if type(o).__name__ == "ClusterTrainingRuntime")
    assert names == ["trainspec-jax"]
