"""The README's ``run --local`` block is real output: the same lines, in the order each node
printed them (the nodes' lines interleave in either order; the stage's line names an absolute
path and a duration, compared up to them; rank 0's progress lines up to their measured timings)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from run_testlib import ROOT, trainspec

BLOCK = re.compile(r"^```text\n\$ (trainspec run --local [^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


#: Rank 0's progress lines carry measured timings (steps/s, the data-wait fraction): compared up to them.
TIMING = re.compile(r"\b(steps_per_second|data_wait_fraction)=[0-9.e+-]+")


def _comparable(lines: list[str]) -> list[str]:
    return sorted(
        TIMING.sub(r"\1=<measured>", line.split(" to ", 1)[0] if line.startswith("[dataset-initializer] ") else line)
        for line in lines
    )


def test_the_readme_run_block_is_real_output(tmp_path: Path) -> None:
    found = BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert found, "the README lost its run --local example"
    command, expected = found.group(1), found.group(2).rstrip("\n").splitlines()
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    done = trainspec(*shlex.split(command)[1:], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    actual = (done.stdout + done.stderr).rstrip("\n").splitlines()
    assert _comparable(actual) == _comparable(expected)
