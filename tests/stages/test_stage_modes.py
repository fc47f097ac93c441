"""Index and copy mode of the stage: layouts, settings from flags and environment, checksums,
the fast paths (numpy count, in-kernel copies and their fallbacks) and flat memory."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from stage_testlib import (
    expect_failure,
    read_manifest,
    run_stage,
    shard_cli,
    shard_lines,
    stage_env,
    verify_manifest,
)

from trainspec.stages import fastio


def _ids(out: Path) -> list[list[int]]:
    return [[json.loads(r)["id"] for r in shard] for shard in shard_lines(out)]


def test_index_mode_is_the_default_and_writes_only_the_manifest(jsonl_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert shard_cli("--source", str(jsonl_source), "--format", "jsonl", "--num-shards", "4", "--output", str(out)) == 0
    verify_manifest(out)
    manifest = read_manifest(out)
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]
    assert manifest["settings"] == {
        "assignment": "contiguous",
        "balance": "records",
        "checksum": "none",
        "format": "jsonl",
        "mode": "index",
        "num_shards": 4,
        "seed": 0,
        "shard_by": "rank",
    }
    a, b = jsonl_source / "a.jsonl", jsonl_source / "b.jsonl"
    assert manifest["files"] == [
        {
            "path": str(p),
            "rel": p.name,
            "size": p.stat().st_size,
            "mtime_ns": p.stat().st_mtime_ns,
            "etag": None,
            "checksum": None,
        }
        for p in (a, b)
    ]
    assert _ids(out) == [list(range(7)), list(range(7, 13)), list(range(13, 19)), list(range(19, 25))]
    shards = manifest["shards"]
    assert [s["first_record"] for s in shards] == [0, 7, 13, 19]
    assert [s["records"] for s in shards] == [7, 6, 6, 6] and manifest["records"] == 25
    line = len(json.dumps({"id": 0}) + "\n")  # ids 0-9 are one byte shorter than 10-24
    assert shards[0]["ranges"] == [{"file": 0, "start": 0, "end": 7 * line, "records": 7}]
    # Shard 2 spans both files: the rest of a.jsonl, then the start of b.jsonl.
    assert [(r["file"], r["records"]) for r in shards[2]["ranges"]] == [(0, 2), (1, 4)]
    assert shards[3]["ranges"][-1]["end"] == b.stat().st_size  # b.jsonl has no final newline
    assert manifest["bytes"] == a.stat().st_size + b.stat().st_size


def test_environment_sets_mode_balance_and_checksum_and_flags_win(jsonl_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {
        "STORAGE_URI": str(jsonl_source),
        "TRAINSPEC_DATA_FORMAT": "jsonl",
        "TRAINSPEC_NUM_SHARDS": "3",
        "TRAINSPEC_DATA_DIR": str(out),
        "TRAINSPEC_SHARD_MODE": "copy",
        "TRAINSPEC_SHARD_BALANCE": "bytes",
        "TRAINSPEC_SHARD_CHECKSUM": "sha256",
    }
    assert shard_cli(env=env) == 0
    settings = read_manifest(out)["settings"]
    assert (settings["mode"], settings["balance"], settings["checksum"]) == ("copy", "bytes", "sha256")
    verify_manifest(out)
    assert shard_cli("--mode", "index", "--balance", "records", "--checksum", "none", env=env) == 0
    settings = read_manifest(out)["settings"]
    assert (settings["mode"], settings["balance"], settings["checksum"]) == ("index", "records", "none")


@pytest.mark.parametrize("mode", ["index", "copy"])
@pytest.mark.parametrize("checksum", ["sha256", "xxh3"])
def test_checksums_only_when_asked(jsonl_source: Path, tmp_path: Path, mode: str, checksum: str) -> None:
    if checksum == "xxh3":
        pytest.importorskip("xxhash")
    out = tmp_path / "out"
    args = ["--source", str(jsonl_source), "--format", "jsonl", "--num-shards", "3", "--output", str(out)]
    assert shard_cli(*args, "--mode", mode, "--checksum", checksum) == 0
    verify_manifest(out)  # recomputes every checksum with the named algorithm
    manifest = read_manifest(out)
    recorded = (
        [f["checksum"] for f in manifest["files"]] if mode == "index" else [s["checksum"] for s in manifest["shards"]]
    )
    assert all(c.startswith(checksum + ":") for c in recorded)
    if mode == "index" and checksum == "sha256":
        assert recorded[0] == "sha256:" + hashlib.sha256((jsonl_source / "a.jsonl").read_bytes()).hexdigest()


def test_xxh3_without_xxhash_is_one_line(
    jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "xxhash", None)  # import fails as if not installed
    out = tmp_path / "out"
    err = expect_failure(
        capsys,
        1,
        "--source",
        str(jsonl_source),
        "--format",
        "jsonl",
        "--num-shards",
        "2",
        "--output",
        str(out),
        "--checksum",
        "xxh3",
    )
    assert "needs the xxhash package" in err
    assert not out.exists()


def test_bytes_balance_counts_records_only_when_asked(tmp_path: Path) -> None:
    src = tmp_path / "d.txt"
    src.write_bytes(b"".join(b"r%d\n" % i + b"x" * (i % 13) + b"\n" for i in range(500)))
    out = tmp_path / "out"
    args = ["--source", str(src), "--format", "text", "--num-shards", "5", "--output", str(out), "--balance", "bytes"]
    assert shard_cli(*args) == 0
    manifest = read_manifest(out)
    assert manifest["records"] is None and all(s["records"] is None for s in manifest["shards"])
    sizes = [s["bytes"] for s in manifest["shards"]]
    assert max(sizes) - min(sizes) <= 2 * 16  # byte boundaries move at most a record forward
    assert shard_cli(*args, "--count-records") == 0  # a miss: counts were asked for
    manifest = read_manifest(out)
    assert manifest["records"] == 1000
    assert [s["records"] for s in manifest["shards"]] == [len(s) for s in shard_lines(out)]
    assert shard_cli(*args) == 0  # counted is fine without asking: a hit
    verify_manifest(out)


@pytest.mark.parametrize(("balance", "expected"), [("records", [[0, 1, 2], [3, 4], [5, 6]]), ("bytes", None)])
def test_index_files_by_reference(tmp_path: Path, balance: str, expected: list[list[int]] | None) -> None:
    src = tmp_path / "src"
    src.mkdir()
    sizes = [900, 500, 500, 100, 100, 0, 31]
    for i, size in enumerate(sizes):
        (src / f"f{i}.bin").write_bytes(b"x" * size)
    out = tmp_path / "out"
    assert (
        shard_cli(
            "--source", str(src), "--format", "files", "--num-shards", "3", "--output", str(out), "--balance", balance
        )
        == 0
    )
    verify_manifest(out)
    manifest = read_manifest(out)
    picked = [[r["file"] for r in s["ranges"]] for s in manifest["shards"]]
    assert sorted(i for p in picked for i in p) == list(range(7))
    for shard in manifest["shards"]:
        for r in shard["ranges"]:
            assert (r["start"], r["end"], r["records"]) == (0, sizes[r["file"]], 1)
    if expected is not None:
        assert picked == expected
    else:  # greedy by bytes, as copy mode's contiguous files always were
        assert sorted(s["bytes"] for s in manifest["shards"]) == [600, 631, 900]


def test_count_newlines_numpy_and_fallback_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    data = bytearray(b"a\nbb\n\n" * 1000 + b"tail")
    expected = bytes(data).count(b"\n")
    assert fastio.count_newlines(data, len(data)) == expected
    assert fastio.count_newlines(data, 5) == 2
    monkeypatch.setattr(fastio, "_counter", [])
    monkeypatch.setitem(sys.modules, "numpy", None)
    assert fastio.counter_name() == "bytes.count"
    assert fastio.count_newlines(data, len(data)) == expected
    assert fastio.count_newlines(memoryview(data), 5) == 2


def _fail_with(code: int, calls: list[str], name: str, after: int = 0) -> Any:
    real = getattr(os, name)
    done = [0]

    def fake(*args: int) -> int:
        calls.append(name)
        if done[0] >= after:
            raise OSError(code, os.strerror(code))
        n = real(*args)
        done[0] += n
        return n

    return fake


@pytest.mark.parametrize(
    ("broken", "code", "after", "used"),
    [
        ([], 0, 0, ["copy_file_range"]),
        (["copy_file_range"], errno.EXDEV, 0, ["copy_file_range", "sendfile"]),
        (["copy_file_range"], errno.ENOSYS, 0, ["copy_file_range", "sendfile"]),
        (["copy_file_range", "sendfile"], errno.EINVAL, 0, ["copy_file_range", "sendfile"]),
        # Part copied, then read/write for the rest (the second, short copy then uses sendfile).
        (["copy_file_range"], errno.EINVAL, 1, ["copy_file_range", "sendfile"]),
    ],
)
def test_copy_range_falls_back_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: list[str], code: int, after: int, used: list[str]
) -> None:
    data = os.urandom(3 << 20)
    (tmp_path / "src").write_bytes(data)
    calls: list[str] = []
    for name in ("copy_file_range", "sendfile"):
        if name in broken:
            monkeypatch.setattr(fastio.os, name, _fail_with(code, calls, name, after))
        else:
            real = getattr(os, name)
            monkeypatch.setattr(fastio.os, name, lambda *a, _r=real, _n=name: (calls.append(_n), _r(*a))[1])
    src = os.open(tmp_path / "src", os.O_RDONLY)
    dst = os.open(tmp_path / "dst", os.O_WRONLY | os.O_CREAT)
    try:
        os.write(dst, b"head")
        assert fastio.copy_range(src, dst, 1000, len(data) - 1000) == len(data) - 1000
        assert fastio.copy_range(src, dst, len(data) - 10, 100) == 10  # the source ends early
    finally:
        os.close(src)
        os.close(dst)
    assert (tmp_path / "dst").read_bytes() == b"head" + data[1000:] + data[-10:]
    assert sorted(set(calls)) == used


def test_copy_range_output_errors_propagate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastio.os, "copy_file_range", _fail_with(errno.ENOSPC, [], "copy_file_range"))
    (tmp_path / "src").write_bytes(b"x" * 100)
    src = os.open(tmp_path / "src", os.O_RDONLY)
    dst = os.open(tmp_path / "dst", os.O_WRONLY | os.O_CREAT)
    try:
        with pytest.raises(OSError, match="No space"):
            fastio.copy_range(src, dst, 0, 100)
    finally:
        os.close(src)
        os.close(dst)


@pytest.mark.parametrize(("checksum", "kernel"), [("none", True), ("sha256", False)])
def test_copy_mode_uses_the_kernel_unless_a_checksum_needs_the_bytes(
    jsonl_source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checksum: str, kernel: bool
) -> None:
    calls: list[int] = []
    real = os.copy_file_range
    monkeypatch.setattr(fastio.os, "copy_file_range", lambda *a: (calls.append(1), real(*a))[1])
    out = tmp_path / "out"
    assert (
        shard_cli(
            "--source",
            str(jsonl_source),
            "--format",
            "jsonl",
            "--num-shards",
            "3",
            "--output",
            str(out),
            "--mode",
            "copy",
            "--checksum",
            checksum,
        )
        == 0
    )
    verify_manifest(out)
    assert _ids(out) == [list(range(9)), list(range(9, 17)), list(range(17, 25))]
    assert bool(calls) is kernel


# Runs the stage as a child and prints the child's peak RSS in KiB (ru_maxrss of RUSAGE_CHILDREN).
_PEAK_RSS = """
import resource, subprocess, sys
subprocess.run([sys.executable, "-m", "trainspec.stages.shard", *sys.argv[1:]], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _peak_rss_kib(args: list[str]) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, *args], env=stage_env(), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


