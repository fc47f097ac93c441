"""Shared helpers for the data-sharding stage tests (imported by the test modules)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trainspec.stages.shard import main

REPO = Path(__file__).resolve().parents[2]


def stage_env(**extra: str) -> dict[str, str]:
    """A minimal environment for a stage subprocess: nothing leaks in from the caller's shell."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO),
        "HOME": os.environ.get("HOME", "/"),
        "LANG": "C.UTF-8",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env.update(extra)
    return env


def run_stage(args: list[str], env: dict[str, str] | None = None, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``python -m trainspec.stages.shard`` in a subprocess (text output captured)."""
    return subprocess.run(
        [sys.executable, "-m", "trainspec.stages.shard", *args],
        env=stage_env(**(env or {})),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        **kwargs,
    )


def shard_cli(*args: str, env: dict[str, str] | None = None) -> int:
    """Run the stage in-process with an explicit (empty by default) environment."""
    return main(list(args), env=env or {})


def read_manifest(out: Path) -> dict[str, Any]:
    return json.loads((out / "manifest.json").read_text())


def _range_bytes(manifest: dict[str, Any], r: dict[str, Any]) -> bytes:
    """The bytes of one index-mode range, read from the source file it names (local files)."""
    entry = manifest["files"][r["file"]]
    with open(entry["path"], "rb") as fh:
        fh.seek(r["start"])
        return fh.read(r["end"] - r["start"])


def _records_of(data: bytes) -> list[bytes]:
    if not data:
        return []
    parts = data.split(b"\n")
    return parts[:-1] if data.endswith(b"\n") else parts


def shard_lines(out: Path) -> list[list[bytes]]:
    """Records per shard (lines without newlines), in shard order, in either mode."""
    manifest = read_manifest(out)
    result = []
    for shard in manifest["shards"]:
        if "ranges" in shard:
            records = [rec for r in shard["ranges"] for rec in _records_of(_range_bytes(manifest, r))]
        else:
            data = (out / shard["path"]).read_bytes()
            assert data == b"" or data.endswith(b"\n"), "every shard record ends with a newline"
            records = data.split(b"\n")[:-1] if data else []
        result.append(records)
    return result


def _checksum(data: bytes, algorithm: str) -> str:
    if algorithm == "xxh3":
        import xxhash

        return "xxh3:" + xxhash.xxh3_64(data).hexdigest()
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _check(recorded: str | None, data: bytes, algorithm: str) -> None:
    if algorithm == "none":
        assert recorded is None
    else:
        assert recorded == _checksum(data, algorithm)


def _verify_index(manifest: dict[str, Any]) -> None:
    files = manifest["files"]
    assert [f["rel"] for f in files] == sorted(f["rel"] for f in files)
    algorithm = manifest["settings"]["checksum"]
    for entry in files:
        if "://" in entry["path"]:
            continue
        st = os.stat(entry["path"])
        assert (st.st_size, st.st_mtime_ns, entry["etag"]) == (entry["size"], entry["mtime_ns"], None)
        _check(entry["checksum"], Path(entry["path"]).read_bytes(), algorithm)
    first = 0
    for shard in manifest["shards"]:
        assert (
            shard["bytes"] == sum(r["end"] - r["start"] if "start" in r else 0 for r in shard["ranges"])
            or manifest["settings"]["format"] == "parquet"
        )
        if shard["records"] is not None:
            assert shard["records"] == sum(r["records"] for r in shard["ranges"])
            assert shard["first_record"] == first
            first += shard["records"]


def verify_manifest(out: Path) -> None:
    """Recompute sizes, checksums and record counts of every shard and compare to the manifest."""
    manifest = read_manifest(out)
    assert manifest["kind"] == "trainspec.dev/shards" and manifest["manifest_version"] == 2
    assert [s["index"] for s in manifest["shards"]] == list(range(manifest["settings"]["num_shards"]))
    algorithm = manifest["settings"]["checksum"]
    if manifest["settings"]["mode"] == "index":
        assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]
        _verify_index(manifest)
    for shard in manifest["shards"] if manifest["settings"]["mode"] == "copy" else ():
        path = out / shard["path"]
        if "files" in shard:
            listing = []
            for entry in shard["files"]:
                data = (path / entry["path"]).read_bytes()
                assert len(data) == entry["bytes"]
                _check(entry["checksum"], data, algorithm)
                listing.append(f"{entry['checksum']}  {entry['path']}\n")
            _check(shard["checksum"], "".join(listing).encode(), algorithm)
            assert shard["records"] == len(shard["files"])
            assert sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()) == [
                e["path"] for e in shard["files"]
            ]
        else:
            data = path.read_bytes()
            assert len(data) == shard["bytes"]
            _check(shard["checksum"], data, algorithm)
    counts = [s["records"] for s in manifest["shards"]]
    assert manifest["records"] == (None if None in counts else sum(counts))
    assert manifest["bytes"] == sum(s["bytes"] for s in manifest["shards"])


def leftovers(out: Path) -> list[str]:
    """Temp/old directories next to ``out`` (there must be none after any run)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith((f".{out.name}.tmp-", f".{out.name}.old-")))


def expect_failure(capsys: pytest.CaptureFixture[str], code: int, *args: str, env: dict[str, str] | None = None) -> str:
    """Run in-process, expect exit ``code`` and exactly one error line on stderr; return it."""
    assert shard_cli(*args, env=env) == code
    err = capsys.readouterr().err.strip()
    assert err.startswith("trainspec-shard: error: ") and "\n" not in err, err
    return err


def assert_no_output(out: Path) -> None:
    """Nothing was published and no staging directory was left behind."""
    assert not out.exists()
    if out.parent.exists():
        assert leftovers(out) == []
