"""Sharding line records (``jsonl`` and ``text``).

``contiguous`` never looks at single lines: after the counting pass (lines_scan) it finds the
byte offset of each shard boundary by reading one block per boundary, then copies byte
ranges with large reads and writes, several shards at once in threads. ``round-robin`` and
``hashed`` stream every file once, splitting blocks into lines with ``bytes.split`` and
dealing them out to all shard writers.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainspec.stages.assignment import contiguous_bounds, hash_key, hashed_shard
from trainspec.stages.config import Options, Settings
from trainspec.stages.errors import StageError
from trainspec.stages.lines_scan import (
    LineCounts,
    LineValidator,
    iter_lines,
    scan_lines,
)
from trainspec.stages.manifest import shard_relpath
from trainspec.stages.sink import ShardWriter
from trainspec.stages.sources import Source, SourceFile


def check_record_count(total: int, num_shards: int, allow_empty: bool, what: str = "records") -> None:
    """Fail early on an empty dataset, or on fewer records than shards unless allowed."""
    if total == 0:
        raise StageError(f"dataset is empty: no {what} in the source")
    if total < num_shards and not allow_empty:
        raise StageError(
            f"only {total} {what} for {num_shards} shards: some shards would be empty "
            "(pass --allow-empty-shards to allow that)"
        )


@dataclass(frozen=True)
class Segment:
    """A byte range of one input file that goes, in order, into a shard."""

    file: SourceFile
    start: int
    end: int
    records: int
    add_newline: bool  # the range ends with the file's last line, which has no newline


def _nth_newline_end(block: bytes, n: int) -> int:
    """Position just after the n-th (1-based) newline in ``block``."""
    # Count in 64 KiB steps first so the find() loop only runs inside one small window.
    step = 1 << 16
    pos = 0
    while True:
        c = block.count(b"\n", pos, pos + step)
        if c >= n:
            break
        n -= c
        pos += step
    p = pos - 1
    for _ in range(n):
        p = block.find(b"\n", p + 1)
    return p + 1


def line_offset(source: Source, f: SourceFile, counts: LineCounts, line: int) -> int:
    """Byte offset where line ``line`` (0-based) of a file starts; ``records`` maps to EOF."""
    if line <= 0:
        return 0
    if line >= counts.records:
        return counts.size
    block, nth = counts.block_of_newline(line)
    pos = block * counts.block_size
    end = min(pos + counts.block_size, counts.size)
    # Read the block in 1 MiB pieces and stop at the piece holding the newline: on average
    # half a block is read per shard boundary.
    piece = min(counts.block_size, 1 << 20)
    with source.open(f, counts.block_size) as fh:
        fh.seek(pos)
        while pos < end:
            data = fh.read(min(piece, end - pos))
            if not data:
                break
            found = data.count(b"\n")
            if found >= nth:
                return pos + _nth_newline_end(data, nth)
            nth -= found
            pos += len(data)
    raise StageError(f"source file {f.location} changed while it was being sharded")


def plan_contiguous(source: Source, counts: list[LineCounts], num_shards: int) -> list[list[Segment]]:
    """Split the concatenated records of all files into per-shard lists of byte ranges."""
    starts = [0]
    for c in counts:
        starts.append(starts[-1] + c.records)
    bounds = contiguous_bounds(starts[-1], num_shards)
    plan: list[list[Segment]] = []
    for i in range(num_shards):
        lo, hi = bounds[i], bounds[i + 1]
        segments = []
        for fi, (f, c) in enumerate(zip(source.files, counts)):
            a, b = max(lo, starts[fi]), min(hi, starts[fi + 1])
            if a >= b:
                continue
            la, lb = a - starts[fi], b - starts[fi]
            segments.append(
                Segment(
                    file=f,
                    start=line_offset(source, f, c, la),
                    end=line_offset(source, f, c, lb),
                    records=lb - la,
                    add_newline=lb == c.records and not c.ends_with_newline,
                )
            )
        plan.append(segments)
    return plan


def _copy_shard(
    source: Source, segments: list[Segment], path: Path, options: Options, stop: threading.Event
) -> dict[str, Any]:
    writer = ShardWriter(path)
    try:
        buf = bytearray(options.block_size)
        view = memoryview(buf)
        for seg in segments:
            with source.open(seg.file, options.block_size) as fh:
                fh.seek(seg.start)
                remaining = seg.end - seg.start
                while remaining:
                    if stop.is_set():  # another shard failed or the stage is being stopped
                        raise StageError("cancelled")
                    n = fh.readinto(view[: min(len(buf), remaining)])
                    if not n:
                        raise StageError(f"source file {seg.file.location} shrank while it was being sharded")
                    writer.write(view[:n])
                    remaining -= n
            if seg.add_newline:
                writer.write(b"\n")
            writer.records += seg.records
        return writer.close()
    except BaseException:
        writer.abort()
        raise


def _shard_contiguous(
    source: Source, settings: Settings, options: Options, staging: Path
) -> list[dict[str, Any]]:
    counts = scan_lines(source, settings.format, options)
    check_record_count(sum(c.records for c in counts), settings.num_shards, options.allow_empty_shards)
    plan = plan_contiguous(source, counts, settings.num_shards)
    paths = [
        staging / shard_relpath(i, settings.num_shards, settings.format) for i in range(settings.num_shards)
    ]
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        futures = [pool.submit(_copy_shard, source, segs, p, options, stop) for segs, p in zip(plan, paths)]
        try:
            return [fut.result() for fut in futures]
        except BaseException:
            # Let running copies stop at their next block instead of finishing whole shards.
            stop.set()
            for fut in futures:
                fut.cancel()
            raise


def _deal(lines: list[bytes], first: int, settings: Settings, key: bytes, writers: list[ShardWriter]) -> None:
    n = settings.num_shards
    if settings.assignment == "round-robin":
        # Record ``first + j`` goes to shard ``(first + j) % n``: shard s takes every n-th
        # line starting at offset ``(s - first) % n`` - list slicing, no per-line Python.
        for s in range(n):
            picked = lines[(s - first) % n :: n]
            if picked:
                writers[s].write(b"\n".join(picked) + b"\n")
                writers[s].records += len(picked)
        return
    buckets: list[list[bytes]] = [[] for _ in range(n)]
    for line in lines:
        buckets[hashed_shard(line, key, n)].append(line)
    for s, picked in enumerate(buckets):
        if picked:
            writers[s].write(b"\n".join(picked) + b"\n")
            writers[s].records += len(picked)


def _shard_streaming(
    source: Source, settings: Settings, options: Options, staging: Path
) -> list[dict[str, Any]]:
    n = settings.num_shards
    key = hash_key(settings.seed)
    # Keep total buffered output bounded (~16 MiB) however many shards there are, and split
    # smaller blocks: each block briefly exists as bytes, as a list of lines and as joins.
    limit = max(64 << 10, min(1 << 20, (16 << 20) // n))
    block = min(options.block_size, 2 << 20)
    writers: list[ShardWriter] = []
    validator = LineValidator(settings.format) if options.validate else None
    try:
        for i in range(n):
            writers.append(ShardWriter(staging / shard_relpath(i, n, settings.format), buffer_limit=limit))
        total = 0
        for f in source.files:
            lineno = 0
            for lines in iter_lines(source, f, block):
                if validator is not None:
                    for line in lines:
                        lineno += 1
                        validator.check(f.location, lineno, line)
                    if validator.bad:
                        continue  # keep scanning to count every bad record, stop writing
                _deal(lines, total, settings, key, writers)
                total += len(lines)
        if validator is not None:
            validator.raise_if_bad()
        check_record_count(total, n, options.allow_empty_shards)
        return [w.close() for w in writers]
    except BaseException:
        for w in writers:
            w.abort()
        raise


def shard_lines(source: Source, settings: Settings, options: Options, staging: Path) -> list[dict[str, Any]]:
    """Write all line shards into ``staging/shards``; return per-shard records/bytes/sha256."""
    (staging / "shards").mkdir()
    if settings.assignment == "contiguous":
        return _shard_contiguous(source, settings, options, staging)
    return _shard_streaming(source, settings, options, staging)
