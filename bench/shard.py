"""Benchmark of the data-sharding stage (``python -m trainspec.stages.shard``).

Runs, in one invocation and interleaved so that background noise hits both sides alike:

* JSONL, 16 contiguous shards, at ``--size-gb`` and twice that (peak RSS must stay flat):
  trainspec (default: fsync before publishing) against ``split -n l/16 && sync`` (equally
  durable), and trainspec ``--no-fsync`` against plain ``split -n l/16``;
* ``files`` mode on 10,000 small files (16 shards);
* ``parquet`` on a parquet file of about ``--size-gb`` (16 contiguous shards).

Every tool runs as a child process under GNU ``/usr/bin/time -f %M`` (its ``ru_maxrss``
covers the waited-for children too, such as trainspec's forked counters; measuring
through a small ``time`` process matters because Linux bills the pre-exec copy of the
forking parent to the child's peak RSS). Wall time is measured around the child. Medians
and best times over ``--reps`` runs are reported (the machine may be shared, and noise
only ever slows a run down). The output directory is deleted and ``sync`` run before each
measurement so leftover writeback of the previous run is not billed to the next. Prints a
Markdown report.

    python bench/shard.py                 # 1 GB and 2 GB, files, parquet
    python bench/shard.py --size-gb 0.1   # quick run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GB = 1 << 30
SHARDS = 16


@dataclass
class Runs:
    """Measurements of one command variant."""

    name: str
    walls: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def best(self) -> float:
        return min(self.walls)

    @property
    def rss_mb(self) -> float:
        return max(self.rss_kb) / 1024


TIME = "/usr/bin/time"


def measure(cmd: list[str], cwd: Path | None = None) -> tuple[float, int]:
    """Run a command; return (wall seconds, peak RSS in KiB). Fails loudly on a non-zero exit."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss_file:
        start = time.perf_counter()
        proc = subprocess.run(
            [TIME, "-q", "-f", "%M", "-o", rss_file.name, *cmd],
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(
                f"benchmark command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.decode()}"
            )
        return wall, int(rss_file.read().split()[-1])


def fresh(path: Path) -> None:
    """Remove a previous output and flush dirty pages, outside the measured time."""
    if path.is_dir():
        shutil.rmtree(path)
    os.sync()


def gen_jsonl(path: Path, size: int) -> int:
    """Write about ``size`` bytes of varied JSON lines; returns the line count."""
    rng = random.Random(1)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(rng.randint(20, 300)))
        for _ in range(4096)
    ]
    lines = 0
    with open(path, "w", encoding="utf-8") as fh:
        written = 0
        while written < size:
            chunk = "".join(
                f'{{"id": {i}, "text": "{words[i % 4096]}", "label": {i % 7}, '
                f'"score": {(i * 2654435761 % 1000003) / 1000003:.6f}}}\n'
                for i in range(lines, lines + 100_000)
            )
            fh.write(chunk)
            written += len(chunk)
            lines += 100_000
    return lines


def double(src: Path, dst: Path) -> None:
    """dst = src twice (the 2x input for the RSS flatness check)."""
    with open(dst, "wb") as out:
        for _ in range(2):
            with open(src, "rb") as fh:
                shutil.copyfileobj(fh, out, 16 << 20)


def gen_small_files(root: Path, count: int) -> int:
    """``count`` files of 1-16 KiB in 100 directories; returns total bytes."""
    rng = random.Random(2)
    total = 0
    for i in range(count):
        d = root / f"dir-{i % 100:03d}"
        d.mkdir(parents=True, exist_ok=True)
        data = rng.randbytes(rng.randint(1024, 16384))
        (d / f"file-{i:05d}.bin").write_bytes(data)
        total += len(data)
    return total


