"""Sharding whole files (``files`` format): each shard is a directory of files.

``shards/shard-00003-of-00016/<relpath>`` holds the files of shard 3 under their source
relative paths (so equal base names from different directories cannot collide), and the
manifest lists them with sizes and sha256s. How files are assigned:

* ``contiguous`` (default): balanced by bytes, greedy largest-first onto the least-loaded
  shard, ties by path (deterministic). Order is not meaningful for whole files, so balance wins.
* ``round-robin``: the k-th file in path order goes to shard ``k % N``.
* ``hashed``: shard from the seeded blake2b of the file's relative path (stable when files
  are added).
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from trainspec.stages.assignment import greedy_by_bytes, hash_key, hashed_shard
from trainspec.stages.config import Options, Settings
from trainspec.stages.errors import StageError
from trainspec.stages.lines_format import check_record_count
from trainspec.stages.manifest import listing_sha256, shard_relpath
from trainspec.stages.sink import output_error
from trainspec.stages.sources import Source, SourceFile


def assign_files(files: list[SourceFile], settings: Settings) -> list[list[int]]:
    """Per shard, the indexes of the files it gets."""
    n = settings.num_shards
    if settings.assignment == "contiguous":
        return greedy_by_bytes([(f.rel, f.size) for f in files], n)
    out: list[list[int]] = [[] for _ in range(n)]
    key = hash_key(settings.seed)
    for k, f in enumerate(files):
        shard = k % n if settings.assignment == "round-robin" else hashed_shard(f.rel.encode(), key, n)
        out[shard].append(k)
    return out


def _copy_file(source: Source, f: SourceFile, dest: Path, block_size: int) -> dict[str, Any]:
    digest = hashlib.sha256()
    size = 0
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        # Opened apart from the with below so that open errors get their own message.
        out = open(dest, "xb", buffering=0)  # noqa: SIM115
    except OSError as exc:
        raise output_error(dest, exc) from None
    with out, source.open(f, block_size) as fh:
        buf = bytearray(min(block_size, max(f.size, 1 << 16)))
        view = memoryview(buf)
        while n := fh.readinto(view):
            try:
                out.write(view[:n])
            except OSError as exc:
                raise output_error(dest, exc) from None
            digest.update(view[:n])
            size += n
    return {"path": f.rel, "bytes": size, "sha256": digest.hexdigest()}


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
    jobs = [
        (s, source.files[k]) for s in range(n) for k in sorted(plan[s], key=lambda k: source.files[k].rel)
    ]
    # Small files are dominated by per-file latency (open/close, object-store round trips),
    # so copy many at once.
    with ThreadPoolExecutor(max_workers=max(4, options.workers * 4)) as pool:
        copied = list(
            pool.map(
                lambda job: _copy_file(source, job[1], dirs[job[0]] / job[1].rel, options.block_size), jobs
            )
        )
    by_shard: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    for (s, _f), entry in zip(jobs, copied):
        by_shard[s].append(entry)
    results = []
    for entries in by_shard:
        entries.sort(key=lambda e: e["path"])
        results.append(
            {
                "records": len(entries),
                "bytes": sum(e["bytes"] for e in entries),
                "sha256": listing_sha256(entries),
                "files": entries,
            }
        )
    for f, entry in zip((job[1] for job in jobs), copied):
        if entry["bytes"] != f.size:
            raise StageError(f"source file {f.location} changed size while it was copied")
    return results
