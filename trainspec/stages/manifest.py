"""The shard manifest: layout names, building, writing, reading and checking it.

Standard library only: the in-pod helpers read manifests in training images that have
nothing but trainspec installed.

Layout of an output directory (``$TRAINSPEC_DATA_DIR``)::

    manifest.json                          # index mode: nothing else
    shards/shard-00000-of-00016.jsonl      # copy mode, jsonl / text (.txt) / parquet
    shards/shard-00000-of-00016/<relpath>  # copy mode, files: one directory per shard

``manifest.json`` (version 2; keys sorted, two-space indent, no timestamps, so the same input
and settings always give byte-identical manifests)::

    {
      "kind": "trainspec.dev/shards",
      "manifest_version": 2,
      "trainspec_version": "0.1.0",
      "settings": {"assignment": ..., "format": ..., "num_shards": ..., "seed": ..., "shard_by": ...,
                   "mode": "index" | "copy", "balance": "records" | "bytes",
                   "checksum": "none" | "xxh3" | "sha256"},
      "source": {"uri": ..., "files": n, "bytes": n, "fingerprint": "sha256:<hex>"},
      "files": [...],             # index mode only, see below
      "records": <total records> | null,
      "bytes": <total bytes>,
      "shards": [...]             # in index order; "index" is the rank (or node) it belongs to
    }

Index mode. ``files`` lists every source file, sorted by ``rel``: ``{"path": <what a reader
opens: an absolute local path or a URI such as s3://bucket/key>, "rel": <path relative to the
source root>, "size": n, "mtime_ns": n | null, "etag": <str> | null, "checksum": <see below> |
null}`` (local files have ``mtime_ns``, object-store files ``etag``, the store's version stamp).
A shard is ``{"index": i, "records": n | null, "bytes": n, "first_record": k | null, "ranges":
[...]}`` where ``first_record`` is the number of records in the shards before it, and a range is

* jsonl / text: ``{"file": <index into files>, "start": a, "end": b, "records": n | null}``, a
  byte range, start inclusive, end exclusive, both on record starts (``end`` may be the file's
  size; a file's last line may lack its newline). ``balance: records``: shard record counts are
  the floor or ceiling of total / num_shards. ``balance: bytes``: boundary i is the first record
  start at or after i * total bytes / num_shards; record counts are null unless the stage ran
  with ``--count-records``. Ranges of all shards cover every byte of the source once, in order.
* parquet: ``{"file": i, "row_groups": [g, ...], "records": n}``: whole row groups, contiguous
  in order; boundary i is the row-group start nearest to i * total / num_shards rows (records)
  or compressed bytes (bytes), so balance is to a row group, not to a row.
* files: ``{"file": i, "start": 0, "end": size, "records": 1}``: whole files. ``balance:
  records``: contiguous in path order, file counts within one; ``bytes``: largest first onto
  the least-loaded shard.

Copy mode. A shard is ``{"index": 0, "path": "shards/shard-00000-of-00016.jsonl", "records": n,
"bytes": n, "checksum": ... | null}``. For ``files`` its ``path`` is its directory and it has a
``files`` list of ``{"path": <relpath inside the shard dir>, "bytes": n, "checksum": ... |
null}`` sorted by path, and its checksum is over the ``sha256sum``-style listing
``"<checksum>  <relpath>\\n"`` of those files in that order. With ``balance: bytes`` and no
``--count-records`` a line shard's ``records`` is null.

A checksum is ``"xxh3:<hex>"`` (XXH3-64, ``xxhash.xxh3_64().hexdigest()``) or
``"sha256:<hex>"``, and is null unless the ``checksum`` setting asks for one (``fastio``).
Version 1 manifests (copy mode only; ``sha256`` instead of ``checksum``) are still read.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from trainspec.stages.errors import ManifestError

MANIFEST_NAME = "manifest.json"
SHARDS_DIR = "shards"
MANIFEST_KIND = "trainspec.dev/shards"
MANIFEST_VERSION = 2
#: Versions :func:`load_manifest` reads.
READABLE_VERSIONS = (1, 2)
EXTENSIONS = {"jsonl": ".jsonl", "text": ".txt", "parquet": ".parquet", "files": ""}


def shard_relpath(index: int, num_shards: int, fmt: str) -> str:
    """Path of shard ``index`` relative to the output, e.g. ``shards/shard-00003-of-00016.jsonl``."""
    return f"{SHARDS_DIR}/shard-{index:05d}-of-{num_shards:05d}{EXTENSIONS[fmt]}"


def build_manifest(
    *,
    version: str,
    settings: dict[str, Any],
    source: dict[str, Any],
    shards: list[dict[str, Any]],
    files: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Assemble a manifest dict from its parts (shards in index order; ``files`` for index mode)."""
    counts = [s["records"] for s in shards]
    manifest: dict[str, Any] = {
        "kind": MANIFEST_KIND,
        "manifest_version": MANIFEST_VERSION,
        "trainspec_version": version,
        "settings": dict(settings),
        "source": dict(source),
        "records": None if None in counts else sum(int(c) for c in counts),
        "bytes": sum(int(s["bytes"]) for s in shards),
        "shards": shards,
    }
    if files is not None:
        manifest["files"] = files
    return manifest


