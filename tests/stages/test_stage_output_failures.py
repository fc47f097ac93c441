"""Failing output and crashes: disk full, no permission, killed runs, a source changing
mid-run. Nothing half-written is ever published and the previous output stays intact."""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from stage_testlib import (
    assert_no_output,
    expect_failure,
    leftovers,
    read_manifest,
    run_stage,
    shard_cli,
    stage_env,
)

from trainspec.stages import sink


def test_output_under_a_regular_file(jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Fails for root too: nothing can be created below a regular file.
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    out = blocker / "sub" / "dataset"
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
    )
    assert "cannot create output directory" in err and "Not a directory" in err


def test_output_is_a_file(jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.write_text("")
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
    )
    assert "not a directory" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_output_parent(jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
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
        str(parent / "d"),
    )
    assert "permission denied" in err.lower()


@pytest.mark.parametrize(
    ("assignment", "checksum"), [("contiguous", "none"), ("contiguous", "sha256"), ("round-robin", "none")]
)
def test_disk_full_leaves_old_output_and_no_temp(
    jsonl_source: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    assignment: str,
    checksum: str,
) -> None:
    out = tmp_path / "out"
    assert shard_cli("--source", str(jsonl_source), "--format", "jsonl", "--num-shards", "2", "--output", str(out)) == 0
    before = (out / "manifest.json").read_bytes()
    real_write = os.write
    written = [0]

    def filling_write(fd: int, data: bytes) -> int:
        if written[0] > 100:
            raise OSError(errno.ENOSPC, "No space left on device")
        written[0] += len(data)
        return real_write(fd, data)

    def filling_copy(*args: int) -> int:  # copy_file_range / sendfile: the disk fills at once
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sink.os, "write", filling_write)
    monkeypatch.setattr(sink.os, "copy_file_range", filling_copy)
    monkeypatch.setattr(sink.os, "sendfile", filling_copy)
    err = expect_failure(
        capsys,
        1,
        "--source",
        str(jsonl_source),
        "--format",
        "jsonl",
        "--num-shards",
        "3",
        "--assignment",
        assignment,
        "--mode",
        "copy",
        "--checksum",
        checksum,
        "--output",
        str(out),
    )
    assert "No space left on device" in err and "cannot write output" in err
    assert (out / "manifest.json").read_bytes() == before  # the previous output is untouched
    assert leftovers(out) == []


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of being killed
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_write_failure_in_a_real_process(tmp_path: Path) -> None:
    src = tmp_path / "big.txt"
    src.write_bytes(b"0123456789abcdef\n" * 4000)  # 68 KB, shards are 17 KB > the 4 KB limit
    out = tmp_path / "out"
    result = run_stage(
        ["--source", str(src), "--format", "text", "--num-shards", "4", "--output", str(out), "--mode", "copy"],
        preexec_fn=_limit_file_size,
    )
    assert result.returncode == 1, result.stderr
    assert "File too large" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists() and leftovers(out) == []


# Runs the stage in a fresh interpreter that SIGKILLs itself at the N-th call of one function
# (``module:attribute@N`` on the command line): a hard crash at a deterministic point.
_CRASHING_STAGE = """
import importlib, os, signal, sys
spec, _, nth = sys.argv[1].partition("@")
module_name, attr = spec.rsplit(":", 1)
owner, _, name = attr.rpartition(".")
target = importlib.import_module(module_name)
for part in filter(None, owner.split(".")):
    target = getattr(target, part)
original = getattr(target, name)
calls = []
def die_on_second_call(*args, **kwargs):
    calls.append(1)
    if len(calls) == int(nth):
        os.kill(os.getpid(), signal.SIGKILL)
    return original(*args, **kwargs)
setattr(target, name, die_on_second_call)
from trainspec.stages.shard import main
sys.exit(main(sys.argv[2:]))
"""

#: (mode, checksum, where to die): copying blocks, counting blocks (the source is 340 KB, two
#: 256 KiB reads), writing the manifest, and between the two renames of the publish.
_KILL_POINTS = [
    ("copy", "sha256", "trainspec.stages.sink:ShardWriter._write_all@2"),
    ("copy", "none", "trainspec.stages.sink:ShardWriter.copy_from@2"),
    ("copy", "none", "trainspec.stages.lines_scan:count_newlines@2"),
    ("index", "none", "trainspec.stages.lines_scan:count_newlines@2"),
    ("index", "sha256", "trainspec.stages.lines_scan:count_newlines@2"),
    ("index", "none", "trainspec.stages.manifest:dump_manifest@1"),
    ("index", "none", "trainspec.stages.output:os.rename@2"),
    ("copy", "none", "trainspec.stages.output:os.rename@2"),
]


@pytest.mark.parametrize(("mode", "checksum", "where"), _KILL_POINTS)
def test_killed_stage_never_leaves_a_lying_manifest(tmp_path: Path, mode: str, checksum: str, where: str) -> None:
    src = tmp_path / "src.txt"
    src.write_bytes(b"0123456789abcdef\n" * 20000)
    out = tmp_path / "out"
    small = tmp_path / "small.txt"
    small.write_bytes(b"a\nb\n")
    common = ["--format", "text", "--num-shards", "2", "--output", str(out), "--mode", mode]
    assert shard_cli("--source", str(small), *common) == 0
    before = (out / "manifest.json").read_bytes()
    args = ["--source", str(src), *common, "--checksum", checksum]
    crashed = subprocess.run(
        [sys.executable, "-c", _CRASHING_STAGE, where, *args],
        env=stage_env(),
        capture_output=True,
        check=False,
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    if "os.rename" in where:  # died with the old output renamed aside, the new one not in yet
        assert not out.exists()
    else:
        assert (out / "manifest.json").read_bytes() == before  # old output untouched and consistent
    assert leftovers(out)  # the crashed run's staging directory is still there ...

    rerun = run_stage(args)
    assert rerun.returncode == 0, rerun.stderr
    assert leftovers(out) == []  # ... and the next run removes it
    assert read_manifest(out)["records"] == 20000
    assert read_manifest(out)["settings"]["mode"] == mode


@pytest.mark.parametrize("mode", ["index", "copy"])
def test_source_changing_during_the_run_is_not_published(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    from trainspec.stages import line_plan

    src = tmp_path / "a.txt"
    src.write_text("1\n2\n3\n")
    original = line_plan.plan_contiguous

    def plan_then_append(*args: object, **kwargs: object) -> object:
        plan = original(*args, **kwargs)  # type: ignore[arg-type]
        with open(src, "a") as fh:  # a writer appends while the shards are being copied
            fh.write("4\n")
        return plan

    monkeypatch.setattr(line_plan, "plan_contiguous", plan_then_append)
    out = tmp_path / "out"
    err = expect_failure(
        capsys,
        1,
        "--source",
        str(src),
        "--format",
        "text",
        "--num-shards",
        "2",
        "--output",
        str(out),
        "--mode",
        mode,
    )
    assert "source changed while it was being sharded" in err
    assert_no_output(out)
