"""The example training script (examples/train_ddp) under ``run --local``: 2 node processes read
disjoint shards that together cover the dataset, and a run killed mid-way resumes from its
checkpoint when started again (the work directory, like the checkpoint PVC, survives)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from run_testlib import EXAMPLE, ROOT, by_prefix, clean_env, trainspec

RECORDS = 300  # examples/train_ddp/data: 160 + 140 records, ids 0..299


def _spec(tmp_path: Path, reports: Path) -> Path:
    """examples/train_ddp/job.yaml, with the per-rank reports the assertions read."""
    text = (EXAMPLE / "job.yaml").read_text()
    old = 'args: [--epochs, "3", --barrier]'
    assert old in text
    text = text.replace(old, f'args: [--epochs, "3", --barrier, --save-every, "5", --report-dir, "{reports}"]')
    spec = tmp_path / "job.yaml"
    spec.write_text(text)
    return spec


def _run(tmp_path: Path, spec: Path, **env: str):
    return trainspec(
        "run",
        "--local",
        str(spec),
        "--no-project",
        "--data-source",
        str(EXAMPLE / "data"),
        cwd=tmp_path,
        env=clean_env(**env),
    )


def _reports(reports: Path) -> list[dict]:
    return [json.loads((reports / f"rank-{r}.json").read_text()) for r in (0, 1)]


def _prepare(tmp_path: Path) -> None:
    # The job's command is relative to where it runs (as to an image's WORKDIR): run from a copy.
    shutil.copytree(EXAMPLE, tmp_path / "examples" / "train_ddp", ignore=shutil.ignore_patterns("__pycache__"))


def test_two_nodes_read_disjoint_shards_covering_the_dataset(tmp_path: Path) -> None:
    _prepare(tmp_path)
    reports = tmp_path / "reports"
    done = _run(tmp_path, _spec(tmp_path, reports))
    assert done.returncode == 0, done.stderr
    rank0, rank1 = _reports(reports)
    assert (rank0["world_size"], rank1["world_size"]) == (2, 2)
    assert rank0["shards"] != rank1["shards"]
    # Each rank reads its whole shard once per epoch (3 epochs), and the shards partition the ids.
    ids0, ids1 = set(rank0["ids"]), set(rank1["ids"])
    assert ids0.isdisjoint(ids1)
    assert ids0 | ids1 == set(range(RECORDS))
    assert len(rank0["ids"]) + len(rank1["ids"]) == 3 * RECORDS
    work = tmp_path / ".trainspec" / "run" / "ml-dev" / "train-ddp"
    # The checkpoints, and the run's lease beside them (.trainspec-lease.json, docs/run.md).
    assert sorted(p.name for p in (work / "checkpoints").iterdir() if p.name != ".trainspec-lease.json") == [
        "step-000000045",
        "step-000000050",
        "step-000000055",
    ]  # keep: 3
    out = by_prefix(done.stdout)
    assert sorted(out) == ["node 0", "node 1"]
    assert "trainspec run --local: ml-dev/train-ddp succeeded" in done.stderr


def test_a_killed_run_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    _prepare(tmp_path)
    reports = tmp_path / "reports"
    spec = _spec(tmp_path, reports)
    # Rank 0 (node 0) SIGKILLs itself after step 12, once it saved step 10: a node failure.
    killed = _run(tmp_path, spec, TRAIN_CRASH_AFTER_STEP="12", TRAIN_CRASH_RANK="0")
    assert killed.returncode == 137, killed.stderr  # the failing node's status: 128 + SIGKILL
    assert "failed: node 0 exited 137" in killed.stderr
    assert not (reports / "rank-0.json").exists()  # rank 0 never finished (rank 1 may have, before it was stopped)
    checkpoints = tmp_path / ".trainspec" / "run" / "ml-dev" / "train-ddp" / "checkpoints"
    assert sorted(p.name for p in checkpoints.glob("step-*")) == ["step-000000005", "step-000000010"]

    again = _run(tmp_path, spec)
    assert again.returncode == 0, again.stderr
    rank0, rank1 = _reports(reports)
    assert rank0["resumed_from"] == rank1["resumed_from"] == 10
    assert rank0["final_step"] == rank1["final_step"] == 57  # ceil(150 / 8) * 3 steps
    assert "rank 0: resumed from step-000000010 (step 10)" in by_prefix(again.stdout)["node 0"]
    assert "cache hit" in again.stdout  # the shards of the first run were kept, not re-made


def test_the_example_runs_as_its_comment_says(tmp_path: Path) -> None:
    """``trainspec run --local examples/train_ddp/job.yaml --data-source examples/train_ddp/data``."""
    _prepare(tmp_path)
    done = trainspec(
        "run", "--local", "examples/train_ddp/job.yaml", "--data-source", "examples/train_ddp/data", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    lines = by_prefix(done.stdout)
    # Rank 0 also reports its progress (no Trainer endpoint here, so to stdout); rank 1 does not.
    reports = [line for line in lines["node 0"] if line.startswith("trainspec progress: ")]
    assert reports and reports[-1].startswith("trainspec progress: step 57/57 (100%)")
    assert [line.split(":")[0] for line in lines["node 0"] if line not in reports] == ["rank 0/2"]
    assert [line.split(":")[0] for line in lines["node 1"]] == ["rank 1/2"]
    assert ROOT.exists()
