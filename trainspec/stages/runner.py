"""One run of the sharding stage: resolve the source, check the cache, shard (copy mode) or
index (index mode) into a staging directory, write the manifest, publish atomically. The CLI
(``shard.py``) only parses arguments and turns errors into exit codes.

Index mode publishes a directory holding only ``manifest.json``, through the same staging
directory and renames as copy mode, so a killed run never leaves a manifest that lies.
"""

from __future__ import annotations

import contextlib
import resource
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from trainspec.stages.cache import cache_status
from trainspec.stages.config import Config, Options, Settings
from trainspec.stages.errors import StageError
from trainspec.stages.manifest import (
    MANIFEST_NAME,
    build_manifest,
    dump_manifest,
    shard_relpath,
)
from trainspec.stages.output import (
    check_replaceable,
    discard,
    locked,
    make_staging,
    prepare_parent,
    publish,
    remove_stale,
)
from trainspec.stages.sink import fsync_tree, output_error
from trainspec.stages.sources import Source, resolve_source

PROG = "trainspec-shard"


def _sharder(fmt: str) -> Callable[[Source, Settings, Options, Path], list[dict[str, Any]]]:
    if fmt == "parquet":
        from trainspec.stages.parquet_format import shard_parquet

        return shard_parquet
    if fmt == "files":
        from trainspec.stages.files_format import shard_files

        return shard_files
    from trainspec.stages.lines_format import shard_lines

    return shard_lines


def _raise_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        if target < needed:
            raise StageError(f"{needed} open files needed but the limit is {hard}; use fewer shards")


def _write_manifest(staging: Path, manifest: dict[str, Any]) -> None:
    path = staging / MANIFEST_NAME
    try:
        with open(path, "xb") as fh:
            fh.write(dump_manifest(manifest))
    except OSError as exc:
        raise output_error(path, exc) from None


def _results(source: Source, settings: Settings, options: Options, staging: Path) -> tuple[Any, list[dict[str, Any]]]:
    """``(files, shards)``: files only in index mode; copy-mode shards get their paths."""
    if settings.mode == "index":
        from trainspec.stages.index_format import index_shards

        files, results = index_shards(source, settings, options)
        return files, [{"index": i, **r} for i, r in enumerate(results)]
    results = _sharder(settings.format)(source, settings, options, staging)
    return None, [
        {"index": i, "path": shard_relpath(i, settings.num_shards, settings.format), **r} for i, r in enumerate(results)
    ]


def _empty(shard: dict[str, Any]) -> bool:
    return shard["records"] == 0 or (shard["records"] is None and shard["bytes"] == 0)


def run(cfg: Config, env: Mapping[str, str], out: Any = None) -> int:
    """Shard (or find a cache hit); returns the exit code. Raises :class:`StageError` on failure."""
    from trainspec import __version__
    from trainspec.stages.fastio import check_available

    out = out or sys.stdout
    started = time.monotonic()
    settings, options, out_dir = cfg.settings, cfg.options, cfg.output
    check_available(settings.checksum)  # a missing xxhash fails before any work
    prepare_parent(out_dir)
    source = resolve_source(cfg.source, env, exclude=out_dir)
    summary = source.summary()
    with locked(out_dir):
        if not cfg.force:
            hit, reason = cache_status(
                out_dir,
                version=__version__,
                settings=settings.as_dict(),
                source=summary,
                full_verify=cfg.verify,
                need_records=options.count_records,
            )
            if hit:
                print(
                    f"{PROG}: cache hit: {out_dir / MANIFEST_NAME} matches the source and settings; nothing to do",
                    file=out,
                )
                return 0
            if out_dir.exists():
                print(f"{PROG}: re-sharding {out_dir}: {reason}", file=out)
        check_replaceable(out_dir)
        remove_stale(out_dir)
        # Parquet writers and streaming line assignments keep every shard file open at once.
        if settings.mode == "copy" and (
            settings.format == "parquet" or (settings.format != "files" and settings.assignment != "contiguous")
        ):
            _raise_fd_limit(settings.num_shards + 64)
        staging: Path | None = make_staging(out_dir)
        from trainspec.progress import Progress

        # On a terminal (a local run), a progress line by bytes read; in a pod, nothing.
        bar = Progress("sharding", total=source.total_bytes or None)
        source.on_read = bar.advance if bar.enabled else None
        try:
            assert staging is not None
            with bar:
                files, shards = _results(source, settings, options, staging)
            changed = source.changed_files()
            if changed:  # the shards may mix old and new data; never publish that
                raise StageError(f"source changed while it was being sharded: {changed[0]}; run the stage again")
            empty = [s["index"] for s in shards if _empty(s)]
            if empty and not options.allow_empty_shards:
                raise StageError(
                    f"{len(empty)} of {settings.num_shards} shards would be empty (first: shard {empty[0]}, "
                    f"{settings.assignment} assignment); pass --allow-empty-shards to allow that"
                )
            manifest = build_manifest(
                version=__version__, settings=settings.as_dict(), source=summary, shards=shards, files=files
            )
            _write_manifest(staging, manifest)
            if options.durable:  # everything on disk before the rename makes it visible
                fsync_tree(staging)
            publish(staging, out_dir, options.durable)
            staging = None
        finally:
            discard(staging)
    records = "uncounted" if manifest["records"] is None else manifest["records"]
    what = "indexed" if settings.mode == "index" else "wrote"
    print(
        f"{PROG}: {what} {settings.num_shards} {settings.format} shard(s) with {records} records "
        f"({manifest['bytes']} bytes) to {out_dir} in {time.monotonic() - started:.2f}s",
        file=out,
    )
    return 0
