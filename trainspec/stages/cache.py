"""Cache check: is the existing output already what this run would produce?

A hit needs a valid trainspec manifest with the same trainspec version, settings, source
URI and source fingerprint (mode, balance and checksum are settings), record counts when
``--count-records`` asks for them, and in copy mode every shard file present with its
recorded size (``--verify`` also recomputes every recorded checksum). Including the version is deliberate: a newer
trainspec may lay shards out differently, and re-sharding is cheaper than a wrong run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainspec.stages.errors import ManifestError
from trainspec.stages.manifest import load_manifest, verify_shards


def cache_status(
    out_dir: Path,
    *,
    version: str,
    settings: dict[str, Any],
    source: dict[str, Any],
    full_verify: bool,
    need_records: bool = False,
) -> tuple[bool, str]:
    """Return ``(hit, reason)``; ``reason`` says why it is a miss (or ``"cache hit"``)."""
    if not out_dir.exists():
        return False, "no previous output"
    try:
        manifest = load_manifest(out_dir)
    except ManifestError as exc:
        return False, str(exc)
    if manifest.get("trainspec_version") != version:
        return False, f"made by trainspec {manifest.get('trainspec_version')}, this is {version}"
    if manifest.get("settings") != settings:
        return False, "settings changed"
    old = manifest.get("source") or {}
    if old.get("uri") != source["uri"] or old.get("fingerprint") != source["fingerprint"]:
        return False, "source changed"
    if need_records and manifest.get("records") is None:
        return False, "record counts asked for (--count-records)"
    problem = verify_shards(out_dir, manifest, full=full_verify)
    if problem:
        return False, problem
    return True, "cache hit"