def dump_manifest(manifest: dict[str, Any]) -> bytes:
    """Serialize deterministically: sorted keys, fixed separators, trailing newline."""
    return (json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def load_manifest(data_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and sanity-check ``<data_dir>/manifest.json``; raises :class:`ManifestError`."""
    path = Path(data_dir) / MANIFEST_NAME
    try:
        manifest = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise ManifestError(f"no shard manifest at {path} (has the dataset-initializer stage run?)") from None
    except (OSError, ValueError) as exc:
        raise ManifestError(f"cannot read shard manifest {path}: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != MANIFEST_KIND:
        raise ManifestError(f"{path} is not a trainspec shard manifest")
    if manifest.get("manifest_version") not in (1, 2):  # 2: index mode (ranges); 1: copy mode
        raise ManifestError(
            f"{path} has manifest_version {manifest.get('manifest_version')!r}; this trainspec reads versions 1 and 2"
        )
    shards = manifest.get("shards")
    settings = manifest.get("settings")
    if not isinstance(shards, list) or not isinstance(settings, dict):
        raise ManifestError(f"{path} is malformed (no shards or settings)")
    if [s.get("index") for s in shards] != list(range(len(shards))) or len(shards) != settings.get("num_shards"):
        raise ManifestError(f"{path} is malformed (shard indexes do not match num_shards)")
    return manifest


def sha256_file(path: Path, block_size: int = 1 << 20) -> str:
    """Hex sha256 of a file, streamed."""
    digest = hashlib.sha256()
    buf = bytearray(block_size)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as fh:
        while n := fh.readinto(buf):
            digest.update(view[:n])
    return digest.hexdigest()


def listing_checksum(files: list[dict[str, Any]], algorithm: str) -> str | None:
    """The checksum of a copy-mode ``files`` shard: over ``"<checksum>  <relpath>\\n"`` lines."""
    from trainspec.stages.fastio import digest, new_hasher

    hasher = new_hasher(algorithm)
    if hasher is None:
        return None
    for entry in sorted(files, key=lambda e: e["path"]):
        hasher.update(f"{entry['checksum']}  {entry['path']}\n".encode())
    return digest(algorithm, hasher)


def _check_file(path: Path, size: int, checksum: str | None) -> str | None:
    from trainspec.stages.fastio import checksum_path

    try:
        actual = path.stat().st_size
    except OSError:
        return f"{path} is missing"
    if actual != size:
        return f"{path} has {actual} bytes, manifest says {size}"
    if checksum is not None and checksum_path(path, checksum.partition(":")[0]) != checksum:
        return f"{path} does not match its checksum"
    return None


def verify_shards(data_dir: Path, manifest: dict[str, Any], *, full: bool) -> str | None:
    """Check the copy-mode shard files against the manifest; return the first problem, or None.

    Sizes are always checked (cheap); ``full`` also recomputes every recorded checksum. Index
    mode has no shard files: its source files are covered by the source fingerprint, and
    ``full`` recomputes their recorded checksums (local files only).
    """
    if manifest.get("settings", {}).get("mode") == "index":
        return _verify_index(manifest) if full else None
    for shard in manifest["shards"]:
        base = data_dir / shard["path"]
        entries = shard.get("files")
        if entries is None:
            problem = _check_file(base, int(shard["bytes"]), shard.get("checksum") if full else None)
        else:
            if not base.is_dir():
                return f"{base} is missing"
            problem = None
            for entry in entries:
                problem = _check_file(
                    base / entry["path"], int(entry["bytes"]), entry.get("checksum") if full else None
                )
                if problem:
                    break
        if problem:
            return problem
    return None


def _verify_index(manifest: dict[str, Any]) -> str | None:
    for entry in manifest.get("files", []):
        if entry.get("checksum") and "://" not in entry["path"]:
            problem = _check_file(Path(entry["path"]), int(entry["size"]), entry["checksum"])
            if problem:
                return problem
    return None
