"""A real torchrun multi-process run on gloo under ``run --local``: 2 nodes x 2 processes rendezvous
through the PET_* variables alone (``torchrun script.py``, no flags), as on a cluster."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from run_testlib import RUNTIME, by_prefix, clean_env, trainspec

# A real torchrun over two local nodes: the longest single test (slow: see pyproject's marker).
pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch", reason="torch is not installed here: the torchrun run needs it")

SCRIPT = """\
import os
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
value = torch.tensor([float(dist.get_rank())])
dist.all_reduce(value)
# One write per line: the ranks of a node share its stdout, and print() writes the text and the
# newline separately, so two ranks' lines could interleave.
os.write(1, f"rank={dist.get_rank()} world={dist.get_world_size()} sum={int(value.item())}\\n".encode())
dist.destroy_process_group()
"""


def test_torchrun_on_gloo_across_two_local_nodes(tmp_path: Path) -> None:
    torchrun = shutil.which("torchrun", path=clean_env()["PATH"])
    if torchrun is None:
        pytest.skip("torch is installed without the torchrun script on PATH")
    script = tmp_path / "ddp.py"
    script.write_text(SCRIPT)
    spec = tmp_path / "job.yaml"
    spec.write_text(
        RUNTIME.format(name="rt", framework="torch")
        + f"""---
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: gloo, namespace: team-a}}
spec:
  runtime: rt
  command: [torchrun, {json.dumps(str(script))}]
  nodes: 2
  procsPerNode: 2
"""
    )
    done = trainspec("run", "--local", str(spec), "--no-project", cwd=tmp_path, env=clean_env(OMP_NUM_THREADS="1"))
    assert done.returncode == 0, done.stderr
    lines = [line for member in by_prefix(done.stdout).values() for line in member if line.startswith("rank=")]
    assert sorted(lines) == [f"rank={r} world=4 sum=6" for r in range(4)]