def _dataset(path: Path, mib: int) -> Path:
    line = (json.dumps({"text": "y" * 100}) + "\n").encode()
    block = line * ((1 << 20) // len(line))
    with open(path, "wb") as fh:
        fh.writelines(block for _ in range(mib))
    return path


@pytest.mark.parametrize(
    "flags",
    [
        ["--mode", "copy"],
        ["--mode", "copy", "--checksum", "sha256"],
        ["--mode", "index"],
        ["--mode", "index", "--balance", "bytes", "--count-records"],
    ],
)
def test_peak_rss_is_flat_as_the_input_grows(tmp_path: Path, flags: list[str]) -> None:
    peaks = []
    for mib in (16, 64):
        src = _dataset(tmp_path / f"d{mib}.jsonl", mib)
        out = tmp_path / f"out{mib}"
        peaks.append(
            _peak_rss_kib(
                [
                    "--source",
                    str(src),
                    "--format",
                    "jsonl",
                    "--num-shards",
                    "8",
                    "--output",
                    str(out),
                    "--no-fsync",
                    *flags,
                ]
            )
        )
        src.unlink()
    # 4x the input, at most 8 MiB more memory (buffers are bounded: 256 KiB per copying thread).
    assert peaks[1] - peaks[0] < 8 << 10, peaks
    assert peaks[1] < 100 << 10, peaks


def test_index_mode_on_a_subprocess_cache_hit(jsonl_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["--source", str(jsonl_source), "--format", "jsonl", "--num-shards", "2", "--output", str(out)]
    assert run_stage(args).returncode == 0
    again = run_stage([*args, "--checksum", "sha256"])  # a setting: a miss
    assert again.returncode == 0 and "re-sharding" in again.stdout and "settings changed" in again.stdout
    third = run_stage([*args, "--checksum", "sha256", "--verify"])
    assert third.returncode == 0 and "cache hit" in third.stdout


@pytest.mark.parametrize("mode", ["index", "copy"])
def test_validate_reads_every_record_with_bytes_balance_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    src = tmp_path / "d.jsonl"
    src.write_bytes(b'{"id": 1}\n{"id": \n{"id": 3}\n')
    err = expect_failure(
        capsys,
        1,
        "--source",
        str(src),
        "--format",
        "jsonl",
        "--num-shards",
        "2",
        "--output",
        str(tmp_path / "o"),
        "--mode",
        mode,
        "--balance",
        "bytes",
        "--validate",
    )
    assert "1 malformed jsonl record(s)" in err and "d.jsonl:2: invalid JSON" in err
