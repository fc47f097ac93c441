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


def run_stage(
    args: list[str], env: dict[str, str] | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
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


def shard_lines(out: Path) -> list[list[bytes]]:
    """Records per shard (lines without newlines), in shard order."""
    manifest = read_manifest(out)
    result = []
    for shard in manifest["shards"]:
        data = (out / shard["path"]).read_bytes()
        assert data == b"" or data.endswith(b"\n"), "every shard record ends with a newline"
        result.append(data.split(b"\n")[:-1] if data else [])
    return result


def verify_manifest(out: Path) -> None:
    """Recompute sizes, sha256s and record counts of every shard and compare to the manifest."""
    manifest = read_manifest(out)
    assert manifest["kind"] == "trainspec.dev/shards"
    assert [s["index"] for s in manifest["shards"]] == list(range(manifest["settings"]["num_shards"]))
    for shard in manifest["shards"]:
        path = out / shard["path"]
        if "files" in shard:
            listing = hashlib.sha256()
            for entry in shard["files"]:
                data = (path / entry["path"]).read_bytes()
                assert len(data) == entry["bytes"]
                assert hashlib.sha256(data).hexdigest() == entry["sha256"]
                listing.update(f"{entry['sha256']}  {entry['path']}\n".encode())
            assert listing.hexdigest() == shard["sha256"]
            assert shard["records"] == len(shard["files"])
            assert sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()) == [
                e["path"] for e in shard["files"]
            ]
        else:
            data = path.read_bytes()
            assert len(data) == shard["bytes"]
            assert hashlib.sha256(data).hexdigest() == shard["sha256"]
    assert manifest["records"] == sum(s["records"] for s in manifest["shards"])
    assert manifest["bytes"] == sum(s["bytes"] for s in manifest["shards"])


def leftovers(out: Path) -> list[str]:
    """Temp/old directories next to ``out`` (there must be none after any run)."""
    return sorted(
        p.name for p in out.parent.iterdir() if p.name.startswith((f".{out.name}.tmp-", f".{out.name}.old-"))
    )


def expect_failure(
    capsys: pytest.CaptureFixture[str], code: int, *args: str, env: dict[str, str] | None = None
) -> str:
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
