"""First pass over line files (jsonl/text): newline counts per block, and optional validation.

A record is one line. A final line without a newline is a record too (the writer adds the
newline), an empty file has no records, and an empty line is a record (``text``) - for
``jsonl`` it is reported as malformed by ``--validate``.

Counting is ``fastio.count_newlines`` (numpy for big inputs when installed, else ``bytearray.count``) over
256 KiB reads, with no per-line Python work. The per-block counts are kept (one 4-byte int per
1 MiB block) so that the byte offset of any line can later be found by reading a single
block. Big local inputs are counted by forked worker processes (the machine's cores, not the
GIL, bound it); with a checksum asked for, the same single pass also hashes each file.
"""

from __future__ import annotations

import array
import bisect
import itertools
import json
import os
from collections.abc import Iterator
from typing import Any

from trainspec.dsl.record import Record, field
from trainspec.stages.config import Options
from trainspec.stages.errors import StageError
from trainspec.stages.fastio import (
    IO_BUFFER,
    Hasher,
    count_newlines,
    digest,
    new_hasher,
    select_counter,
)
from trainspec.stages.sources import Source, SourceFile

_MAX_REPORTED = 5


class LineCounts(Record, frozen=False):
    """Newline statistics of one file, enough to map line numbers to byte offsets."""

    size: int
    block_size: int
    #: Newlines in block i; an array of 4-byte ints: one per MiB is 4 MB of memory per TB.
    block_counts: array.array[int] = field(default_factory=lambda: array.array("I"))
    ends_with_newline: bool = True  # vacuously true for an empty file
    checksum: str | None = None  # "<algorithm>:<hex>" when the pass was asked to hash
    _cumulative: array.array[int] | None = None

    @property
    def records(self) -> int:
        """Lines in the file, counting a final line without newline."""
        return sum(self.block_counts) + (0 if self.ends_with_newline else 1)

    def block_of_newline(self, n: int) -> tuple[int, int]:
        """For the n-th newline (1-based): ``(block index, n-th newline within that block)``."""
        if self._cumulative is None:
            self._cumulative = array.array("Q", itertools.accumulate(self.block_counts))
        block = bisect.bisect_left(self._cumulative, n)
        before = self._cumulative[block - 1] if block else 0
        return block, n - before


