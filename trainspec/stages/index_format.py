"""Index mode: the shards are references into the source, and only the manifest is written.

* ``jsonl``/``text``: byte ranges aligned to record starts (line_plan: by records or bytes).
* ``parquet``: whole row groups, contiguous in order (footers only; no data page is read).
* ``files``: whole files.

Each function returns ``(files, shards)``: the manifest's ``files`` entries (every source
file, with its fingerprint) and per-shard entries without ``index`` (the runner adds it).
"""

from __future__ import annotations

import bisect
import itertools
import os
from typing import Any

from trainspec.stages.assignment import contiguous_bounds, greedy_by_bytes
from trainspec.stages.config import Options, Settings
from trainspec.stages.errors import StageError
from trainspec.stages.fastio import IO_BUFFER, digest, new_hasher
from trainspec.stages.line_plan import (
    Segment,
    check_record_count,
    plan_by_bytes,
    plan_by_records,
)
from trainspec.stages.sources import Source, SourceFile

Entries = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def file_checksum(source: Source, f: SourceFile, algorithm: str) -> str | None:
    """Checksum of one whole source file (a streamed read), None for ``none``."""
    hasher = new_hasher(algorithm)
    if hasher is None:
        return None
    buf = bytearray(IO_BUFFER)
    view = memoryview(buf)
    size = 0
    with source.open(f, IO_BUFFER) as fh:
        while n := fh.readinto(view):
            hasher.update(view[:n])
            size += n
    if size != f.size:
        raise StageError(f"source file {f.location} changed size while it was hashed")
    return digest(algorithm, hasher)


def _checksums(source: Source, algorithm: str, options: Options) -> list[str | None]:
    if algorithm == "none":
        return [None] * len(source.files)
    from concurrent.futures import ThreadPoolExecutor  # lazy: only checksums need a pool

    # Hash updates and reads release the GIL; object stores gain most from overlap.
    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        return list(pool.map(lambda f: file_checksum(source, f, algorithm), source.files))


def file_entries(source: Source, checksums: list[str | None]) -> list[dict[str, Any]]:
    """The manifest's ``files``: what a reader opens, and what must not have changed."""
    out = []
    for f, checksum in zip(source.files, checksums, strict=True):
        if source.is_local:
            path, mtime_ns, etag = os.path.abspath(f.location), int(f.stamp), None
        else:
            path, mtime_ns, etag = source.fs.unstrip_protocol(f.location), None, f.stamp or None
        out.append(
            {"path": path, "rel": f.rel, "size": f.size, "mtime_ns": mtime_ns, "etag": etag, "checksum": checksum}
        )
    return out


def _shard(ranges: list[dict[str, Any]], first: int | None, nbytes: int) -> dict[str, Any]:
    counts = [r["records"] for r in ranges]
    records = None if None in counts else sum(counts)
    return {"records": records, "bytes": nbytes, "first_record": first, "ranges": ranges}


def _with_first_records(shards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    first: int | None = 0
    for shard in shards:
        shard["first_record"] = first
        first = None if first is None or shard["records"] is None else first + shard["records"]
    return shards


def index_lines(source: Source, settings: Settings, options: Options) -> Entries:
    """Byte ranges per shard for jsonl/text."""
    position = {f.location: i for i, f in enumerate(source.files)}
    if settings.balance == "bytes":
        plan: list[list[Segment]] = plan_by_bytes(source, settings.num_shards, options, settings.format)
        checksums = _checksums(source, settings.checksum, options)
    else:
        plan, counts = plan_by_records(source, settings.format, settings.num_shards, options, settings.checksum)
        checksums = [c.checksum for c in counts]
    shards = []
    for segments in plan:
        ranges = [
            {"file": position[s.file.location], "start": s.start, "end": s.end, "records": s.records} for s in segments
        ]
        shards.append(_shard(ranges, None, sum(s.end - s.start for s in segments)))
    return file_entries(source, checksums), _with_first_records(shards)


def index_files(source: Source, settings: Settings, options: Options) -> Entries:
    """Whole files per shard: contiguous by count (records) or greedy by bytes (bytes)."""
    n = settings.num_shards
    check_record_count(len(source.files), n, options.allow_empty_shards, what="files")
    if settings.balance == "bytes":
        plan = [sorted(p) for p in greedy_by_bytes([(f.rel, f.size) for f in source.files], n)]
    else:
        bounds = contiguous_bounds(len(source.files), n)
        plan = [list(range(a, b)) for a, b in itertools.pairwise(bounds)]
    shards = []
    for picked in plan:
        ranges = [{"file": k, "start": 0, "end": source.files[k].size, "records": 1} for k in picked]
        shards.append(_shard(ranges, None, sum(source.files[k].size for k in picked)))
    return file_entries(source, _checksums(source, settings.checksum, options)), _with_first_records(shards)


def _row_groups(source: Source) -> list[tuple[int, int, int, int]]:
    """``(file index, row group, rows, compressed bytes)`` of every row group, in order."""
    from trainspec.stages.parquet_format import inspect_row_groups

    return inspect_row_groups(source)


def index_parquet(source: Source, settings: Settings, options: Options) -> Entries:
    """Whole row groups per shard, contiguous; boundaries at the nearest row-group start."""
    n = settings.num_shards
    units = _row_groups(source)
    total_rows = sum(u[2] for u in units)
    check_record_count(total_rows, n, options.allow_empty_shards, what="rows")
    weight = 2 if settings.balance == "records" else 3
    prefix = list(itertools.accumulate((u[weight] for u in units), initial=0))
    total = prefix[-1]
    # Boundary i: the row-group start nearest to i * total / n (the earlier one on a tie).
    cuts = [0]
    for i in range(1, n):
        target = i * total / n
        after = min(bisect.bisect_left(prefix, target), len(units))
        nearest = after - 1 if after and target - prefix[after - 1] <= prefix[after] - target else after
        cuts.append(max(cuts[-1], nearest))
    cuts.append(len(units))
    shards = []
    for a, b in itertools.pairwise(cuts):
        ranges: list[dict[str, Any]] = []
        for fi, group in itertools.groupby(units[a:b], key=lambda u: u[0]):
            picked = list(group)
            ranges.append({"file": fi, "row_groups": [u[1] for u in picked], "records": sum(u[2] for u in picked)})
        shards.append(_shard(ranges, None, sum(u[3] for u in units[a:b])))
    return file_entries(source, _checksums(source, settings.checksum, options)), _with_first_records(shards)


def index_shards(source: Source, settings: Settings, options: Options) -> Entries:
    """The index of ``settings.format``."""
    if settings.format == "parquet":
        return index_parquet(source, settings, options)
    if settings.format == "files":
        return index_files(source, settings, options)
    return index_lines(source, settings, options)
