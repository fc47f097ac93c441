"""Side-by-side benchmark of the data-sharding stage (``python -m trainspec.stages.shard``).

For each size (default 1 GiB and 4 GiB) one deterministic JSONL file is generated (JSON
objects of 200-2,000 bytes), then these contenders run on that same file, interleaved (one
round runs each of them once, in a rotated order; ``--repeats`` rounds, medians reported):

* ``cat FILE > /dev/null``: the read floor;
* ``split -n l/16 FILE PREFIX``: coreutils, into the same filesystem as the stage's output;
* the stage, 16 shards, jsonl: ``--mode index --balance records``, ``--mode index --balance
  bytes``, ``--mode copy`` (by records), ``--mode copy --balance bytes`` (what ``split -n l/16``
  does) and ``--mode copy --checksum xxh3`` (when xxhash is importable).

Before every measured run the previous output is removed, ``sync`` runs, and the page cache
is put in the same state for every contender: warm (the input read once with ``cat FILE >
/dev/null``), or with ``--cold`` dropped (``/proc/sys/vm/drop_caches``). Throughput is input
bytes / median wall seconds; peak RSS (the largest of the rounds) comes from ``/usr/bin/time
-f %M`` around each command (else ``getrusage`` in a small wrapper). Neither side is durable
by default (``split`` does not fsync, the stage runs with ``--no-fsync``); ``--durable``
compares the stage's default (fsync before publishing) with ``split ... && sync PARTS``. A contender that fails is reported as ``n/a (error: ...)``.
Then each reader of index mode (``bench/shard_readers.py``) against ``open().read()``.

    python bench/shard.py                       # 1 GiB and 4 GiB, 5 rounds
    python bench/shard.py --quick --repeats 1   # 64 MiB smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from _shard_lib import (  # bench/ is on sys.path: run as a script
    MIB,
    Result,
    can_drop_caches,
    check_disk,
    filesystem,
    generate_jsonl,
    importable,
    install_kind,
    machine,
    parse_size,
    prepare_cache,
    remove,
    rss_method,
    run_measured,
    size_label,
    stage_env,
)

SHARDS = 16
#: Peak RSS allowed for a stage run, and how much it may grow from the smallest to the largest size.
RSS_LIMIT_MB = 100.0
RSS_FLAT = 1.10
READERS = Path(__file__).resolve().parent / "shard_readers.py"


class Contender(NamedTuple):
    """One command of the comparison; ``argv(source, out)`` builds it."""

    name: str
    argv: Callable[[Path, Path], list[str]]
    stage: dict[str, str] | None  # manifest settings the stage must report, None for the tools
    goal: float | None  # required throughput ratio to split
    skip: str = ""  # why it cannot run here (reported instead of a figure)


def _stage(python: str, durable: bool, *flags: str) -> Callable[[Path, Path], list[str]]:
    def argv(source: Path, out: Path) -> list[str]:
        return [
            python,
            "-m",
            "trainspec.stages.shard",
            "--source",
            str(source),
            "--output",
            str(out),
            "--num-shards",
            str(SHARDS),
            "--format",
            "jsonl",
            "--force",
            *flags,
            *(() if durable else ("--no-fsync",)),
        ]

    return argv


def contenders(python: str, durable: bool, xxhash: bool) -> list[Contender]:
    """Every row of the table, in table order."""

    def split(source: Path, out: Path) -> list[str]:
        out.mkdir(parents=True, exist_ok=True)
        argv = ["split", "-n", f"l/{SHARDS}", str(source), str(out / "x_")]
        if not durable:
            return argv
        return ["sh", "-c", f"{shlex.join(argv)} && sync {shlex.quote(str(out))}/x_*"]

    return [
        Contender("cat FILE > /dev/null (read floor)", lambda s, o: ["cat", str(s)], None, None),
        Contender(f"split -n l/{SHARDS}" + (" && sync" if durable else ""), split, None, None),
        Contender(
            "stage --mode index --balance records",
            _stage(python, durable, "--mode", "index", "--balance", "records"),
            {"mode": "index", "balance": "records"},
            1.5,
        ),
        Contender(
            "stage --mode index --balance bytes",
            _stage(python, durable, "--mode", "index", "--balance", "bytes"),
            {"mode": "index", "balance": "bytes"},
            10.0,
        ),
        Contender("stage --mode copy", _stage(python, durable, "--mode", "copy"), {"mode": "copy"}, 1.0),
        # `split -n l/N` balances by bytes (N chunks of about equal size, lines kept whole): this is
        # the like-for-like row; the default balance above also counts every record first.
        Contender(
            "stage --mode copy --balance bytes",
            _stage(python, durable, "--mode", "copy", "--balance", "bytes"),
            {"mode": "copy", "balance": "bytes"},
            None,
        ),
        Contender(
            "stage --mode copy --checksum xxh3",
            _stage(python, durable, "--mode", "copy", "--checksum", "xxh3"),
            {"mode": "copy", "checksum": "xxh3"},
            None,
            "" if xxhash else "xxhash is not importable by the stage's interpreter",
        ),
    ]


def check_manifest(out: Path, size: int, lines: int, expected: dict[str, str]) -> str:
    """ "" when the stage's manifest describes the whole input with the settings asked for."""
    try:
        manifest = json.loads((out / "manifest.json").read_text())
    except (OSError, ValueError) as exc:
        return f"no readable manifest ({exc})"
    settings = manifest.get("settings", {})
    wrong = [f"{k}={settings.get(k)!r}" for k, v in expected.items() if settings.get(k) != v]
    if wrong:
        return f"manifest settings {', '.join(wrong)}, asked {expected}"
    if manifest.get("bytes") != size or manifest.get("records") not in (lines, None):
        return f"manifest has {manifest.get('bytes')} bytes / {manifest.get('records')} records, input {size} / {lines}"
    shards = manifest.get("shards", [])
    if expected["mode"] == "index":  # only a manifest of ranges: nothing copied
        covered = sum(r["end"] - r["start"] for s in shards for r in s.get("ranges", []))
        if (out / "shards").exists() or covered != size:
            return f"index mode asked, but the output has shard files or ranges covering {covered} of {size} bytes"
    else:
        copied = sum((out / s["path"]).stat().st_size for s in shards if "path" in s and (out / s["path"]).is_file())
        if copied != size:
            return f"copy mode asked, but the shard files hold {copied} of {size} bytes"
    want = expected.get("checksum")
    if want and not all(str(s.get("checksum") or "").startswith(want + ":") for s in shards):
        return f"--checksum {want} asked, but not every shard has an {want} checksum"
    return ""


