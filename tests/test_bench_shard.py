"""Smoke test of ``bench/shard.py``: one round on a few MiB prints every row and cleans up.

No timing is asserted (figures depend on the machine); only the report's shape, that the
reference tools were measured, and that the work directory is gone afterwards.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "shard.py"

CONTENDER_ROWS = (
    "`cat FILE > /dev/null (read floor)`",
    "`split -n l/16`",
    "`stage --mode index --balance records`",
    "`stage --mode index --balance bytes`",
    "`stage --mode copy`",
    "`stage --mode copy --checksum xxh3`",
)
READER_ROWS = (
    "open().read(1 MiB) of the same ranges (baseline)",
    "for line in open() over the same ranges",
    "for line in open(): json.loads(line)",
    "my_shards() reader: read(1 MiB)",
    "my_shards() reader: for line in reader",
    'ShardRecords(decode="bytes")',
    'ShardRecords(decode="json")',
)
GOAL_ROWS = (
    "`stage --mode index --balance records` >= 1.5x split",
    "`stage --mode index --balance bytes` >= 10x split",
    "`stage --mode copy` >= 1x split",
    "stage peak RSS <= 100 MB",
    "stage peak RSS flat as the input grows",
)


def test_quick_run_prints_every_row_and_removes_its_work_directory(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--sizes", "3M", "--repeats", "1", "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for row in (*CONTENDER_ROWS, *READER_ROWS, *GOAL_ROWS):
        assert any(line.startswith(f"| {row}") for line in lines), f"no row {row!r} in:\n{proc.stdout}"
    # cat and split are always there: their rows carry figures, not "n/a".
    for row in CONTENDER_ROWS[:2]:
        (line,) = [line for line in lines if line.startswith(f"| {row} |")]
        assert "n/a" not in line and "MB/s" in line, line
    for fact in ("cores", "trainspec:", "filesystem:", "page cache: warm"):
        assert any(fact in line for line in lines), fact
    assert list(tmp_path.iterdir()) == []
