"""The README's ``ladder run --local`` block is real output: the same lines, with the measured
figures (throughputs, shares, durations) and the sentences that follow from them compared up to
their numbers, since a rung's timing changes from run to run."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from run_testlib import ROOT, trainspec

BLOCK = re.compile(r"^```text\n\$ (trainspec ladder run --local [^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
NUMBER = re.compile(r"\d[\d,]*(\.\d+)?")
#: Lines whose wording depends on the measured figures (which rung is recommended and why, whether
#: a rung is steady): compared up to their first words.
MEASURED_SENTENCES = ("  recommendation: ", "  bottleneck: ", "  note: unsteady figures: ")


def _comparable(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        prefix = next((p for p in MEASURED_SENTENCES if line.startswith(p)), None)
        if prefix is not None:
            out.append(prefix)
        elif line.startswith("  note: "):
            out.append(line)
        else:
            # A rung's table row: its name, size and unit; ", unsteady" follows the figures.
            out.append(NUMBER.sub("N", re.sub(r"\s+", " ", line.replace(", unsteady", ""))))
    return [line for line in out if line != "  note: unsteady figures: "]


def test_the_readme_ladder_block_is_real_output(tmp_path: Path) -> None:
    found = BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert found, "the README lost its ladder run example"
    command, expected = found.group(1), found.group(2).rstrip("\n").splitlines()
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    done = trainspec(*shlex.split(command)[1:], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # On a terminal the progress lines (stderr) come as the rungs run, the table (stdout) at the end.
    actual = (done.stderr + done.stdout).rstrip("\n").splitlines()
    assert _comparable(actual) == _comparable(expected)
    assert any(line.startswith("  recommendation: ") for line in actual)
