"""The scaling ladder (issue 15, part 3): every job expanded, inside the pipeline, into the rungs a
team runs to measure scaling, each a valid job of its own.

Observed by meaning: the rungs' names, node counts, processes, GPUs, shards, deadlines, labels and
checkpoint locations (distinct from the job's and from each other), the located refusals, and
that every rung passes the rules and ``trainspec check``.
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from trainspec.check.request import CheckRequest, run_check
from trainspec.compiler.ladder_rungs import URI_FOLDER, rung_uri, rungs
from trainspec.compiler.pipeline import Options, Stop, run
from trainspec.compiler.plan import CheckpointKind
from trainspec.dsl.load.spec_sources import load_string
from trainspec.k8s.wellknown import LADDER_LABEL, LADDER_RUNG_LABEL

LLAMA = str(EXAMPLES / "llama-sft")

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: torch-a100}
spec:
  framework: torch
  image: nvcr.io/nvidia/pytorch:25.01-py3
  maxNodes: 16
  resourcesPerNode: {gpu: 8, cpu: 64, memory: 512Gi}
  network: {resources: {rdma/ib: 4}}
  dataSharding: {image: ghcr.io/trainspec/trainspec:0.1.0}
"""


def job(body: str, name: str = "j", namespace: str = "ns") -> str:
    return textwrap.dedent(f"""\
        apiVersion: trainspec.dev/v1alpha1
        kind: TrainingJob
        metadata: {{name: {name}, namespace: {namespace}}}
        spec:
          runtime: torch-a100
          queue: q
        """) + textwrap.indent(textwrap.dedent(body), "  ")


def ladder_of_text(*docs: str, stop: Stop = Stop.LOWER):
    specs, problems = load_string("---\n".join(docs), "t.yaml")
    assert [d for d in problems if d.is_error] == []
    return run(specs, Options(project=None, ladder=True, stop=stop, output="deploy" if stop is Stop.EMIT else None))


def by_name(result) -> dict[str, Any]:
    return {p.resolved.name: p for p in result.plans}


def trainjobs(result) -> dict[str, Any]:
    """TrainJobs by the job (rung) they run: the object is its run, ``<rung>-<run id>``."""
    return {o.metadata.labels["trainspec.dev/job"]: o for o in result.objects() if type(o).__name__ == "TrainJob"}


def errors(result) -> list[tuple[str, str, int]]:
    return [(d.code, d.path, d.line) for d in result.diagnostics if d.is_error]


# -- which rungs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "gpus", "tags"),
    [
        (8, 8, ["1gpu", "1n", "2n", "4n", "8n"]),
        (12, 8, ["1gpu", "1n", "2n", "4n", "8n", "12n"]),  # always ending at the job's own size
        (1, 8, ["1gpu", "1n"]),  # a one-node job: one GPU, then the node
        (4, 0, ["1n", "2n", "4n"]),  # CPU only: by nodes
        (1, 0, ["1n"]),
        (3, 1, ["1n", "2n", "3n"]),  # one GPU per node: the one-GPU rung is the one-node rung
    ],
)
def test_rungs_climb_by_powers_of_two_to_the_jobs_size(nodes: int, gpus: int, tags: list[str]) -> None:
    climbed = rungs(nodes, gpus)
    assert [r.tag for r in climbed] == tags
    assert climbed[-1].nodes == nodes and climbed[-1].whole_nodes


# -- the llama-sft example: 8 nodes x 8 H100, data sharded by rank, a new checkpoint volume --------


@pytest.fixture(scope="module")
def llama():
    result = run([LLAMA], Options(project=None, ladder=True, stop=Stop.EMIT, output="deploy"))
    assert result.ok, result.diagnostics
    return result


def test_llama_ladder_names_sizes_and_shards(llama) -> None:
    plans = by_name(llama)
    assert list(plans) == [f"llama-sft-ladder-{t}" for t in ("1gpu", "1n", "2n", "4n", "8n")]
    shape = {
        name: (
            p.resolved.nodes.value,
            p.resolved.gpus_per_node.value,
            p.resolved.procs_per_node.value,
            p.resolved.world_size,
            p.data.num_shards,
        )
        for name, p in plans.items()
    }
    assert shape == {
        "llama-sft-ladder-1gpu": (1, 1, 1, 1, 1),
        "llama-sft-ladder-1n": (1, 8, 8, 8, 8),
        "llama-sft-ladder-2n": (2, 8, 8, 16, 16),
        "llama-sft-ladder-4n": (4, 8, 8, 32, 32),
        "llama-sft-ladder-8n": (8, 8, 8, 64, 64),  # the job's own size
    }
    # The same data settings: source, format, shard-by; only the count follows the rung.
    assert {p.data.storage_uri for p in plans.values()} == {"s3://datasets/sft/v3/"}
    assert {p.resolved.job.spec.data for p in plans.values()} == {llama.specs[0].spec.spec.data}


