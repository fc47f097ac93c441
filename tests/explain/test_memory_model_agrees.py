"""One memory model: on every example, the checkpoint ``size: auto`` sizes holds exactly the optimizer
state ``explain`` says training keeps (the fp32 master copy and the moments), and the volume holds
``keep`` of them. A checkpoint smaller than what its writer saves would fill the volume mid-run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _jobs() -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "trainspec", "explain", "examples", "--format", "json", "--no-project"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.stdout, done.stderr
    report = json.loads(done.stdout)
    return [job for job in report["jobs"] if job.get("checkpoint") and job["checkpoint"].get("savedBytes")]


def test_every_sized_checkpoint_holds_the_optimizer_state_explain_counts() -> None:
    jobs = _jobs()
    assert len(jobs) >= 3, "the examples size several checkpoints from their model"
    for job in jobs:
        name, saved, memory = job["name"], job["checkpoint"]["savedBytes"], job["memory"]
        moments = memory["optimizerBytes"] - memory["masterBytes"]
        assert saved["moments"] == moments, name
        if saved["format"] == "dcp" and memory["masterBytes"]:
            # DCP saves the fp32 parameters, which are the master copy, and no second copy.
            assert (saved["weights"], saved["master"]) == (memory["masterBytes"], 0), name
        else:
            assert (saved["weights"], saved["master"]) == (memory["weightsBytes"], memory["masterBytes"]), name
        ckpt = job["checkpoint"]
        assert ckpt["perCheckpointBytes"] == saved["weights"] + saved["master"] + saved["moments"], name
        if ckpt["auto"]:
            assert ckpt["volumeBytes"] >= ckpt["totalBytes"] * 6 // 5, name