def gen_parquet(path: Path, size: int) -> int:
    """About ``size`` bytes of parquet (hex text barely compresses); returns the row count."""
    import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
    import pyarrow.compute as pc  # type: ignore[import-untyped,unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]

    rows_per_batch, text = 500_000, 100
    offsets = array("i", range(0, rows_per_batch * text + 1, text)).tobytes()
    rows = 0
    with pq.ParquetWriter(
        path, pa.schema([("id", pa.int64()), ("text", pa.string()), ("value", pa.float64())])
    ) as writer:
        while not path.exists() or path.stat().st_size < size:
            data = os.urandom(rows_per_batch * text // 2).hex().encode()
            strings = pa.StringArray.from_buffers(rows_per_batch, pa.py_buffer(offsets), pa.py_buffer(data))
            ids = pa.array(range(rows, rows + rows_per_batch), type=pa.int64())
            writer.write_table(
                pa.table({"id": ids, "text": strings, "value": pc.divide(pc.cast(ids, pa.float64()), 7.0)})
            )
            rows += rows_per_batch
    return rows


def trainspec_cmd(source: Path, fmt: str, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "trainspec.stages.shard",
        "--source",
        str(source),
        "--format",
        fmt,
        "--num-shards",
        str(SHARDS),
        "--output",
        str(out),
        "--force",
        *extra,
    ]


def check_output(out: Path, size: int, records: int) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    if manifest["bytes"] != size or manifest["records"] != records:
        raise SystemExit(
            f"trainspec output mismatch: {manifest['bytes']} bytes / {manifest['records']} records"
        )


def bench_jsonl(work: Path, data: Path, lines: int, reps: int, with_split: bool) -> dict[str, Runs]:
    size = data.stat().st_size
    out, parts = work / "out-ts", work / "out-split"
    parts.mkdir(exist_ok=True)
    variants = {
        "trainspec": (trainspec_cmd(data, "jsonl", out), out),
        "trainspec --no-fsync": (trainspec_cmd(data, "jsonl", out, "--no-fsync"), out),
    }
    if with_split:
        variants["split -n l/16 && sync"] = (
            ["sh", "-c", f"split -n l/{SHARDS} '{data}' x_ && sync x_*"],
            parts,
        )
        variants["split -n l/16"] = (["split", "-n", f"l/{SHARDS}", str(data), "x_"], parts)
    runs = {name: Runs(name) for name in variants}
    for _ in range(reps):
        for name, (cmd, target) in variants.items():
            fresh(target)
            parts.mkdir(exist_ok=True)  # split writes into its working directory
            wall, rss = measure(cmd, cwd=parts)
            runs[name].walls.append(wall)
            runs[name].rss_kb.append(rss)
            if target == out:
                check_output(out, size, lines)
    fresh(out)
    shutil.rmtree(parts, ignore_errors=True)
    return runs


def bench_one(
    work: Path, source: Path, fmt: str, reps: int, baseline: list[str] | None = None
) -> dict[str, Runs]:
    """trainspec with and without fsync on one source, plus an optional baseline command
    whose output goes to ``<work>/out-base``."""
    out, base_out = work / f"out-{fmt}", work / "out-base"
    variants: dict[str, list[str]] = {
        "trainspec": trainspec_cmd(source, fmt, out),
        "trainspec --no-fsync": trainspec_cmd(source, fmt, out, "--no-fsync"),
    }
    if baseline:
        variants[" ".join(baseline)] = [*baseline, str(source), str(base_out)]
    runs = {name: Runs(name) for name in variants}
    for _ in range(reps):
        for name, cmd in variants.items():
            fresh(out)
            fresh(base_out)
            wall, rss = measure(cmd)
            runs[name].walls.append(wall)
            runs[name].rss_kb.append(rss)
    fresh(out)
    fresh(base_out)
    return runs


def bench_assignments(work: Path, data: Path, lines: int) -> dict[str, Runs]:
    """One run each of the per-line assignments (informational)."""
    out = work / "out-assign"
    runs = {}
    for assignment in ("round-robin", "hashed"):
        fresh(out)
        wall, rss = measure(trainspec_cmd(data, "jsonl", out, "--assignment", assignment))
        check_output(out, data.stat().st_size, lines)
        runs[assignment] = Runs(f"trainspec --assignment {assignment}", [wall], [rss])
    fresh(out)
    return runs


def mbps(size: int, seconds: float) -> str:
    return f"{size / seconds / 1e6:,.0f} MB/s"


def jsonl_table(runs: dict[str, Runs], size: int) -> list[str]:
    rows = [
        "| command | median wall | best wall | throughput (median / best) | peak RSS |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in runs.values():
        rows.append(
            f"| `{r.name}` | {r.wall:.2f} s | {r.best:.2f} s | "
            f"{mbps(size, r.wall)} / {mbps(size, r.best)} | {r.rss_mb:.1f} MB |"
        )
    return rows


def ratios(runs: dict[str, Runs]) -> str:
    durable, fast = runs["split -n l/16 && sync"], runs["split -n l/16"]
    ts, ts_fast = runs["trainspec"], runs["trainspec --no-fsync"]
    return (
        f"Throughput ratio trainspec / split (median, best): durable (fsync both) "
        f"**{durable.wall / ts.wall:.2f}x**, {durable.best / ts.best:.2f}x; without fsync "
        f"**{fast.wall / ts_fast.wall:.2f}x**, {fast.best / ts_fast.best:.2f}x (goal >= 0.7x)."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--size-gb", type=float, default=1.0, help="JSONL size (the 2x run doubles it); default 1"
    )
    parser.add_argument("--reps", type=int, default=3, help="runs per variant (median reported); default 3")
    parser.add_argument(
        "--workdir", type=Path, help="where to put generated data (default: a temp dir); cleaned up"
    )
    parser.add_argument(
        "--files", type=int, default=10_000, help="small files for the files-mode run (0 skips)"
    )
    parser.add_argument("--no-parquet", action="store_true", help="skip the parquet run")
    parser.add_argument("--no-double", action="store_true", help="skip the 2x size run")
    args = parser.parse_args()
    if not os.access(TIME, os.X_OK):
        raise SystemExit(f"{TIME} (GNU time) is needed to measure peak RSS")

    base = args.workdir
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="trainspec-bench-", dir=base))
    report: list[str] = []
    try:
        size = int(args.size_gb * GB)
        data = work / "data.jsonl"
        t = time.perf_counter()
        lines = gen_jsonl(data, size)
        size = data.stat().st_size
        print(
            f"generated {size / GB:.2f} GiB JSONL ({lines} lines) in {time.perf_counter() - t:.1f}s",
            file=sys.stderr,
        )
        cpus = len(os.sched_getaffinity(0))
        load = os.getloadavg()[0]

        runs = bench_jsonl(work, data, lines, args.reps, with_split=True)
        report += [f"### JSONL, {size / GB:.2f} GiB, {lines:,} lines, 16 contiguous shards", ""]
        report += jsonl_table(runs, size)
        report += ["", ratios(runs), ""]
        rss = {size: runs["trainspec"].rss_mb}
        other = bench_assignments(work, data, lines)
        report += (
            ["Per-line assignments on the same file (one run each):", ""] + jsonl_table(other, size) + [""]
        )

        if not args.no_double:
            big = work / "data-2x.jsonl"
            double(data, big)
            data.unlink()
            runs2 = bench_jsonl(work, big, 2 * lines, args.reps, with_split=True)
            report += [f"### JSONL, {2 * size / GB:.2f} GiB (2x)", ""] + jsonl_table(runs2, 2 * size)
            report += ["", ratios(runs2), ""]
            rss[2 * size] = runs2["trainspec"].rss_mb
            big.unlink()
        report += [
            "Peak RSS of trainspec by input size: "
            + ", ".join(f"{s / GB:.2f} GiB -> {mb:.1f} MB" for s, mb in rss.items()),
            "",
        ]
        data.unlink(missing_ok=True)

        if args.files:
            src = work / "small"
            total = gen_small_files(src, args.files)
            fr = bench_one(work, src, "files", args.reps, baseline=["cp", "-r"])
            report += [
                f"### files, {args.files:,} files, {total / 1e6:.0f} MB, 16 shards (greedy by bytes)",
                "",
                "| command | median wall | best wall | files/s (median) | peak RSS |",
                "|---|---:|---:|---:|---:|",
            ]
            for r in fr.values():
                report.append(
                    f"| `{r.name}` | {r.wall:.2f} s | {r.best:.2f} s | "
                    f"{args.files / r.wall:,.0f} | {r.rss_mb:.1f} MB |"
                )
            report.append("")
            shutil.rmtree(src)

        if not args.no_parquet:
            pq_file = work / "data.parquet"
            rows = gen_parquet(pq_file, int(args.size_gb * GB))
            psize = pq_file.stat().st_size
            pr = bench_one(work, pq_file, "parquet", args.reps)
            report += [f"### parquet, {psize / GB:.2f} GiB, {rows:,} rows, 16 contiguous shards", ""]
            report += jsonl_table(pr, psize) + [""]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    machine = (
        f"Machine: {cpus} CPUs, Python {sys.version.split()[0]}, {args.reps} runs per variant "
        f"(median and best); load average {load:.1f} at start, {os.getloadavg()[0]:.1f} at end."
    )
    header = [machine, ""]
    print("\n".join(header + report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
