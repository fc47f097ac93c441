"""Copy-mode sharding of line records (``jsonl`` and ``text``): shard files are written.

``contiguous`` never looks at single lines: the plan (line_plan: by record count after one
counting pass, or by bytes with a seek per boundary) gives each shard's byte ranges, which
are copied several shards at once in threads - in the kernel (copy_file_range/sendfile) for
local files when no checksum is asked for, else through one 256 KiB buffer per shard.
``round-robin`` and ``hashed`` stream every file once, splitting blocks into lines with
``bytes.split`` and dealing them out to all shard writers.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from trainspec.stages.assignment import hash_key, hashed_shard
from trainspec.stages.config import Options, Settings
from trainspec.stages.errors import StageError
from trainspec.stages.fastio import IO_BUFFER
from trainspec.stages.line_plan import (
    Segment,
    check_record_count,
    mark_unterminated,
    plan_by_bytes,
    plan_by_records,
)
from trainspec.stages.lines_scan import LineValidator, iter_lines
from trainspec.stages.manifest import shard_relpath
from trainspec.stages.sink import ShardWriter
from trainspec.stages.sources import Source

__all__ = ["check_record_count", "shard_lines"]
#: Bytes one in-kernel copy call moves before the cancellation flag is looked at again.
_KERNEL_STEP = 64 << 20


def _copy_segment(source: Source, seg: Segment, writer: ShardWriter, options: Options, stop: threading.Event) -> None:
    want = seg.end - seg.start
    if source.is_local and source.on_read is None:
        # In the kernel (or a bounded read/write loop) from the raw fd, in steps small enough
        # that a failed shard or SIGTERM stops the other copies soon.
        got = 0
        with source.open(seg.file) as fh:
            fd = fh.fileno()  # local sources are io.FileIO
            while got < want:
                if stop.is_set():
                    raise StageError("cancelled")
                step = min(want - got, _KERNEL_STEP)
                n = writer.copy_from(fd, seg.start + got, step, kernel=options.kernel_copy)
                got += n
                if n < step:
                    break
    else:
        buf = bytearray(min(IO_BUFFER, max(want, 1)))
        view = memoryview(buf)
        got = 0
        with source.open(seg.file, IO_BUFFER) as fh:
            fh.seek(seg.start)
            while got < want:
                if stop.is_set():  # another shard failed or the stage is being stopped
                    raise StageError("cancelled")
                n = fh.readinto(view[: min(len(buf), want - got)])
                if not n:
                    break
                writer.write(view[:n])
                got += n
    if got != want:
        raise StageError(f"source file {seg.file.location} shrank while it was being sharded")


def _copy_shard(
    source: Source, segments: list[Segment], path: Path, options: Options, checksum: str, stop: threading.Event
) -> dict[str, Any]:
    writer = ShardWriter(path, checksum=checksum)
    try:
        for seg in segments:
            _copy_segment(source, seg, writer, options, stop)
            if seg.add_newline:
                writer.write(b"\n")
            if seg.records is None or writer.records is None:
                writer.records = None
            else:
                writer.records += seg.records
        return writer.close()
    except BaseException:
        writer.abort()
        raise


def _shard_contiguous(source: Source, settings: Settings, options: Options, staging: Path) -> list[dict[str, Any]]:
    if settings.balance == "bytes":
        plan = mark_unterminated(source, plan_by_bytes(source, settings.num_shards, options, settings.format))
    else:
        plan = plan_by_records(source, settings.format, settings.num_shards, options)[0]
    paths = [staging / shard_relpath(i, settings.num_shards, settings.format) for i in range(settings.num_shards)]
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        futures = [
            pool.submit(_copy_shard, source, segs, p, options, settings.checksum, stop)
            for segs, p in zip(plan, paths, strict=True)
        ]
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
                writers[s].records = (writers[s].records or 0) + len(picked)
        return
    buckets: list[list[bytes]] = [[] for _ in range(n)]
    for line in lines:
        buckets[hashed_shard(line, key, n)].append(line)
    for s, picked in enumerate(buckets):
        if picked:
            writers[s].write(b"\n".join(picked) + b"\n")
            writers[s].records = (writers[s].records or 0) + len(picked)


def _shard_streaming(source: Source, settings: Settings, options: Options, staging: Path) -> list[dict[str, Any]]:
    n = settings.num_shards
    key = hash_key(settings.seed)
    # Keep total buffered output bounded (~16 MiB) however many shards there are, and split
    # smaller blocks: each block briefly exists as bytes, as a list of lines and as joins.
    limit = max(64 << 10, min(1 << 20, (16 << 20) // n))
    block = min(options.block_size, 2 << 20)
    writers: list[ShardWriter] = []
    validator = LineValidator(settings.format) if options.validate else None
    try:
        # extend() appends as the generator yields: if one writer cannot be made, the ones made are closed.
        writers.extend(
            ShardWriter(staging / shard_relpath(i, n, settings.format), buffer_limit=limit, checksum=settings.checksum)
            for i in range(n)
        )
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
    """Write all line shards into ``staging/shards``; return per-shard records/bytes/checksum."""
    (staging / "shards").mkdir()
    if settings.assignment == "contiguous":
        return _shard_contiguous(source, settings, options, staging)
    return _shard_streaming(source, settings, options, staging)