def test_the_real_job_is_not_among_the_outputs(llama) -> None:
    assert "team-nlp/llama-sft.yaml" not in llama.files_text
    assert sorted(p for p in llama.files_text if p.startswith("team-nlp/")) == [
        f"team-nlp/llama-sft-ladder-{t}.yaml" for t in ("1gpu", "1n", "2n", "4n", "8n")
    ]
    assert "runtimes/torch-h100-ib-sharded.yaml" in llama.files_text


def test_each_rung_has_its_own_checkpoint_volume(llama) -> None:
    claims = [o for o in llama.objects() if type(o).__name__ == "PersistentVolumeClaim"]
    names = [c.metadata.name for c in claims]
    assert len(names) == len(set(names)) == 5
    assert "llama-sft-checkpoints" not in names  # never the real job's volume
    for rung, job_obj in trainjobs(llama).items():
        patch = job_obj.spec.runtime_patches[0].training_runtime_spec.template.spec.replicated_jobs[0]
        volumes = patch.template.spec.template.spec.volumes
        assert [v.persistent_volume_claim.claim_name for v in volumes] == [f"{rung}-checkpoints"]
    # The same checkpoint settings: size (auto, from the model), storage class; one-node rungs may use RWO.
    modes = {
        c.metadata.name: (c.spec.resources.requests["storage"], c.spec.storage_class_name, c.spec.access_modes)
        for c in claims
    }
    assert modes["llama-sft-ladder-8n-checkpoints"] == ("3286Gi", "lustre", ["ReadWriteMany"])
    assert modes["llama-sft-ladder-1n-checkpoints"] == ("3286Gi", "lustre", ["ReadWriteOnce"])


def test_rungs_carry_the_ladder_labels_on_the_job_and_its_pods(llama) -> None:
    for name, job_obj in trainjobs(llama).items():
        tag = name.rsplit("-", 1)[1]
        assert job_obj.metadata.labels[LADDER_LABEL] == "llama-sft"
        assert job_obj.metadata.labels[LADDER_RUNG_LABEL] == tag
        assert job_obj.metadata.labels["team"] == "nlp"  # the job's own labels stay
        patch = job_obj.spec.runtime_patches[0].training_runtime_spec.template.spec.replicated_jobs[0]
        pod_labels = patch.template.spec.template.metadata.labels
        assert (pod_labels[LADDER_LABEL], pod_labels[LADDER_RUNG_LABEL]) == ("llama-sft", tag)


def test_rungs_run_an_hour_at_most(llama) -> None:
    for job_obj in trainjobs(llama).values():  # the job says 72h
        assert job_obj.spec.active_deadline_seconds == 3600
        assert job_obj.metadata.labels["kueue.x-k8s.io/max-exec-time-seconds"] == "3600"


def test_the_one_gpu_rung_gets_a_per_gpu_share_of_the_node(llama) -> None:
    trainer = trainjobs(llama)["llama-sft-ladder-1gpu"].spec.trainer
    assert trainer.num_nodes == 1 and trainer.num_proc_per_node == 1
    # The node: 8 GPUs, 96 CPUs, 1600Gi, 8 InfiniBand HCAs -> one eighth of each.
    assert trainer.resources_per_node.limits == {"cpu": 12, "memory": "200Gi", "nvidia.com/gpu": 1, "rdma/ib": 1}
    # Node rungs keep the node as the runtime gives it (the TrainJob overrides nothing).
    assert trainjobs(llama)["llama-sft-ladder-2n"].spec.trainer.resources_per_node is None
    node = by_name(llama)["llama-sft-ladder-2n"].resolved.resources
    assert {k: str(v.value) for k, v in node.items()} == {
        "cpu": "96",
        "memory": "1600Gi",
        "nvidia.com/gpu": "8",
        "rdma/ib": "8",
    }


def test_the_ladder_is_deterministic(llama) -> None:
    again = run([LLAMA], Options(project=None, ladder=True, stop=Stop.EMIT, output="deploy"))
    assert again.files_text == llama.files_text


# -- every rung passes the rules and the checker ------------------------------------------------------


@pytest.mark.parametrize("spec", ["llama-sft", "jax.yaml", "ddp-cpu.yaml", "upstream-torch.yaml"])
def test_every_rung_passes_check(spec: str) -> None:
    outcome = run_check(CheckRequest(paths=[str(EXAMPLES / spec)], options=Options(project=None, ladder=True)))
    assert outcome.result is not None and len(outcome.result.plans) >= 2
    assert [d for d in outcome.diagnostics if d.is_error] == []
    assert outcome.exit_code == 0


