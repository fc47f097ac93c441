"""Bad input and failing output: one-line errors, exit codes 1/2, nothing half-written."""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import sys
from pathlib import Path

import pytest
from stage_testlib import leftovers, read_manifest, run_stage, shard_cli

from trainspec.stages import sink, sources


def _fails(capsys: pytest.CaptureFixture[str], code: int, *args: str, env: dict[str, str] | None = None) -> str:
    assert shard_cli(*args, env=env) == code
    err = capsys.readouterr().err.strip()
    assert err.startswith("trainspec-shard: error: ") and "\n" not in err, err
    return err


def _no_output(out: Path) -> None:
    assert not out.exists()
    assert leftovers(out) == [] if out.parent.exists() else True


@pytest.mark.parametrize("case", ["missing", "pvc", "glob", "empty-dir"])
def test_source_not_found(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    out = tmp_path / "out"
    (tmp_path / "empty").mkdir()
    source, env, expected = {
        "missing": (str(tmp_path / "nope.jsonl"), {}, "source not found"),
        "pvc": ("pvc://claim/data", {"TRAINSPEC_PVC_ROOT": str(tmp_path)}, "looked at"),
        "glob": (str(tmp_path / "*.jsonl"), {}, "no input files"),
        "empty-dir": (str(tmp_path / "empty"), {}, "no input files"),
    }[case]
    err = _fails(capsys, 1, "--source", source, "--format", "jsonl", "--num-shards", "2", "--output", str(out), env=env)
    assert expected in err
    _no_output(out)


def test_subprocess_error_is_one_line_without_traceback(tmp_path: Path) -> None:
    result = run_stage(["--source", str(tmp_path / "missing"), "--format", "jsonl", "--num-shards", "2",
                        "--output", str(tmp_path / "out")])
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "source not found" in result.stderr


def test_unreadable_source_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "a.jsonl"
    src.write_text('{"a": 1}\n')

    def denied(path: str, *args: object, **kwargs: object) -> object:
        raise PermissionError(errno.EACCES, "Permission denied", path)

    # Tests run as root, who can read anything: make the source module's open() refuse.
    monkeypatch.setattr(sources, "open", denied, raising=False)
    out = tmp_path / "out"
    err = _fails(capsys, 1, "--source", str(src), "--format", "jsonl", "--num-shards", "1", "--output", str(out))
    assert "cannot read source file" in err and "Permission denied" in err
    _no_output(out)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files without read permission")
def test_unreadable_source_file_by_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "a.jsonl"
    src.write_text('{"a": 1}\n')
    src.chmod(0)
    err = _fails(capsys, 1, "--source", str(src), "--format", "jsonl", "--num-shards", "1", "--output", str(tmp_path / "o"))
    assert "permission denied" in err.lower()


@pytest.mark.parametrize("fmt", ["jsonl", "text", "parquet", "files"])
def test_empty_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    if fmt == "parquet":
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        pq.write_table(pa.table({"a": pa.array([], type=pa.int64())}), src / "e.parquet")
    elif fmt != "files":
        (src / "e.txt").write_bytes(b"")
    out = tmp_path / "out"
    err = _fails(capsys, 1, "--source", str(src), "--format", fmt, "--num-shards", "2", "--output", str(out),
                 "--allow-empty-shards")
    assert "empty" in err or "no input files" in err
    _no_output(out)


@pytest.mark.parametrize("fmt", ["jsonl", "files"])
@pytest.mark.parametrize("assignment", ["contiguous", "round-robin"])
def test_fewer_records_than_shards(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, assignment: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    (src / "b.jsonl").write_text('{"a": 3}\n')
    out = tmp_path / "out"
    args = ["--source", str(src), "--format", fmt, "--num-shards", "5", "--assignment", assignment, "--output", str(out)]
    err = _fails(capsys, 1, *args)
    assert "for 5 shards" in err and "--allow-empty-shards" in err
    _no_output(out)
    assert shard_cli(*args, "--allow-empty-shards") == 0
    assert [s["records"] for s in read_manifest(out)["shards"]] == ([1, 1, 1, 0, 0] if fmt == "jsonl" else [1, 1, 0, 0, 0])


def test_hashed_empty_shard_needs_permission(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "a.txt"
    src.write_text("same\n" * 8)  # identical records hash to one shard
    out = tmp_path / "out"
    args = ["--source", str(src), "--format", "text", "--num-shards", "2", "--assignment", "hashed", "--output", str(out)]
    assert "shards would be empty" in _fails(capsys, 1, *args)
    _no_output(out)
    assert shard_cli(*args, "--allow-empty-shards") == 0


@pytest.mark.parametrize("assignment", ["contiguous", "round-robin", "hashed"])
def test_validate_reports_bad_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str], assignment: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    good = [json.dumps({"i": i}) for i in range(20)]
    lines = good[:3] + ["{broken"] + good[3:10] + ["", "[1, 2"] + good[10:]  # bad: lines 4, 12, 13
    (src / "a.jsonl").write_text("\n".join(good) + "\n")
    # then line 24 is not UTF-8 and lines 25-31 are bad JSON: 11 bad records in all
    (src / "b.jsonl").write_bytes("\n".join(lines).encode() + b"\n\xff\xfe\n" + b"{bad}\n" * 7)
    out = tmp_path / "out"
    err = _fails(capsys, 1, "--source", str(src), "--format", "jsonl", "--num-shards", "2", "--assignment", assignment,
                 "--output", str(out), "--validate")
    assert err.count(f"{src / 'b.jsonl'}:") == 5  # the first five, with file and line
    assert f"{src / 'b.jsonl'}:4: invalid JSON" in err and f"{src / 'b.jsonl'}:12: empty line" in err
    assert "11 malformed jsonl record(s)" in err and "(and 6 more)" in err
    _no_output(out)
    # Without --validate the same data is sharded as opaque lines.
    assert shard_cli("--source", str(src), "--format", "jsonl", "--num-shards", "2", "--output", str(out)) == 0


def test_validate_accepts_good_data(jsonl_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert shard_cli("--source", str(jsonl_source), "--format", "jsonl", "--num-shards", "2", "--output", str(out), "--validate") == 0
    assert read_manifest(out)["records"] == 25


def test_validate_text_requires_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "a.txt"
    src.write_bytes(b"fine\n\xc3\x28\nfine\n")
    err = _fails(capsys, 1, "--source", str(src), "--format", "text", "--num-shards", "1", "--output", str(tmp_path / "o"), "--validate")
    assert f"{src}:2: not valid UTF-8" in err


def test_not_a_parquet_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyarrow")
    src = tmp_path / "x.parquet"
    src.write_text("not parquet")
    err = _fails(capsys, 1, "--source", str(src), "--format", "parquet", "--num-shards", "1", "--output", str(tmp_path / "o"))
    assert "not a readable parquet file" in err


@pytest.mark.parametrize("module", ["fsspec", "pyarrow"])
def test_missing_data_extra(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, f"{module}.parquet", None)
    (tmp_path / "x.parquet").write_text("x")
    source = "s3://bucket/data" if module == "fsspec" else str(tmp_path / "x.parquet")
    err = _fails(capsys, 1, "--source", source, "--format", "parquet", "--num-shards", "1", "--output", str(tmp_path / "o"))
    assert "pip install 'trainspec[data]'" in err


def test_output_under_a_regular_file(jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Fails for root too: nothing can be created below a regular file.
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    out = blocker / "sub" / "dataset"
    err = _fails(capsys, 1, "--source", str(jsonl_source), "--format", "jsonl", "--num-shards", "2", "--output", str(out))
    assert "cannot create output directory" in err and "Not a directory" in err


def test_output_is_a_file(jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.write_text("")
    err = _fails(capsys, 1, "--source", str(jsonl_source), "--format", "jsonl", "--num-shards", "2", "--output", str(out))
    assert "not a directory" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_output_parent(jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    err = _fails(capsys, 1, "--source", str(jsonl_source), "--format", "jsonl", "--num-shards", "2", "--output", str(parent / "d"))
    assert "permission denied" in err.lower()


@pytest.mark.parametrize("assignment", ["contiguous", "round-robin"])
def test_disk_full_leaves_old_output_and_no_temp(jsonl_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch, assignment: str) -> None:
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

    monkeypatch.setattr(sink.os, "write", filling_write)
    err = _fails(capsys, 1, "--source", str(jsonl_source), "--format", "jsonl", "--num-shards", "3", "--assignment", assignment,
                 "--output", str(out))
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
    result = run_stage(["--source", str(src), "--format", "text", "--num-shards", "4", "--output", str(out)],
                       preexec_fn=_limit_file_size)
    assert result.returncode == 1, result.stderr
    assert "File too large" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists() and leftovers(out) == []


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--format", "csv"], {}, "unknown format 'csv' (from --format)"),
        ([], {"TRAINSPEC_DATA_FORMAT": "xml"}, "unknown format 'xml' (from TRAINSPEC_DATA_FORMAT)"),
        (["--assignment", "random"], {}, "unknown assignment"),
        (["--shard-by", "pod"], {}, "unknown shard by"),
        (["--num-shards", "0"], {}, "must be >= 1"),
        ([], {"TRAINSPEC_NUM_SHARDS": "many"}, "must be an integer"),
        (["--seed", "x"], {}, "seed must be an integer"),
        (["--bogus"], {}, "unrecognized arguments"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], env: dict[str, str], expected: str) -> None:
    base = {"STORAGE_URI": str(tmp_path), "TRAINSPEC_DATA_FORMAT": "jsonl", "TRAINSPEC_NUM_SHARDS": "2",
            "TRAINSPEC_DATA_DIR": str(tmp_path / "out")}
    err = _fails(capsys, 2, *args, env={**base, **env})
    assert expected in err


@pytest.mark.parametrize("missing", ["STORAGE_URI", "TRAINSPEC_DATA_FORMAT", "TRAINSPEC_NUM_SHARDS"])
def test_required_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str], missing: str) -> None:
    env = {"STORAGE_URI": str(tmp_path), "TRAINSPEC_DATA_FORMAT": "jsonl", "TRAINSPEC_NUM_SHARDS": "2"}
    del env[missing]
    assert missing in _fails(capsys, 2, env=env)


def test_help_names_every_env_variable(capsys: pytest.CaptureFixture[str]) -> None:
    assert shard_cli("--help") == 0
    text = capsys.readouterr().out
    for var in ("STORAGE_URI", "TRAINSPEC_DATA_FORMAT", "TRAINSPEC_NUM_SHARDS", "TRAINSPEC_SHARD_BY",
                "TRAINSPEC_SHARD_ASSIGNMENT", "TRAINSPEC_SHARD_SEED", "TRAINSPEC_DATA_DIR"):
        assert f"env {var}" in text.replace("\n", " ").replace("  ", " ") or var in text
    for flag in ("--validate", "--allow-empty-shards", "--force", "--verify"):
        assert flag in text
