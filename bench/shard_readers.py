"""Throughput of the index-mode shard readers against plain ``open().read()`` of the same bytes.

Given a JSONL file and an index-mode output of the stage for it (``--shards DIR``, a
``manifest.json`` whose shards are byte ranges), every shard is read the ways a training
script reads it, one after another over all ranks (so every byte of the file is read once
per contender), interleaved over ``--repeats`` rounds with the page cache warmed (``cat FILE >
/dev/null``) or dropped (``--cold``) before each measured pass:

* ``open().read(1 MiB)`` of each shard's ranges (seek, then 1 MiB reads): the baseline;
* ``for line in open()`` over the same ranges, and with ``json.loads`` of each line: the
  floors of line iteration and of decoded records;
* the readers ``my_shards()`` returns for each rank (``RANK``/``WORLD_SIZE`` set per rank):
  ``read(1 MiB)`` to the end, and line iteration;
* the records iterable ``ShardRecords`` (for ``IterableDataset``/JAX loops), yielding bytes
  and decoded JSON.

Every row's throughput is the file's bytes / wall seconds, and its ratio is to the baseline.

Each pass must see exactly the manifest's bytes (and records, where it counts them). Prints a
Markdown table; ``bench/shard.py`` runs this after its stage runs. A contender that fails is
``n/a (error: ...)``.

    python bench/shard_readers.py --data data.jsonl --shards out/ [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _shard_lib import MIB, prepare_cache  # bench/ is on sys.path: run as a script

#: What a pass saw: (bytes, records); None where it does not count that.
Got = tuple["int | None", "int | None"]
BASELINE = "open().read(1 MiB) of the same ranges (baseline)"


def _ranges(manifest: dict[str, Any]) -> list[list[tuple[str, int, int]]]:
    """Per shard, its ``(path, start, end)`` byte ranges (index mode, jsonl/text)."""
    paths = [str(f["path"]) for f in manifest.get("files", [])]
    return [
        [(paths[r["file"]], int(r["start"]), int(r["end"])) for r in shard["ranges"]] for shard in manifest["shards"]
    ]


def plain_read(shards: list[list[tuple[str, int, int]]]) -> Got:
    """Seek to each range and read it in 1 MiB pieces with a plain ``open()``."""
    total = 0
    for ranges in shards:
        for path, start, end in ranges:
            with open(path, "rb") as fh:
                fh.seek(start)
                left = end - start
                while left > 0:
                    chunk = fh.read(min(MIB, left))
                    if not chunk:
                        break
                    total += len(chunk)
                    left -= len(chunk)
    return total, None


def plain_lines(shards: list[list[tuple[str, int, int]]]) -> Got:
    """Iterate the lines of each range with a plain ``open()`` (ranges end on record ends)."""
    total = lines = 0
    for ranges in shards:
        for path, start, end in ranges:
            with open(path, "rb") as fh:
                fh.seek(start)
                pos = start
                for line in fh:
                    if pos >= end:
                        break
                    pos += len(line)
                    lines += 1
            total += pos - start
    return total, lines


def _rank_env(rank: int, world: int) -> dict[str, str]:
    return {"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": "0"}


def _readers(data_dir: Path, rank: int, world: int) -> list[Any]:
    """What ``my_shards()`` returns for ``rank`` (one reader, or a list of them)."""
    from trainspec.stages import my_shards

    got = my_shards(data_dir, env=_rank_env(rank, world))
    return [got] if hasattr(got, "read") else list(got)


def _close(reader: Any) -> None:
    if hasattr(reader, "close"):
        reader.close()


def reader_read(data_dir: Path, world: int) -> Got:
    """``read(1 MiB)`` to the end of every reader of every rank."""
    total = 0
    for rank in range(world):
        for reader in _readers(data_dir, rank, world):
            if not hasattr(reader, "read"):
                raise TypeError(f"my_shards() gave a {type(reader).__name__}, not a reader (copy mode?)")
            try:
                while chunk := reader.read(MIB):
                    total += len(chunk)
            finally:
                _close(reader)
    return total, None


def reader_lines(data_dir: Path, world: int) -> Got:
    """Line iteration over every reader of every rank."""
    total = lines = 0
    for rank in range(world):
        for reader in _readers(data_dir, rank, world):
            try:
                for line in reader:
                    total += len(line)
                    lines += 1
            finally:
                _close(reader)
    return total, lines


def plain_json(shards: list[list[tuple[str, int, int]]]) -> Got:
    """``json.loads`` of each line of each range with a plain ``open()``: the floor of decoded records."""
    total = lines = 0
    for ranges in shards:
        for path, start, end in ranges:
            with open(path, "rb") as fh:
                fh.seek(start)
                pos = start
                for line in fh:
                    if pos >= end:
                        break
                    pos += len(line)
                    json.loads(line)
                    lines += 1
            total += pos - start
    return total, lines


def shard_records(data_dir: Path, world: int, decode: str) -> Got:
    """Iterate ``ShardRecords(decode=...)`` of every rank (records only; no byte count)."""
    from trainspec.stages.records import ShardRecords

    lines = 0
    for rank in range(world):
        for _ in ShardRecords(data_dir, decode=decode, env=_rank_env(rank, world)):  # type: ignore[arg-type]
            lines += 1
    return None, lines


def measure(
    passes: dict[str, Callable[[], Got]], data: Path, repeats: int, cold: bool, expect: Got
) -> dict[str, list[float] | str]:
    """Interleaved rounds; per pass its wall times, or why it has none."""
    out: dict[str, list[float] | str] = {name: [] for name in passes}
    for _ in range(repeats):
        for name, work in passes.items():
            walls = out[name]
            if isinstance(walls, str):
                continue
            prepare_cache(data, cold)
            try:
                start = time.perf_counter()
                got = work()
                wall = time.perf_counter() - start
            except Exception as exc:
                out[name] = f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200]
                continue
            wrong = [
                what
                for what, g, e in (("bytes", got[0], expect[0]), ("records", got[1], expect[1]))
                if g is not None and e is not None and g != e
            ]
            out[name] = f"error: read {wrong} {got}, the manifest has {expect}" if wrong else [*walls, wall]
    return out


def table(results: dict[str, list[float] | str], size: int) -> list[str]:
    """Markdown rows: median wall, throughput, ratio to the baseline."""
    base = results.get(BASELINE)
    base_wall = statistics.median(base) if isinstance(base, list) and base else None
    rows = ["| reader | median wall | best | throughput | vs open().read() |", "|---|---:|---:|---:|---:|"]
    for name, walls in results.items():
        if isinstance(walls, str):
            rows.append(f"| {name} | n/a ({walls}) | | | |")
            continue
        wall = statistics.median(walls)
        ratio = f"{base_wall / wall:.2f}x" if base_wall else "n/a"
        rows.append(f"| {name} | {wall:.3f} s | {min(walls):.3f} s | {size / wall / 1e6:,.0f} MB/s | {ratio} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the passes and print the table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="the JSONL file the manifest indexes")
    p.add_argument("--shards", type=Path, required=True, help="the stage's index-mode output directory")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cold", action="store_true", help="drop the page cache before each pass")
    p.add_argument("--unavailable", metavar="WHY", help="no index-mode output: report the readers as n/a")
    args = p.parse_args(argv)
    size = args.data.stat().st_size
    shards: list[list[tuple[str, int, int]]] = [[(str(args.data), 0, size)]]
    expect: Got = (size, None)
    why = args.unavailable
    if not why:
        try:
            manifest = json.loads((args.shards / "manifest.json").read_text())
            shards, expect = _ranges(manifest), (int(manifest["bytes"]), manifest.get("records"))
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            why = f"not an index-mode manifest ({type(exc).__name__}: {exc})"
    world = len(shards)
    passes: dict[str, Callable[[], Got]] = {
        BASELINE: lambda: plain_read(shards),
        "for line in open() over the same ranges": lambda: plain_lines(shards),
        "for line in open(): json.loads(line)": lambda: plain_json(shards),
        "my_shards() reader: read(1 MiB)": lambda: reader_read(args.shards, world),
        "my_shards() reader: for line in reader": lambda: reader_lines(args.shards, world),
        'ShardRecords(decode="bytes")': lambda: shard_records(args.shards, world, "bytes"),
        'ShardRecords(decode="json")': lambda: shard_records(args.shards, world, "json"),
    }
    readers = list(passes)[3:]
    runnable = {name: work for name, work in passes.items() if not (why and name in readers)}
    results = measure(runnable, args.data, args.repeats, args.cold, expect)
    if why:
        results.update(dict.fromkeys(readers, f"error: {why}"))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("\n".join([*table(results, size), "", f"Peak RSS of the reading process: {peak:.1f} MB."]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
