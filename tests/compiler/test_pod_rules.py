"""TS419: trainer pods the API server refuses once job and runtime are merged, found before merge.

The TrainJob itself is accepted; the refusal comes when the Job controller creates the pods (so
the job never starts, and no diagnostic but a controller event says why): two volumes mounted at
one path, huge pages without a cpu or memory request.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import trainspec

JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: sft, namespace: team-nlp}}
spec:
  runtime: {runtime}
  queue: team-nlp
{body}
"""
RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: pages}
spec:
  framework: torch
  image: example.com/torch:1
  network: {resources: {hugepages-2Mi: 4Gi}}
---
"""


def errors(tmp_path: Path, text: str) -> set[tuple[str, str, int | None, int | None]]:
    spec = tmp_path / "job.yaml"
    spec.write_text(text, encoding="utf-8")
    result = trainspec.compile(str(spec), project=None, target="trainer=2.3,kueue=0.19")
    return {(d.code, d.path, d.line, d.column) for d in result.diagnostics if d.is_error}


@pytest.mark.parametrize(
    ("runtime", "path", "what"),
    [
        ("trainspec-torch", "/dev/shm", "sharedMemory"),  # the built-in runtime mounts /dev/shm
        ("trainspec-mpi", "/home/mpiuser/.ssh", "SSH keys"),  # and this one the MPI SSH keys
    ],
)
def test_a_checkpoint_at_a_path_the_runtime_mounts_is_refused(
    tmp_path: Path, runtime: str, path: str, what: str
) -> None:
    body = f"  nodes: 1\n  checkpoint: {{size: 10Gi, path: {path}}}"
    found = errors(tmp_path, JOB.format(runtime=runtime, body=body))
    assert found == {("TS419", "spec.checkpoint.path", 8, body.index(path) - body.index("\n"))}
    body = "  nodes: 1\n  checkpoint: {size: 10Gi, path: /checkpoints}"
    assert errors(tmp_path, JOB.format(runtime=runtime, body=body)) == set()


def test_a_checkpoint_at_the_shard_volume_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "trainspec.yaml"
    project.write_text(
        "apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec:\n"
        "  defaults: {stageImage: registry.example.com/trainspec:0.1}\n",
        encoding="utf-8",
    )
    spec = tmp_path / "job.yaml"
    body = "  data: {source: s3://datasets/sft/}\n  checkpoint: {size: 10Gi, path: /workspace}"
    spec.write_text(JOB.format(runtime="trainspec-torch", body=body), encoding="utf-8")
    result = trainspec.compile(str(spec), project=str(project))
    assert {(d.code, d.path) for d in result.diagnostics if d.is_error} == {("TS419", "spec.checkpoint.path")}


def test_huge_pages_need_cpu_or_memory(tmp_path: Path) -> None:
    text = RUNTIME + JOB.format(runtime="pages", body="  nodes: 1")
    assert errors(tmp_path, text) == {("TS419", "spec.network.resources.hugepages-2Mi", 7, 40)}  # at the 4Gi
    # the job's memory, merged over the runtime's resources, is enough
    text = RUNTIME + JOB.format(runtime="pages", body="  nodes: 1\n  resourcesPerNode: {memory: 64Gi}")
    assert errors(tmp_path, text) == set()
    job_pages = JOB.format(runtime="trainspec-torch", body="  resourcesPerNode: {extra: {hugepages-1Gi: 2Gi}}")
    assert errors(tmp_path, job_pages) == {("TS419", "spec.resourcesPerNode.extra.hugepages-1Gi", 7, 45)}  # 2Gi
