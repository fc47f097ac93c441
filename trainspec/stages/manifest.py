"""The shard manifest: layout names, building, writing, reading and checking it.

Standard library only: the in-pod helpers read manifests in training images that have
nothing but trainspec installed.

Layout of an output directory (``$TRAINSPEC_DATA_DIR``)::

    manifest.json
    shards/shard-00000-of-00016.jsonl      # jsonl / text (.txt) / parquet
    shards/shard-00000-of-00016/<relpath>  # files: one directory per shard

``manifest.json`` (keys sorted, two-space indent, no timestamps, so the same input and
settings always give byte-identical manifests)::

    {
      "kind": "trainspec.dev/shards",
      "manifest_version": 1,
      "trainspec_version": "0.1.0",
      "settings": {"assignment": ..., "format": ..., "num_shards": ..., "seed": ..., "shard_by": ...},
      "source": {"uri": ..., "files": n, "bytes": n, "fingerprint": "sha256:<hex>"},
      "records": <total records>,
      "bytes": <total bytes of all shards>,
      "shards": [
        {"index": 0, "path": "shards/shard-00000-of-00016.jsonl",
         "records": n, "bytes": n, "sha256": "<hex>"},
        ...
      ]
    }

For ``files`` a shard's ``path`` is its directory, it has a ``files`` list of
``{"path": <relpath inside the shard dir>, "bytes": n, "sha256": <hex>}`` sorted by path, and
its ``sha256`` is the sha256 of the ``sha256sum``-style listing ``"<hex>  <relpath>\\n"`` of
those files in that order. ``index`` is the rank (or node) the shard belongs to.
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
MANIFEST_VERSION = 1
EXTENSIONS = {"jsonl": ".jsonl", "text": ".txt", "parquet": ".parquet", "files": ""}


def shard_relpath(index: int, num_shards: int, fmt: str) -> str:
    """Path of shard ``index`` relative to the output, e.g. ``shards/shard-00003-of-00016.jsonl``."""
    return f"{SHARDS_DIR}/shard-{index:05d}-of-{num_shards:05d}{EXTENSIONS[fmt]}"


def build_manifest(
    *, version: str, settings: dict[str, Any], source: dict[str, Any], shards: list[dict[str, Any]]
) -> dict[str, Any]:
    """Assemble a manifest dict from its parts (shards must be in index order)."""
    return {
        "kind": MANIFEST_KIND,
        "manifest_version": MANIFEST_VERSION,
        "trainspec_version": version,
        "settings": dict(settings),
        "source": dict(source),
        "records": sum(int(s["records"]) for s in shards),
        "bytes": sum(int(s["bytes"]) for s in shards),
        "shards": shards,
    }


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
    if manifest.get("manifest_version") != MANIFEST_VERSION:
        raise ManifestError(
            f"{path} has manifest_version {manifest.get('manifest_version')!r}; "
            f"this trainspec reads version {MANIFEST_VERSION}"
        )
    shards = manifest.get("shards")
    settings = manifest.get("settings")
    if not isinstance(shards, list) or not isinstance(settings, dict):
        raise ManifestError(f"{path} is malformed (no shards or settings)")
    if [s.get("index") for s in shards] != list(range(len(shards))) or len(shards) != settings.get(
        "num_shards"
    ):
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


def listing_sha256(files: list[dict[str, Any]]) -> str:
    """The sha256 of a ``files`` shard: over ``"<sha256>  <relpath>\\n"`` lines, sorted by path."""
    digest = hashlib.sha256()
    for entry in sorted(files, key=lambda e: e["path"]):
        digest.update(f"{entry['sha256']}  {entry['path']}\n".encode())
    return digest.hexdigest()


def _check_file(path: Path, size: int, sha: str | None) -> str | None:
    try:
        actual = path.stat().st_size
    except OSError:
        return f"{path} is missing"
    if actual != size:
        return f"{path} has {actual} bytes, manifest says {size}"
    if sha is not None and sha256_file(path) != sha:
        return f"{path} does not match its sha256"
    return None


def verify_shards(data_dir: Path, manifest: dict[str, Any], *, full: bool) -> str | None:
    """Check the shard files against the manifest; return the first problem, or None.

    Sizes are always checked (cheap); ``full`` also recomputes every sha256.
    """
    for shard in manifest["shards"]:
        base = data_dir / shard["path"]
        entries = shard.get("files")
        if entries is None:
            problem = _check_file(base, int(shard["bytes"]), shard["sha256"] if full else None)
        else:
            if not base.is_dir():
                return f"{base} is missing"
            problem = None
            for entry in entries:
                problem = _check_file(
                    base / entry["path"], int(entry["bytes"]), entry["sha256"] if full else None
                )
                if problem:
                    break
            if problem is None and full and listing_sha256(entries) != shard["sha256"]:
                problem = f"{base} listing does not match its sha256"
        if problem:
            return problem
    return None