def measure_size(
    work: Path, data: Path, lines: int, rows: list[Contender], repeats: int, cold: bool, env: dict[str, str]
) -> dict[str, list[Result] | str]:
    """Interleaved rounds over ``rows``; per contender its results, or why it has none."""
    size = data.stat().st_size
    outcome: dict[str, list[Result] | str] = {c.name: (c.skip or []) for c in rows}
    for round_ in range(repeats):
        order = rows[round_ % len(rows) :] + rows[: round_ % len(rows)]
        for c in order:
            runs = outcome[c.name]
            if isinstance(runs, str):  # failed or skipped: once is enough
                continue
            out = work / "out"
            remove(out)
            argv = c.argv(data, out)
            prepare_cache(data, cold)
            result = run_measured(argv, cwd=work, env=env)
            try:
                problem = result.error or (check_manifest(out, size, lines, c.stage) if c.stage else "")
            except (KeyError, TypeError, ValueError, OSError) as exc:  # a manifest of another shape
                problem = f"unexpected manifest ({type(exc).__name__}: {exc})"
            outcome[c.name] = f"error: {problem}" if problem else [*runs, result]
            remove(out)
    return outcome


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def size_table(size: int, outcome: dict[str, list[Result] | str], rows: list[Contender]) -> list[str]:
    """The Markdown table of one input size."""
    walls = {k: statistics.median(r.wall for r in v) for k, v in outcome.items() if not isinstance(v, str)}
    split_wall = walls.get(rows[1].name)
    table = [
        "| contender | median wall | best | throughput | vs split | CPU (user+sys) | peak RSS | goal | result |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for c in rows:
        runs = outcome[c.name]
        goal = f">= {c.goal:g}x split" if c.goal else ""
        if isinstance(runs, str):
            table.append(f"| `{c.name}` | n/a ({runs}) | | | | | | {goal} | {'n/a' if goal else ''} |")
            continue
        wall, rss = walls[c.name], max(r.rss_kib for r in runs) / 1024
        cpu = statistics.median(r.cpu for r in runs)
        ratio = split_wall / wall if split_wall else None
        verdict = "" if not c.goal else ("n/a" if ratio is None else "pass" if ratio >= c.goal else "miss")
        table.append(
            f"| `{c.name}` | {wall:.3f} s | {min(r.wall for r in runs):.3f} s | {size / wall / 1e6:,.0f} MB/s | {_ratio(ratio)} | "
            f"{cpu:.2f} s | {rss:.1f} MB | {goal} | {verdict} |"
        )
    return table


def goals_table(results: dict[int, dict[str, list[Result] | str]], rows: list[Contender]) -> list[str]:
    """One row per goal, one column per size, and pass/miss over all sizes."""
    sizes = sorted(results)
    table = [
        "| goal | " + " | ".join(size_label(s) for s in sizes) + " | result |",
        "|---|" + "---:|" * len(sizes) + "---|",
    ]
    split = rows[1].name
    for c in rows:
        if c.goal is None:
            continue
        cells, ok = [], []
        for s in sizes:
            runs, base = results[s][c.name], results[s][split]
            if isinstance(runs, str) or isinstance(base, str):
                cells.append("n/a")
                continue
            ratio = statistics.median(r.wall for r in base) / statistics.median(r.wall for r in runs)
            cells.append(f"{ratio:.2f}x")
            ok.append(ratio >= c.goal)
        verdict = "pass" if ok and all(ok) and len(ok) == len(sizes) else "miss" if ok else "n/a"
        table.append(f"| `{c.name}` >= {c.goal:g}x split | " + " | ".join(cells) + f" | {verdict} |")
    peaks: dict[int, float] = {}
    cells = []
    for s in sizes:
        rss = [
            max(r.rss_kib for r in v) / 1024
            for c in rows
            if c.stage
            for v in (results[s][c.name],)
            if not isinstance(v, str)
        ]
        if rss:
            peaks[s] = max(rss)
        cells.append(f"{max(rss):.1f} MB" if rss else "n/a")
    verdict = ("pass" if all(p <= RSS_LIMIT_MB for p in peaks.values()) else "miss") if peaks else "n/a"
    table.append(
        f"| stage peak RSS <= {RSS_LIMIT_MB:g} MB (largest of the stage rows) | "
        + " | ".join(cells)
        + f" | {verdict} |"
    )
    if len(peaks) >= 2:
        small, big = peaks[min(peaks)], peaks[max(peaks)]
        growth = f"{small:.1f} -> {big:.1f} MB ({big / small:.2f}x)"
        flat = "pass" if big <= small * RSS_FLAT else "miss"
    else:
        growth, flat = "needs two sizes", "n/a"
    table.append(
        f"| stage peak RSS flat as the input grows (<= {RSS_FLAT:.2f}x) | {growth} |"
        + " |" * (len(sizes) - 1)
        + f" {flat} |"
    )
    return table


def readers(python: str, work: Path, data: Path, repeats: int, cold: bool, env: dict[str, str]) -> list[str]:
    """Shard ``data`` in index mode (untimed) and run ``bench/shard_readers.py`` on it."""
    out = work / "readers-out"
    remove(out)
    argv = _stage(python, False, "--mode", "index", "--balance", "records")(data, out)
    setup = run_measured(argv, cwd=work, env=env)
    cmd = [python, str(READERS), "--data", str(data), "--shards", str(out), "--repeats", str(repeats)]
    if setup.error:
        cmd += ["--unavailable", f"index-mode manifest: {setup.error}"]
    proc = subprocess.run(
        cmd + (["--cold"] if cold else []), cwd=work, env=env, capture_output=True, text=True, check=False
    )
    remove(out)
    if proc.returncode != 0:
        return [f"readers: n/a (error: {(proc.stderr.strip().splitlines() or ['?'])[-1]})"]
    return proc.stdout.rstrip("\n").splitlines()


def arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default=None, help="input sizes, e.g. 1G,4G (default; --quick: 64M)")
    p.add_argument("--repeats", type=int, default=5, help="interleaved rounds; medians reported (default 5)")
    p.add_argument("--workdir", type=Path, help="parent of the work directory (default: the temp dir); removed after")
    p.add_argument("--quick", action="store_true", help="64 MiB only: a smoke run")
    p.add_argument("--cold", action="store_true", help="drop the page cache before each run instead of warming it")
    p.add_argument("--durable", action="store_true", help="stage with fsync (its default) against split && sync")
    p.add_argument("--python", default=sys.executable, help="interpreter that runs the stage (default: this one)")
    p.add_argument("--no-readers", action="store_true", help="skip the reader throughput table")
    args = p.parse_args(argv)
    args.size_list = [parse_size(s) for s in (args.sizes or ("64M" if args.quick else "1G,4G")).split(",")]
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a Markdown report."""
    args = arguments(argv)
    if args.cold and (why := can_drop_caches()):
        raise SystemExit(f"bench/shard.py: --cold needs to drop the page cache, and {why}")
    parent = args.workdir or Path(tempfile.gettempdir())
    parent.mkdir(parents=True, exist_ok=True)
    # The input plus one output at a time (split's parts or the copy mode's shards), and a margin.
    check_disk(parent, 2 * max(args.size_list) + max(args.size_list) // 10 + 256 * MIB)
    work = Path(tempfile.mkdtemp(prefix="trainspec-shard-bench-", dir=parent))
    installed = importable(args.python, "trainspec", work, os.environ.copy())
    env = stage_env(installed)
    kind = install_kind(args.python, work, env, on_path=not installed)
    # The stage's optional fast paths (the data extra): numpy's newline count, xxhash for xxh3.
    extras = {name: importable(args.python, name, work, env) for name in ("numpy", "xxhash")}
    rows = contenders(args.python, args.durable, extras["xxhash"])
    cache = (
        "cold: page cache dropped (`echo 3 > /proc/sys/vm/drop_caches`) before each measured run"
        if args.cold
        else "warm: the input read once with `cat FILE > /dev/null` before each measured run"
    )
    report = [
        *machine(args.python),
        f"trainspec: {kind}",
        "optional packages: " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in extras.items()),
        f"filesystem: {filesystem(work)}",
        f"page cache: {cache}; previous output removed and `sync` run first",
        f"durability: {'stage fsyncs (default) vs `split && sync`' if args.durable else 'none on either side (stage --no-fsync, plain split)'}",
        f"peak RSS: {rss_method()}; CPU: user+sys of the command and its children (os.wait4)",
        f"{args.repeats} interleaved round(s), medians; {SHARDS} shards",
        "",
    ]
    results: dict[int, dict[str, list[Result] | str]] = {}
    try:
        for size in args.size_list:
            data = work / "data.jsonl"
            started = time.perf_counter()
            lines = generate_jsonl(data, size)
            actual = data.stat().st_size
            print(
                f"generated {size_label(actual)} ({lines:,} records) in {time.perf_counter() - started:.1f} s",
                file=sys.stderr,
            )
            results[size] = measure_size(work, data, lines, rows, args.repeats, args.cold, env)
            report += [f"### JSONL, {size_label(size)} ({actual:,} bytes, {lines:,} records)", ""]
            report += [*size_table(actual, results[size], rows), ""]
            if not args.no_readers:
                report += [f"Readers of index mode on the same file ({size_label(size)}):", ""]
                report += [*readers(args.python, work, data, args.repeats, args.cold, env), ""]
            data.unlink()
        report += ["### Goals", "", *goals_table(results, rows), ""]
        report.append(f"load average {os.getloadavg()[0]:.2f} at the end")
    finally:
        remove(work)
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
