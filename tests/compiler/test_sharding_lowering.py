"""The sharding stage in compiled TrainJobs: data.mode/balance/checksum reach the stage as the env
contract names them, and in index mode every trainer pod mounts a pvc:// source read-only at the
path the stage reads it from (the manifest's paths resolve there); copy mode mounts nothing new."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import run_cli
from trainspec.compiler.emit import render_stream
from trainspec.compiler.pipeline import compile_paths

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {{name: rt}}
spec:
  framework: {framework}
  image: registry.example.com/train:1
  gang: none
  dataSharding: {{image: registry.example.com/trainspec:0.1.0, size: 1Gi}}
---
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: job, namespace: ml}}
spec:
  runtime: rt
  command: [python, train.py]
  nodes: 2
  checkpoint: {{path: /checkpoints, size: 1Gi}}
  data:
{data}
"""


def _compile(tmp_path: Path, data: str, framework: str = "torch") -> tuple[list[dict[str, Any]], Path]:
    spec = tmp_path / "job.yaml"
    spec.write_text(RUNTIME.format(framework=framework, data="".join(f"    {line}\n" for line in data.splitlines())))
    result = compile_paths([str(spec)])
    assert result.ok, [d.message for d in result.diagnostics]
    return list(yaml.safe_load_all(render_stream(result.outputs))), spec


def _trainjob(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (job,) = [o for o in objects if o["kind"] == "TrainJob"]
    return job


def _stage_env(job: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in job["spec"]["initializer"]["dataset"]["env"]}


def _pods(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    rjobs = job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    return {r["name"]: r["template"]["spec"]["template"]["spec"] for r in rjobs}


def _source_mounts(pod: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    return [
        (volumes[m["name"]], m)
        for c in pod["containers"]
        for m in c.get("volumeMounts", [])
        if m["name"] == "data-source"
    ]


def test_index_mode_is_the_default_and_trainers_mount_the_pvc_source_read_only(tmp_path: Path) -> None:
    objects, spec = _compile(tmp_path, "source: pvc://datasets/sft/v1\nformat: jsonl")
    job = _trainjob(objects)
    env = _stage_env(job)
    assert (env["TRAINSPEC_SHARD_MODE"], env["TRAINSPEC_SHARD_BALANCE"], env["TRAINSPEC_SHARD_CHECKSUM"]) == (
        "index",
        "records",
        "none",
    )
    pods = _pods(job)
    ((stage_volume, stage_mount),) = _source_mounts(pods["dataset-initializer"])
    ((volume, mount),) = _source_mounts(pods["node"])
    assert volume["persistentVolumeClaim"] == {"claimName": "datasets", "readOnly": True}
    assert mount == {"name": "data-source", "mountPath": "/mnt/pvc/datasets", "readOnly": True}
    assert (volume, mount) == (stage_volume, stage_mount)  # the same path the stage wrote into the manifest
    names = [m["name"] for c in pods["node"]["containers"] for m in c["volumeMounts"]]
    assert names == ["checkpoints", "data-source"]
    # The manifest stays on the shard volume the trainers already mount.
    trainer_env = {e["name"]: e.get("value") for e in job["spec"]["trainer"]["env"]}
    assert trainer_env["TRAINSPEC_DATA_DIR"] == "/workspace/dataset"
    checked = run_cli("check", str(spec))
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize(
    "data",
    [
        "source: pvc://datasets/sft\nassignment: hashed",
        "source: pvc://datasets/sft\nassignment: round-robin",
        "source: pvc://datasets/sft\nmode: copy",
    ],
)
def test_copy_mode_mounts_the_source_in_the_stage_only(tmp_path: Path, data: str) -> None:
    job = _trainjob(_compile(tmp_path, data)[0])
    assert _stage_env(job)["TRAINSPEC_SHARD_MODE"] == "copy"
    pods = _pods(job)
    assert _source_mounts(pods["dataset-initializer"])
    assert not _source_mounts(pods["node"])


def test_object_storage_sources_get_no_mount_and_no_credential(tmp_path: Path) -> None:
    job = _trainjob(_compile(tmp_path, "source: s3://datasets/sft/\nbalance: bytes\nchecksum: xxh3")[0])
    env = _stage_env(job)
    assert (env["TRAINSPEC_SHARD_MODE"], env["TRAINSPEC_SHARD_BALANCE"], env["TRAINSPEC_SHARD_CHECKSUM"]) == (
        "index",
        "bytes",
        "xxh3",
    )
    assert not any(_source_mounts(pod) for pod in _pods(job).values())
    # Trainers read with the pods' identity, as the stage does: no credential is put in any env.
    names = {e["name"] for e in job["spec"]["trainer"]["env"]}
    assert not {n for n in names if "AWS" in n or "SECRET" in n or "TOKEN" in n}


def test_mpi_launcher_and_workers_all_mount_the_source(tmp_path: Path) -> None:
    job = _trainjob(_compile(tmp_path, "source: pvc://datasets/sft", framework="deepspeed")[0])
    pods = _pods(job)
    assert set(pods) == {"dataset-initializer", "node", "launcher"}
    for name in ("node", "launcher"):
        ((volume, mount),) = _source_mounts(pods[name])
        assert mount["readOnly"] is True and volume["persistentVolumeClaim"]["readOnly"] is True


def test_index_mode_with_hashed_assignment_is_ts212_at_the_data_block(tmp_path: Path) -> None:
    spec = tmp_path / "job.yaml"
    spec.write_text(
        RUNTIME.format(framework="torch", data="    source: pvc://d/x\n    assignment: hashed\n    mode: index\n")
    )
    result = compile_paths([str(spec)])
    (diag,) = [d for d in result.diagnostics if d.is_error]
    assert (diag.code, diag.line) == ("TS212", 18)
    assert "mode: index needs assignment: contiguous" in diag.message and diag.hint