class LineValidator:
    """Collects malformed records (first few with file:line, plus a total)."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.bad = 0
        self.examples: list[str] = []

    def check(self, rel: str, lineno: int, line: bytes) -> bool:
        """Validate one record (without its newline); return True if it is fine."""
        problem = None
        try:
            text = line.decode("utf-8")
            if self.fmt == "jsonl":
                if not text.strip():
                    problem = "empty line"
                else:
                    json.loads(text)
        except UnicodeDecodeError:
            problem = "not valid UTF-8"
        except ValueError as exc:
            problem = f"invalid JSON: {exc}"
        if problem is None:
            return True
        self.bad += 1
        if len(self.examples) < _MAX_REPORTED:
            self.examples.append(f"{rel}:{lineno}: {problem}")
        return False

    def raise_if_bad(self) -> None:
        """Raise one :class:`StageError` summarising all malformed records, if any."""
        if self.bad:
            more = f" (and {self.bad - len(self.examples)} more)" if self.bad > len(self.examples) else ""
            raise StageError(f"{self.bad} malformed {self.fmt} record(s): " + "; ".join(self.examples) + more)


def iter_lines(source: Source, f: SourceFile, block_size: int) -> Iterator[list[bytes]]:
    """Yield lists of complete lines (without newlines) of a file, block by block.

    The last line of a file is yielded even without a trailing newline. Memory is one block
    plus the longest line.
    """
    carry: list[bytes] = []
    with source.open(f, block_size) as fh:
        while block := fh.read(block_size):
            if b"\n" not in block:
                carry.append(block)  # part of a long line; join once it ends
                continue
            data = b"".join(carry) + block if carry else block
            lines = data.split(b"\n")
            tail = lines.pop()
            carry = [tail] if tail else []
            yield lines
    if carry:
        yield [b"".join(carry)]


def _count_blocks(
    fh: Any, start: int, end: int | None, block_size: int, hasher: Hasher | None
) -> tuple[list[int], bytes, int]:
    """Newlines per ``block_size`` block of ``[start, end)`` (to EOF if ``end`` is None).

    Reads go through one 256 KiB-class buffer whatever the block size (big reads are slower:
    the buffer falls out of the CPU caches). Returns the counts, the last byte read and the
    bytes read.
    """
    piece = max(1, min(IO_BUFFER, block_size))
    buf = bytearray(piece)
    view = memoryview(buf)
    counts: list[int] = []
    last = b"\n"
    pos = start
    in_block = block_size  # bytes still to read in the current block; start a new one at once
    while end is None or pos < end:
        if in_block == block_size or not counts:
            counts.append(0)
        want = min(piece, in_block)
        if end is not None:
            want = min(want, end - pos)
        n = fh.readinto(view[:want])
        if not n:
            if in_block == block_size:
                counts.pop()  # the block we opened holds nothing
            break
        counts[-1] += count_newlines(buf, n)
        if hasher is not None:
            hasher.update(view[:n])
        last = bytes(buf[n - 1 : n])
        pos += n
        in_block -= n
        if not in_block:
            in_block = block_size
    return counts, last, pos - start


def _count_range(path: str, start: int, end: int, block_size: int) -> list[int]:
    """Newlines per block in ``[start, end)`` of a local file (runs in a worker process)."""
    with open(path, "rb", buffering=0) as fh:
        fh.seek(start)
        return _count_blocks(fh, start, end, block_size, None)[0]


def _count_serial(source: Source, f: SourceFile, block_size: int, checksum: str = "none") -> LineCounts:
    counts = LineCounts(size=f.size, block_size=block_size)
    hasher = new_hasher(checksum)
    with source.open(f, min(block_size, IO_BUFFER)) as fh:
        blocks, last, counts.size = _count_blocks(fh, 0, None, block_size, hasher)
    counts.block_counts = array.array("I", blocks)
    counts.ends_with_newline = last == b"\n"
    counts.checksum = digest(checksum, hasher)
    return counts


def count_range(source: Source, f: SourceFile, start: int, end: int) -> tuple[int, bytes]:
    """Newlines in ``[start, end)`` of one file and its last byte (``b""`` if empty)."""
    if start >= end:
        return 0, b""
    with source.open(f, IO_BUFFER) as fh:
        fh.seek(start)
        counts, last, read = _count_blocks(fh, start, end, end - start, None)
    if read != end - start:
        raise StageError(f"source file {f.location} shrank while it was being counted")
    return sum(counts), last


def _last_byte(path: str, size: int) -> bytes:
    with open(path, "rb", buffering=0) as fh:
        fh.seek(size - 1)
        return fh.read(1)


def _count_parallel(source: Source, workers: int, block_size: int) -> list[LineCounts]:
    # Work units are block-aligned ranges of ~1/4 of a worker's share, so uneven files still
    # keep every worker busy; each unit returns its per-block counts in order.
    total = source.total_bytes
    unit = max(block_size, (total // (workers * 4)) // block_size * block_size)
    jobs = [
        (fi, start, min(f.size, start + unit)) for fi, f in enumerate(source.files) for start in range(0, f.size, unit)
    ]
    import multiprocessing  # lazy: only big local inputs fork counting workers
    from concurrent.futures import ProcessPoolExecutor

    # fork: the workers only need the function and a path, and the stage has no threads yet.
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = [pool.submit(_count_range, source.files[fi].location, s, e, block_size) for fi, s, e in jobs]
        out = [LineCounts(size=f.size, block_size=block_size) for f in source.files]
        for (fi, _s, _e), fut in zip(jobs, futures, strict=True):
            out[fi].block_counts.extend(fut.result())
    for f, counts in zip(source.files, out, strict=True):
        if f.size:
            counts.ends_with_newline = _last_byte(f.location, f.size) == b"\n"
    return out


def _count_validating(
    source: Source, f: SourceFile, block_size: int, validator: LineValidator, checksum: str
) -> LineCounts:
    counts = _count_serial(source, f, block_size, checksum)
    lineno = 0
    for lines in iter_lines(source, f, block_size):
        for line in lines:
            lineno += 1
            validator.check(f.location, lineno, line)
    return counts


def scan_lines(source: Source, fmt: str, options: Options, checksum: str = "none") -> list[LineCounts]:
    """Count (and with ``--validate`` check) every line file; one :class:`LineCounts` per file.

    ``checksum`` (index mode's per-file checksum) is computed in the same read pass.
    """
    bs = options.block_size
    select_counter(source.total_bytes)  # here, before any worker process forks
    if options.validate:
        validator = LineValidator(fmt)
        counts = [_count_validating(source, f, bs, validator, checksum) for f in source.files]
        validator.raise_if_bad()
        return counts
    workers = min(options.workers, os.cpu_count() or 1)
    if (
        checksum == "none"
        and source.is_local
        and workers > 1
        and hasattr(os, "fork")
        and source.total_bytes >= options.parallel_count_min_bytes
    ):
        counts = _count_parallel(source, workers, bs)
        for f, c in zip(source.files, counts, strict=True):
            if sum(c.block_counts) > f.size:  # pragma: no cover - defensive
                raise StageError(f"source file {f.location} changed while it was counted")
        return counts
    return [_count_serial(source, f, bs, checksum) for f in source.files]
