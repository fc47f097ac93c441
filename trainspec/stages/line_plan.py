"""Where contiguous line shards begin and end: per shard, byte ranges of the source files.

Both modes use these plans: index mode writes them into the manifest, copy mode copies them.

* ``records``: one counting pass (lines_scan), then shard i gets records
  ``[b[i], b[i+1])`` of ``contiguous_bounds``; each boundary's byte offset is found by reading
  one block.
* ``bytes``: no counting pass. Boundary i is ``i * total / num_shards`` in the concatenation of
  the files, moved forward to the next record start: a seek and short reads until the next
  newline (or the file's end, which is a record start too: records never span files). On
  object storage each boundary is a ranged read of a few 16 KiB blocks; nothing else is read.
  ``--count-records`` then counts each range (one full read).

A record starts at offset 0 of a file or right after a ``\\n``.
"""

from __future__ import annotations

import bisect
import itertools

from trainspec.dsl.record import Record
from trainspec.stages.assignment import contiguous_bounds
from trainspec.stages.config import Options
from trainspec.stages.errors import StageError
from trainspec.stages.fastio import IO_BUFFER, select_counter
from trainspec.stages.lines_scan import LineCounts, count_range, scan_lines
from trainspec.stages.sources import Source, SourceFile

#: Read size of a boundary search (one ranged read): long records cost a few more reads.
SEEK_READ = 16 << 10


def check_record_count(total: int, num_shards: int, allow_empty: bool, what: str = "records") -> None:
    """Fail early on an empty dataset, or on fewer records than shards unless allowed."""
    if total == 0:
        raise StageError(f"dataset is empty: no {what} in the source")
    if total < num_shards and not allow_empty:
        raise StageError(
            f"only {total} {what} for {num_shards} shards: some shards would be empty "
            "(pass --allow-empty-shards to allow that)"
        )


class Segment(Record):
    """A byte range of one input file that goes, in order, into a shard."""

    file: SourceFile
    start: int
    end: int
    records: int | None  # None: balance by bytes without a counting pass
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
    # Read the block in 256 KiB pieces and stop at the piece holding the newline: on average
    # half a block is read per shard boundary.
    piece = min(counts.block_size, IO_BUFFER)
    while pos < end:
        data = source.read_range(f, pos, min(pos + piece, end))
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
    found: dict[tuple[int, int], int] = {}  # a boundary ends one shard and starts the next: find it once

    def offset(fi: int, line: int) -> int:
        if (fi, line) not in found:
            found[fi, line] = line_offset(source, source.files[fi], counts[fi], line)
        return found[fi, line]

    for i in range(num_shards):
        lo, hi = bounds[i], bounds[i + 1]
        segments = []
        for fi, (f, c) in enumerate(zip(source.files, counts, strict=True)):
            a, b = max(lo, starts[fi]), min(hi, starts[fi + 1])
            if a >= b:
                continue
            la, lb = a - starts[fi], b - starts[fi]
            segments.append(
                Segment(
                    file=f,
                    start=offset(fi, la),
                    end=offset(fi, lb),
                    records=lb - la,
                    add_newline=lb == c.records and not c.ends_with_newline,
                )
            )
        plan.append(segments)
    return plan


def plan_by_records(
    source: Source, fmt: str, num_shards: int, options: Options, checksum: str = "none"
) -> tuple[list[list[Segment]], list[LineCounts]]:
    """Count every record (hashing each file too when asked), then split by count."""
    counts = scan_lines(source, fmt, options, checksum)
    check_record_count(sum(c.records for c in counts), num_shards, options.allow_empty_shards)
    return plan_contiguous(source, counts, num_shards), counts


def next_record_start(source: Source, f: SourceFile, offset: int) -> int:
    """The first record start at or after ``offset`` in ``f`` (``f.size`` if none is left)."""
    if offset <= 0:
        return 0
    if offset >= f.size:
        return f.size
    pos = offset - 1  # a record starts at ``offset`` iff the byte before it is a newline
    while pos < f.size:
        data = source.read_range(f, pos, min(pos + SEEK_READ, f.size))
        if not data:
            raise StageError(f"source file {f.location} shrank while it was being sharded")
        found = data.find(b"\n")
        if found >= 0:
            return pos + found + 1
        pos += len(data)
    return f.size


def byte_boundaries(source: Source, num_shards: int) -> list[tuple[int, int]]:
    """``num_shards + 1`` boundaries as ``(file index, offset)``, non-decreasing, on record starts."""
    files = source.files
    starts = [0]
    for f in files:
        starts.append(starts[-1] + f.size)
    total = starts[-1]
    bounds = [(0, 0)]
    for i in range(1, num_shards):
        target = i * total // num_shards
        fi = min(bisect.bisect_right(starts, target) - 1, len(files) - 1)
        offset = next_record_start(source, files[fi], target - starts[fi])
        bounds.append(max(bounds[-1], (fi, offset)))
    bounds.append((len(files) - 1, files[-1].size))
    return bounds


def plan_by_bytes(source: Source, num_shards: int, options: Options, fmt: str = "text") -> list[list[Segment]]:
    """Split by bytes; segment record counts are None unless ``options.count_records``.

    ``--validate`` still reads every record (that is what it asks for).
    """
    if source.total_bytes == 0:
        raise StageError("dataset is empty: no records in the source")
    if options.validate:
        scan_lines(source, fmt, options)
    bounds = byte_boundaries(source, num_shards)
    plan: list[list[Segment]] = []
    for (fa, oa), (fb, ob) in itertools.pairwise(bounds):
        segments = []
        for fi in range(fa, fb + 1):
            f = source.files[fi]
            start = oa if fi == fa else 0
            end = ob if fi == fb else f.size
            if start < end:
                segments.append(Segment(file=f, start=start, end=end, records=None, add_newline=False))
        plan.append(segments)
    if options.count_records:
        plan = count_plan(source, plan, options)
    return plan


def count_plan(source: Source, plan: list[list[Segment]], options: Options) -> list[list[Segment]]:
    """The same plan with every segment's records counted (and ``add_newline`` known)."""
    select_counter(source.total_bytes)
    jobs = [seg for segments in plan for seg in segments]

    def counted(seg: Segment) -> Segment:
        newlines, last = count_range(source, seg.file, seg.start, seg.end)
        unterminated = seg.end == seg.file.size and last not in (b"", b"\n")
        return Segment(
            file=seg.file,
            start=seg.start,
            end=seg.end,
            records=newlines + (1 if unterminated else 0),
            add_newline=unterminated,
        )

    from concurrent.futures import ThreadPoolExecutor  # lazy: the index-by-bytes path needs no pool

    # numpy's count and file reads release the GIL: ranges are counted side by side.
    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        done = iter(list(pool.map(counted, jobs)))
    return [[next(done) for _ in segments] for segments in plan]


def mark_unterminated(source: Source, plan: list[list[Segment]]) -> list[list[Segment]]:
    """Set ``add_newline`` on segments ending a file whose last byte is not a newline.

    Copy mode needs it (every shard record ends with a newline); one 1-byte read per file.
    """
    last_bytes: dict[str, bytes] = {}
    out = []
    for segments in plan:
        fixed = []
        for seg in segments:
            if seg.end == seg.file.size and seg.records is None:
                if seg.file.location not in last_bytes:
                    last_bytes[seg.file.location] = source.read_range(seg.file, seg.file.size - 1, seg.file.size)
                seg = Segment(seg.file, seg.start, seg.end, None, last_bytes[seg.file.location] != b"\n")
            fixed.append(seg)
        out.append(fixed)
    return out