@pytest.mark.parametrize(
    ("spec", "target"), [("ray-train", {"engine": "ray"}), ("elastic-pytorchjob.yaml", {"engine": "training-operator"})]
)
def test_every_rung_passes_check_on_the_other_engines(spec: str, target: dict) -> None:
    options = Options(project=None, ladder=True, target=target)
    outcome = run_check(CheckRequest(paths=[str(EXAMPLES / spec)], options=options))
    assert outcome.result is not None
    assert [p.resolved.nodes.value for p in outcome.result.plans] == [1, 1, 2, 4, 8][: len(outcome.result.plans)]
    assert [d for d in outcome.diagnostics if d.is_error] == []


def test_an_elastic_job_climbs_fixed_sizes_to_its_max() -> None:
    result = run(
        [str(EXAMPLES / "elastic-pytorchjob.yaml")],
        Options(project=None, ladder=True, target={"engine": "training-operator"}),
    )
    assert result.ok, result.diagnostics
    assert all(p.elastic is None for p in result.plans)
    assert result.plans[-1].resolved.nodes.value == result.specs[-1].spec.spec.nodes.max


def test_the_rules_see_each_rung() -> None:
    # Gang admission by Kueue without a queue matters once a job has two nodes: the 2-node rung
    # gets the warning, which a rule can only give if it saw that rung.
    result = ladder_of_text(RUNTIME, job("nodes: 2\n").replace("  queue: q\n", ""))
    assert result.ok
    assert [d.code for d in result.diagnostics] == ["TS403"]
    assert [p.resolved.name for p in result.plans] == ["j-ladder-1gpu", "j-ladder-1n", "j-ladder-2n"]


def test_a_cpu_only_job_climbs_by_nodes() -> None:
    result = run([str(EXAMPLES / "ddp-cpu.yaml")], Options(project=None, ladder=True))
    assert result.ok, result.diagnostics
    assert [(p.resolved.name, p.resolved.nodes.value, p.resolved.gpus_per_node.value) for p in result.plans] == [
        ("ddp-cpu-ladder-1n", 1, 0),
        ("ddp-cpu-ladder-2n", 2, 0),
    ]


def test_a_shorter_deadline_of_the_job_is_kept_and_none_becomes_an_hour() -> None:
    result = ladder_of_text(RUNTIME, job("nodes: 2\nmaxRunTime: 20m\n", name="short"), job("nodes: 2\n", name="open"))
    assert result.ok, result.diagnostics
    deadlines = {name: j.spec.active_deadline_seconds for name, j in trainjobs(result).items()}
    assert {deadlines[f"short-ladder-{t}"] for t in ("1gpu", "1n", "2n")} == {1200}
    assert {deadlines[f"open-ladder-{t}"] for t in ("1gpu", "1n", "2n")} == {3600}


# -- checkpoint locations ---------------------------------------------------------------------------


def test_object_storage_rungs_write_beside_the_jobs_prefix_never_under_it() -> None:
    result = run([str(EXAMPLES / "jax.yaml")], Options(project=None, ladder=True))
    assert result.ok, result.diagnostics
    uris = [p.checkpoint.path for p in result.plans]
    assert all(p.checkpoint.kind is CheckpointKind.URI for p in result.plans)
    assert uris == [f"gs://research-checkpoints/{URI_FOLDER}/t5x-pretrain/{t}" for t in ("1gpu", "1n", "2n", "4n")]
    job_uri = "gs://research-checkpoints/t5x-pretrain"
    # Object stores list by prefix: no rung location starts with the job's, nor with another rung's.
    for uri in uris:
        assert not uri.startswith(job_uri) and not job_uri.startswith(uri)
        assert [other for other in uris if other.startswith(uri)] == [uri]


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("s3://bucket/ckpt/llama-sft", "s3://bucket/ckpt/trainspec-ladder/llama-sft/2n"),
        ("s3://bucket/ckpt/llama-sft/", "s3://bucket/ckpt/trainspec-ladder/llama-sft/2n"),
        ("gs://bucket/llama", "gs://bucket/trainspec-ladder/llama/2n"),
        ("s3://bucket", None),
        ("s3://bucket/", None),  # a bucket root has no place beside it
        ("s3://b/x/trainspec-ladder", None),  # the rungs would land under the job's own prefix
    ],
)
def test_rung_uri(uri: str, expected: str | None) -> None:
    assert rung_uri(uri, "2n") == expected


def test_a_bucket_root_is_refused_at_the_uri() -> None:
    result = ladder_of_text(RUNTIME, job("nodes: 2\ncheckpoint: {uri: 's3://ckpts/'}\n"))
    assert errors(result) == [("TS431", "spec.checkpoint.uri", 19)]
    assert not result.plans and not result.outputs


