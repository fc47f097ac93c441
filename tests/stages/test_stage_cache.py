"""Cache hits, invalidation, --force and --verify, and atomic replacement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from stage_testlib import leftovers, read_manifest, run_stage, shard_cli


def _args(src: Path, out: Path, *extra: str, mode: str = "copy") -> list[str]:
    return [
        "--source",
        str(src),
        "--format",
        "jsonl",
        "--num-shards",
        "3",
        "--output",
        str(out),
        "--mode",
        mode,
        *extra,
    ]


def _mtimes(out: Path) -> dict[str, int]:
    return {str(p.relative_to(out)): p.stat().st_mtime_ns for p in sorted(out.rglob("*"))}


@pytest.mark.parametrize("mode", ["index", "copy"])
def test_second_run_is_a_cache_hit(jsonl_source: Path, tmp_path: Path, mode: str) -> None:
    out = tmp_path / "out"
    first = run_stage(_args(jsonl_source, out, mode=mode))
    assert first.returncode == 0, first.stderr
    before = _mtimes(out)
    inode = out.stat().st_ino
    second = run_stage(_args(jsonl_source, out, mode=mode))
    assert second.returncode == 0, second.stderr
    assert "cache hit" in second.stdout
    assert _mtimes(out) == before and out.stat().st_ino == inode  # nothing rewritten
    assert leftovers(out) == []


def test_env_variables_drive_the_stage_and_flags_win(jsonl_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {
        "STORAGE_URI": str(jsonl_source),
        "TRAINSPEC_DATA_FORMAT": "jsonl",
        "TRAINSPEC_NUM_SHARDS": "2",
        "TRAINSPEC_SHARD_BY": "node",
        "TRAINSPEC_SHARD_ASSIGNMENT": "hashed",
        "TRAINSPEC_SHARD_SEED": "9",
        "TRAINSPEC_DATA_DIR": str(out),
    }
    result = run_stage([], env=env)
    assert result.returncode == 0, result.stderr
    assert read_manifest(out)["settings"] == {
        "format": "jsonl",
        "num_shards": 2,
        "shard_by": "node",
        "assignment": "hashed",
        "seed": 9,
        "mode": "copy",  # the default for hashed
        "balance": "records",
        "checksum": "none",
    }
    result = run_stage(["--num-shards", "5", "--assignment", "round-robin"], env=env)
    assert result.returncode == 0, result.stderr
    assert "re-sharding" in result.stdout
    settings = read_manifest(out)["settings"]
    assert (settings["num_shards"], settings["assignment"], settings["seed"]) == (5, "round-robin", 9)


def test_force_reshards(jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert shard_cli(*_args(jsonl_source, out)) == 0
    inode = out.stat().st_ino
    capsys.readouterr()
    assert shard_cli(*_args(jsonl_source, out, "--force")) == 0
    assert "cache hit" not in capsys.readouterr().out
    assert out.stat().st_ino != inode  # a new directory was renamed in
    assert leftovers(out) == []


@pytest.mark.parametrize(
    ("mode", "change"),
    [
        *[("copy", c) for c in ("settings", "source", "shard-size", "missing-shard", "to-index", "checksum")],
        *[("index", c) for c in ("source", "to-copy", "balance", "checksum", "count-records")],
    ],
)
def test_changes_invalidate_the_cache(
    jsonl_source: Path, tmp_path: Path, mode: str, change: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    first = ["--balance", "bytes"] if change == "count-records" else []
    assert shard_cli(*_args(jsonl_source, out, *first, mode=mode)) == 0
    shard = out / read_manifest(out)["shards"][1].get("path", "none")
    extra: list[str] = []
    if change == "settings":
        extra = ["--assignment", "round-robin"]
    elif change in ("to-index", "to-copy"):
        mode = change[3:]
    elif change == "balance":
        extra = ["--balance", "bytes"]
    elif change == "checksum":
        extra = ["--checksum", "sha256"]
    elif change == "count-records":
        extra = [*first, "--count-records"]
    elif change == "source":
        with open(jsonl_source / "a.jsonl", "a") as fh:
            fh.write('{"id": 99}\n')
    elif change == "shard-size":
        shard.write_bytes(shard.read_bytes() + b"x\n")
    else:
        shard.unlink()
    capsys.readouterr()
    assert shard_cli(*_args(jsonl_source, out, *extra, mode=mode)) == 0
    output = capsys.readouterr().out
    assert "cache hit" not in output and "re-sharding" in output
    expected = None if change == "balance" else 26 if change == "source" else 25  # bytes: uncounted
    assert read_manifest(out)["records"] == expected
    assert read_manifest(out)["settings"]["mode"] == mode


def test_verify_detects_same_size_corruption(
    jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert shard_cli(*_args(jsonl_source, out, "--checksum", "sha256")) == 0
    shard = out / read_manifest(out)["shards"][0]["path"]
    data = bytearray(shard.read_bytes())
    data[2] ^= 1  # same size, different bytes
    shard.write_bytes(bytes(data))
    capsys.readouterr()
    assert shard_cli(*_args(jsonl_source, out, "--checksum", "sha256")) == 0
    assert "cache hit" in capsys.readouterr().out  # sizes only by default
    assert shard_cli(*_args(jsonl_source, out, "--checksum", "sha256", "--verify")) == 0
    assert "does not match its checksum" in capsys.readouterr().out
    assert shard.read_bytes() != bytes(data)


def test_stale_temp_dirs_of_killed_runs_are_removed(jsonl_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    stale = tmp_path / ".out.tmp-killed"
    (stale / "shards").mkdir(parents=True)
    (stale / "manifest.json").write_text("{}")  # a killed run never left this in `out` itself
    old = tmp_path / ".out.old-killed"
    old.mkdir()
    assert shard_cli(*_args(jsonl_source, out)) == 0
    assert leftovers(out) == []


def test_refuses_to_replace_foreign_directory(
    jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious.txt").write_text("user data")
    assert shard_cli(*_args(jsonl_source, out, "--force")) == 1
    assert "refusing to replace" in capsys.readouterr().err
    assert (out / "precious.txt").read_text() == "user data"


def test_empty_existing_output_dir_is_fine(jsonl_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert shard_cli(*_args(jsonl_source, out)) == 0
    assert read_manifest(out)["records"] == 25
    assert os.listdir(out / "shards")
