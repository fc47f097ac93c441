"""Sharding whole files (``files`` format): each shard is a directory of files.

``shards/shard-00003-of-00016/<relpath>`` holds the files of shard 3 under their source
relative paths (so equal base names from different directories cannot collide), and the
manifest lists them with sizes (and checksums when asked). Local files are copied in the
kernel (copy_file_range/sendfile) unless a checksum needs the bytes. How files are assigned
(index mode uses the same assignment, by reference):

* ``contiguous`` (default), ``balance: records``: in path order, file counts within one.
* ``contiguous``, ``balance: bytes``: greedy largest-first onto the least-loaded shard, ties
  by path (deterministic).
* ``round-robin``: the k-th file in path order goes to shard ``k % N``.
* ``hashed``: shard from the seeded blake2b of the file's relative path (stable when files
  are added).
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from trainspec.stages.assignment import (
    contiguous_bounds,
    greedy_by_bytes,
    hash_key,
    hashed_shard,
)
from trainspec.stages.config import Options, Settings
from trainspec.stages.errors import StageError
from trainspec.stages.line_plan import check_record_count
from trainspec.stages.manifest import listing_checksum, shard_relpath
from trainspec.stages.sink import ShardWriter
from trainspec.stages.sources import Source, SourceFile


def assign_files(files: list[SourceFile], settings: Settings) -> list[list[int]]:
    """Per shard, the indexes of the files it gets."""
    n = settings.num_shards
    if settings.assignment == "contiguous" and settings.balance == "bytes":
        return greedy_by_bytes([(f.rel, f.size) for f in files], n)
    if settings.assignment == "contiguous":
        return [list(range(a, b)) for a, b in itertools.pairwise(contiguous_bounds(len(files), n))]
    out: list[list[int]] = [[] for _ in range(n)]
    key = hash_key(settings.seed)
    for k, f in enumerate(files):
        shard = k % n if settings.assignment == "round-robin" else hashed_shard(f.rel.encode(), key, n)
        out[shard].append(k)
    return out


def _copy_file(source: Source, f: SourceFile, dest: Path, options: Options, checksum: str) -> dict[str, Any]:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StageError(f"cannot write output {dest.parent}: {exc.strerror or exc}") from None
    writer = ShardWriter(dest, checksum=checksum)
    try:
        if source.is_local and source.on_read is None:
            with source.open(f) as fh:
                fd = fh.fileno()  # local sources are io.FileIO
                # One byte more than listed: a file that grew shows up as a size mismatch below.
                writer.copy_from(fd, 0, f.size + 1, kernel=options.kernel_copy)
        else:
            buf = bytearray(min(options.block_size, max(f.size, 1 << 16), 1 << 18))
            view = memoryview(buf)
            with source.open(f, len(buf)) as fh:
                while n := fh.readinto(view):
                    writer.write(view[:n])
        done = writer.close()
    except BaseException:
        writer.abort()
        raise
    return {"path": f.rel, "bytes": done["bytes"], "checksum": done["checksum"]}


def shard_files(source: Source, settings: Settings, options: Options, staging: Path) -> list[dict[str, Any]]:
    """Copy files into per-shard directories under ``staging/shards``; return shard entries."""
    check_record_count(len(source.files), settings.num_shards, options.allow_empty_shards, what="files")
    n = settings.num_shards
    for f in source.files:
        if f.rel.startswith("/") or ".." in f.rel.split("/"):
            raise StageError(f"source file {f.location} has an unsafe relative path {f.rel!r}")
    plan = assign_files(source.files, settings)
    dirs = [staging / shard_relpath(i, n, "files") for i in range(n)]
    for d in dirs:
        d.mkdir(parents=True)
    jobs = [(s, source.files[k]) for s in range(n) for k in sorted(plan[s], key=lambda k: source.files[k].rel)]
    # Small files are dominated by per-file latency (open/close, object-store round trips),
    # so copy many at once.
    with ThreadPoolExecutor(max_workers=max(4, options.workers * 4)) as pool:
        copied = list(
            pool.map(
                lambda job: _copy_file(source, job[1], dirs[job[0]] / job[1].rel, options, settings.checksum),
                jobs,
            )
        )
    by_shard: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    for (s, _f), entry in zip(jobs, copied, strict=True):
        by_shard[s].append(entry)
    results = []
    for entries in by_shard:
        entries.sort(key=lambda e: e["path"])
        results.append(
            {
                "records": len(entries),
                "bytes": sum(e["bytes"] for e in entries),
                "checksum": listing_checksum(entries, settings.checksum),
                "files": entries,
            }
        )
    for f, entry in zip((job[1] for job in jobs), copied, strict=True):
        if entry["bytes"] != f.size:
            raise StageError(f"source file {f.location} changed size while it was copied")
    return results