def test_an_existing_claim_is_refused_at_the_claim_name() -> None:
    result = ladder_of_text(RUNTIME, job("nodes: 2\ncheckpoint: {claimName: shared}\n"))
    (problem,) = [d for d in result.diagnostics if d.is_error]
    assert (problem.code, problem.path, problem.file, problem.line) == (
        "TS430",
        "spec.checkpoint.claimName",
        "t.yaml",
        19,
    )
    assert "shared" in problem.message and problem.hint
    assert not result.outputs


def test_without_the_ladder_an_existing_claim_is_fine() -> None:
    specs, _ = load_string("---\n".join([RUNTIME, job("nodes: 2\ncheckpoint: {claimName: shared}\n")]), "t.yaml")
    assert run(specs, Options(project=None)).ok


# -- names ------------------------------------------------------------------------------------------


def test_a_rung_name_beyond_the_budget_is_ts401_naming_the_room_left() -> None:
    # With the sharding stage a TrainJob name has 33 characters; "-ladder-1gpu" takes 12 of them.
    name = "a" * 25
    result = ladder_of_text(RUNTIME, job("nodes: 2\ndata: {source: 's3://d/'}\n", name=name))
    (found,) = [d for d in result.diagnostics if d.is_error]  # one per job, not one per rung
    assert (found.code, found.path) == ("TS401", "metadata.name")
    assert f"{name}-ladder-1gpu" in found.message  # the longest rung name
    assert "shorten the job's name to 14 characters" in (found.hint or "")
    assert not result.plans
    assert len(name) <= 33  # the job itself fits: only its rungs do not
    specs, _ = load_string("---\n".join([RUNTIME, job("nodes: 2\ndata: {source: 's3://d/'}\n", name=name)]), "t.yaml")
    assert run(specs, Options(project=None)).ok


def test_a_rung_named_like_another_job_is_refused() -> None:
    result = ladder_of_text(RUNTIME, job("nodes: 2\n", name="j"), job("nodes: 1\n", name="j-ladder-2n"))
    (problem,) = [d for d in result.diagnostics if d.is_error]
    assert problem.code == "TS432" and "j-ladder-2n" in problem.message
    assert problem.related and problem.related[0].line == 22  # where the other job is named


def test_rungs_in_other_namespaces_do_not_collide() -> None:
    result = ladder_of_text(RUNTIME, job("nodes: 2\n", name="j"), job("nodes: 1\n", name="j-ladder-2n", namespace="b"))
    assert result.ok, result.diagnostics


def test_without_the_ladder_nothing_changes() -> None:
    plain = run([LLAMA], Options(project=None, stop=Stop.EMIT, output="deploy"))
    assert [p.resolved.name for p in plain.plans] == ["llama-sft"]
    assert "team-nlp/llama-sft.yaml" in plain.files_text


# -- a pinned parallel layout -----------------------------------------------------------------------


def test_a_pinned_layout_is_kept_where_each_rung_can_run_it() -> None:
    # tp 8 x pp 2 x dp 4 is the 8-node job's layout; pinned as is, every smaller rung would be TS423
    # (the degrees do not multiply to its GPUs) and the one-GPU rung TS424 (tp 8 on one GPU).
    result = ladder_of_text(RUNTIME, job("nodes: 8\nparallelism: {tp: 8, pp: 2, dp: 4, zeroStage: 1}\n"))
    assert result.ok, result.diagnostics
    assert [d.code for d in result.diagnostics] == ["TS428"]  # a warning: the runtime gives no GPU memory
    pins = {
        p.resolved.name: (
            p.resolved.job.spec.parallelism.tp,
            p.resolved.job.spec.parallelism.pp,
            p.resolved.job.spec.parallelism.dp,
            p.resolved.job.spec.parallelism.zero_stage,
        )
        for p in result.plans
    }
    assert pins == {
        "j-ladder-1gpu": (None, None, None, 1),  # one GPU: the planner lays it out
        "j-ladder-1n": (8, None, None, 1),  # 8 GPUs: tp 8 fits, tp x pp = 16 does not
        "j-ladder-2n": (8, 2, None, 1),
        "j-ladder-4n": (8, 2, None, 1),
        "j-ladder-8n": (8, 2, None, 1),  # dp = 64 / 16 = 4 again, derived
    }
    specs, _ = load_string("---\n".join([RUNTIME, job("nodes: 8\nparallelism: {tp: 8, pp: 2, dp: 4}\n")]), "t.yaml")
    assert run(specs, Options(project=None)).ok  # the job itself is fine with its pin


def test_the_ladder_codes_are_registered() -> None:
    from trainspec.dsl.diagnostics import CODES

    assert {"TS430", "TS431", "TS432"} <= set(CODES)
