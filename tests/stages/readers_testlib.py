"""Version-2 (index mode) shard manifests written straight from the contract, for the reader tests.

Independent of the stage's own index writer, so the readers are tested against the contract
(balance ``records``: shard record counts floor/ceil of total / num_shards, ranges on record
starts) rather than against whatever the stage happens to write.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def record_starts(data: bytes) -> list[int]:
    """Byte offset of every record of one file (a final line without newline is a record)."""
    starts, pos = [], 0
    while pos < len(data):
        starts.append(pos)
        nl = data.find(b"\n", pos)
        pos = len(data) if nl < 0 else nl + 1
    return starts


def logical_bytes(data: bytes) -> bytes:
    """The file's bytes as a copy-mode shard holds them: a missing final newline added."""
    return data + b"\n" if data and not data.endswith(b"\n") else data


def local_entry(path: Path, rel: str, checksum: str | None = None) -> dict[str, Any]:
    st = path.stat()
    digest = None
    if checksum == "sha256":
        digest = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    return {
        "path": str(path),
        "rel": rel,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "etag": None,
        "checksum": digest,
    }


def index_manifest(
    entries: Sequence[dict[str, Any]],
    contents: Sequence[bytes],
    num_shards: int,
    *,
    fmt: str = "jsonl",
    count: bool = True,
) -> dict[str, Any]:
    """An index-mode manifest over files with these ``contents``, balanced by records."""
    records: list[tuple[int, int, int]] = []  # (file, start, end) of every record, in order
    for i, data in enumerate(contents):
        starts = record_starts(data)
        # Not strict: an empty file has no record start but still its end.
        records.extend((i, s, e) for s, e in zip(starts, [*starts[1:], len(data)], strict=False))
    total = len(records)
    shards, first = [], 0
    for index in range(num_shards):
        n = total // num_shards + (1 if index < total % num_shards else 0)
        mine = records[first : first + n]
        ranges: list[dict[str, Any]] = []
        for f, s, e in mine:
            if ranges and ranges[-1]["file"] == f and ranges[-1]["end"] == s:
                ranges[-1]["end"] = e
                ranges[-1]["records"] += 1
            else:
                ranges.append({"file": f, "start": s, "end": e, "records": 1})
        if not count:
            for r in ranges:
                r["records"] = None
        shards.append(
            {
                "index": index,
                "records": n if count else None,
                "bytes": sum(r["end"] - r["start"] for r in ranges),
                "first_record": first if count else None,
                "ranges": ranges,
            }
        )
        first += n
    return {
        "kind": "trainspec.dev/shards",
        "manifest_version": 2,
        "trainspec_version": "test",
        "settings": {
            "assignment": "contiguous",
            "format": fmt,
            "num_shards": num_shards,
            "seed": 0,
            "shard_by": "rank",
            "mode": "index",
            "balance": "records",
            "checksum": "none",
        },
        "source": {
            "uri": "test",
            "files": len(entries),
            "bytes": sum(len(c) for c in contents),
            "fingerprint": "sha256:0",
        },
        "files": list(entries),
        "records": total if count else None,
        "bytes": sum(len(c) for c in contents),
        "shards": shards,
    }


def write_source(root: Path, contents: Sequence[bytes], checksum: str | None = None) -> list[dict[str, Any]]:
    """Write ``part-<i>.jsonl`` files under ``root``; return their manifest entries."""
    root.mkdir(parents=True, exist_ok=True)
    entries = []
    for i, data in enumerate(contents):
        path = root / f"part-{i:03d}.jsonl"
        path.write_bytes(data)
        entries.append(local_entry(path, path.name, checksum))
    return entries


def write_manifest(data_dir: Path, manifest: dict[str, Any]) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "manifest.json"
    path.write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n")
    return path


def rank_env(data_dir: Path, rank: int, world: int) -> dict[str, str]:
    return {"TRAINSPEC_DATA_DIR": os.fspath(data_dir), "RANK": str(rank), "WORLD_SIZE": str(world)}
