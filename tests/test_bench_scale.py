"""Smoke test of ``bench/scale.py``: a run on two tiny sizes, with this interpreter's trainspec and no
baseline, prints a well-formed table with a row and figures for every command, floor, shape and size,
and the goals table; and the generated ddp-cpu copies differ from the example in their names only.

No timing or memory figure is asserted (they depend on the machine): only the report's shape.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

BENCH = Path(__file__).resolve().parents[1] / "bench"
SIZES = (10, 20)
SHAPES = ("harness", "ddp-cpu")
STEPS = (
    "floor: C loader",
    "`trainspec validate DIR`",
    "`trainspec compile DIR -o -`",
    "`trainspec compile DIR -o OUTDIR`",
    "floor: C load + C dump",
    "`trainspec check OUTDIR`",
    "`trainspec diff DIR NEWDIR`",
)
RATIOS = {  # the rows whose ratio cell must hold a figure, and what it is over
    "`trainspec validate DIR`": "C loader",
    "`trainspec compile DIR -o -`": "C load + C dump",
    "`trainspec compile DIR -o OUTDIR`": "C load + C dump",
}
HEADER = "| command | shape | N | working tree wall | working tree peak RSS | working tree ratio | ratio over |"


def _table(lines: list[str], header_start: str) -> list[list[str]]:
    """The rows (cells) of the markdown table whose header starts with ``header_start``."""
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    width = len(rows[0])
    assert all(len(row) == width for row in rows), rows
    assert all(re.fullmatch(r"-{3}:?", cell) for cell in rows[1]), rows[1]
    return rows[2:]


@pytest.mark.slow
def test_tiny_run_prints_every_row_and_removes_its_work_directory(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "scale.py"),
            "--sizes",
            ",".join(map(str, SIZES)),
            "--runs",
            "1",
            "--no-baseline",
            "--current",
            "--workdir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "FAILED" not in proc.stderr and "failed:" not in proc.stdout, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "cores" in lines[0] and "load average" in lines[0]
    assert lines[1].startswith("Python ") and "peak RSS:" in lines[1]
    assert re.match(r"- working tree: (editable|normal|source tree) install; ", lines[2]), lines[2]
    assert HEADER in lines

    rows = {(row[0], row[1], row[2]): row for row in _table(lines, HEADER)}
    for shape in SHAPES:
        for size in SIZES:
            for step in STEPS:
                row = rows[step, shape, str(size)]
                assert re.fullmatch(r"\d+\.\d\d s", row[3]) and re.fullmatch(r"\d+\.\d MB", row[4]), row
                if step in RATIOS:
                    assert re.fullmatch(r"\d+\.\d\dx", row[5]) and row[6] == RATIOS[step], row
        # validate OUTDIR runs at one size only, beside check, whose ratio is over it there.
        assert ("`trainspec validate OUTDIR`", shape, str(SIZES[-1])) in rows
        assert ("`trainspec validate OUTDIR`", shape, str(SIZES[0])) not in rows
        assert re.fullmatch(r"\d+\.\d\dx", rows["`trainspec check OUTDIR`", shape, str(SIZES[-1])][5])

    goals = _table(lines, "| goal (issue 26) |")
    assert {row[4] for row in goals} <= {"met", "missed"}, goals
    named = [row[0] for row in goals]
    for goal in ("`compile -o -` <= 1.5x", "`validate` <= 3x", "`check OUTDIR` <= 2x"):
        assert sum(name.startswith(goal) for name in named) == len(SHAPES), named
    for step in STEPS:
        if not step.startswith("floor"):
            assert named.count(f"peak RSS of {step}, 20 / 10") == len(SHAPES), named
    assert list(tmp_path.iterdir()) == []


def test_ddp_cpu_copies_differ_from_the_example_in_their_names_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    from _common import ROOT, generate_copies

    paths = generate_copies(tmp_path, 12)
    example = yaml.safe_load((ROOT / "examples" / "ddp-cpu.yaml").read_text())
    docs = [yaml.safe_load(path.read_text()) for path in paths]
    names = [doc["metadata"].pop("name") for doc in docs]
    assert len(set(names)) == len(paths) == len({p.name for p in paths}) == 12
    assert all(name.startswith("ddp-cpu-") for name in names)
    del example["metadata"]["name"]
    assert all(doc == example for doc in docs)
