"""End to end: shard the example dataset, run N ranks of examples/train_ddp/train.py, then
kill a rank mid-run and check that the rerun resumes from the latest complete checkpoint."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from stage_testlib import REPO, run_stage, stage_env

from trainspec.stages import open_shard

EXAMPLE = REPO / "examples" / "train_ddp"
WORLD = 3


def _all_ids() -> list[int]:
    return [
        json.loads(line)["id"]
        for f in sorted((EXAMPLE / "data").glob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]


def _rank_env(rank: int, data: Path, ckpt: Path, **extra: str) -> dict[str, str]:
    return stage_env(
        RANK=str(rank),
        WORLD_SIZE=str(WORLD),
        LOCAL_RANK="0",
        TRAINSPEC_DATA_DIR=str(data),
        TRAINSPEC_NUM_SHARDS=str(WORLD),
        TRAINSPEC_CHECKPOINT_DIR=str(ckpt),
        TRAINSPEC_CHECKPOINT_KEEP="2",
        **extra,
    )


def _train(rank: int, data: Path, ckpt: Path, report: Path, *args: str, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            str(EXAMPLE / "train.py"),
            "--batch-size",
            "8",
            "--save-every",
            "5",
            "--report",
            str(report),
            *args,
        ],
        env=_rank_env(rank, data, ckpt, **extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _shard(tmp_path: Path) -> Path:
    data = tmp_path / "dataset"
    result = run_stage(
        [],
        env={
            "STORAGE_URI": str(EXAMPLE / "data"),
            "TRAINSPEC_DATA_FORMAT": "jsonl",
            "TRAINSPEC_NUM_SHARDS": str(WORLD),
            "TRAINSPEC_DATA_DIR": str(data),
        },
    )
    assert result.returncode == 0, result.stderr
    return data


def test_ranks_read_disjoint_shards_covering_the_dataset(tmp_path: Path) -> None:
    data = _shard(tmp_path)
    # Rendezvous like init_process_group: no rank can see a checkpoint rank 0 writes in this run.
    procs = [
        _train(r, data, tmp_path / "ckpt", tmp_path / f"report-{r}.json", "--rendezvous", str(tmp_path / "rdzv"))
        for r in range(WORLD)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    reports = [json.loads((tmp_path / f"report-{r}.json").read_text()) for r in range(WORLD)]
    id_sets = [set(rep["ids"]) for rep in reports]
    for a in range(WORLD):
        assert len(id_sets[a]) == len(reports[a]["ids"])  # no record twice within a rank
        for b in range(a + 1, WORLD):
            assert not id_sets[a] & id_sets[b]
    assert sorted(i for s in id_sets for i in s) == sorted(_all_ids())
    # Index mode (the default): each rank reads a reader over its ranges, named by its shard index.
    assert [rep["shards"] for rep in reports] == [[f"shard-{r:05d}"] for r in range(WORLD)]
    assert all(rep["resumed_from"] is None for rep in reports)


def test_killed_rank_resumes_from_latest_checkpoint(tmp_path: Path) -> None:
    data = _shard(tmp_path)
    ckpt = tmp_path / "ckpt"
    crashed = _train(0, data, ckpt, tmp_path / "crash.json", TRAIN_CRASH_AFTER_STEP="12")
    crashed.communicate(timeout=120)
    assert crashed.returncode == -signal.SIGKILL
    assert not (tmp_path / "crash.json").exists()
    # Checkpoints at steps 5 and 10 (step 12 was never saved); both kept (KEEP=2).
    assert sorted(p.name for p in ckpt.iterdir()) == ["step-000000005", "step-000000010"]

    rerun = _train(0, data, ckpt, tmp_path / "rerun.json")
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    assert "resumed from step-000000010 (step 10)" in out
    report = json.loads((tmp_path / "rerun.json").read_text())
    assert report["resumed_from"] == 10
    with open_shard(data, _rank_env(0, data, ckpt)) as reader:
        shard = [json.loads(record)["id"] for record in reader.records()]
    assert report["ids"] == shard[10 * 8 :]  # exactly the records after the checkpoint
    assert report["final_step"] == -(-len(shard) // 8)
