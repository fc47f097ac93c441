"""Bad input and bad usage: one-line errors on stderr, exit code 1 or 2, no output written."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path

import pytest
from stage_testlib import (
    assert_no_output,
    expect_failure,
    read_manifest,
    run_stage,
    shard_cli,
)

from trainspec.stages import sources


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
    err = expect_failure(
        capsys, 1, "--source", source, "--format", "jsonl", "--num-shards", "2", "--output", str(out), env=env
    )
    assert expected in err
    assert_no_output(out)


def test_subprocess_error_is_one_line_without_traceback(tmp_path: Path) -> None:
    result = run_stage(
        [
            "--source",
            str(tmp_path / "missing"),
            "--format",
            "jsonl",
            "--num-shards",
            "2",
            "--output",
            str(tmp_path / "out"),
        ]
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "source not found" in result.stderr


def test_unreadable_source_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "a.jsonl"
    src.write_text('{"a": 1}\n')

    def denied(path: str, *args: object, **kwargs: object) -> object:
        raise PermissionError(errno.EACCES, "Permission denied", path)

    # Tests run as root, who can read anything: make the source module's open() refuse.
    monkeypatch.setattr(sources, "open", denied, raising=False)
    out = tmp_path / "out"
    err = expect_failure(
        capsys, 1, "--source", str(src), "--format", "jsonl", "--num-shards", "1", "--output", str(out)
    )
    assert "cannot read source file" in err and "Permission denied" in err
    assert_no_output(out)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files without read permission")
def test_unreadable_source_file_by_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "a.jsonl"
    src.write_text('{"a": 1}\n')
    src.chmod(0)
    err = expect_failure(
        capsys,
        1,
        "--source",
        str(src),
        "--format",
        "jsonl",
        "--num-shards",
        "1",
        "--output",
        str(tmp_path / "o"),
    )
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
    err = expect_failure(
        capsys,
        1,
        "--source",
        str(src),
        "--format",
        fmt,
        "--num-shards",
        "2",
        "--output",
        str(out),
        "--allow-empty-shards",
    )
    assert "empty" in err or "no input files" in err
    assert_no_output(out)


@pytest.mark.parametrize("fmt", ["jsonl", "files"])
@pytest.mark.parametrize("assignment", ["contiguous", "round-robin"])
def test_fewer_records_than_shards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, assignment: str
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    (src / "b.jsonl").write_text('{"a": 3}\n')
    out = tmp_path / "out"
    args = [
        "--source",
        str(src),
        "--format",
        fmt,
        "--num-shards",
        "5",
        "--assignment",
        assignment,
        "--output",
        str(out),
    ]
    err = expect_failure(capsys, 1, *args)
    assert "for 5 shards" in err and "--allow-empty-shards" in err
    assert_no_output(out)
    assert shard_cli(*args, "--allow-empty-shards") == 0
    assert [s["records"] for s in read_manifest(out)["shards"]] == (
        [1, 1, 1, 0, 0] if fmt == "jsonl" else [1, 1, 0, 0, 0]
    )


def test_hashed_empty_shard_needs_permission(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "a.txt"
    src.write_text("same\n" * 8)  # identical records hash to one shard
    out = tmp_path / "out"
    args = [
        "--source",
        str(src),
        "--format",
        "text",
        "--num-shards",
        "2",
        "--assignment",
        "hashed",
        "--output",
        str(out),
    ]
    assert "shards would be empty" in expect_failure(capsys, 1, *args)
    assert_no_output(out)
    assert shard_cli(*args, "--allow-empty-shards") == 0


@pytest.mark.parametrize("assignment", ["contiguous", "round-robin", "hashed"])
def test_validate_reports_bad_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str], assignment: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    good = [json.dumps({"i": i}) for i in range(20)]
    lines = [*good[:3], "{broken", *good[3:10], "", "[1, 2", *good[10:]]  # bad: lines 4, 12, 13
    (src / "a.jsonl").write_text("\n".join(good) + "\n")
    # then line 24 is not UTF-8 and lines 25-31 are bad JSON: 11 bad records in all
    (src / "b.jsonl").write_bytes("\n".join(lines).encode() + b"\n\xff\xfe\n" + b"{bad}\n" * 7)
    out = tmp_path / "out"
    err = expect_failure(
        capsys,
        1,
        "--source",
        str(src),
        "--format",
        "jsonl",
        "--num-shards",
        "2",
        "--assignment",
        assignment,
        "--output",
        str(out),
        "--validate",
    )
    assert err.count(f"{src / 'b.jsonl'}:") == 5  # the first five, with file and line
    assert f"{src / 'b.jsonl'}:4: invalid JSON" in err and f"{src / 'b.jsonl'}:12: empty line" in err
    assert "11 malformed jsonl record(s)" in err and "(and 6 more)" in err
    assert_no_output(out)
    # Without --validate the same data is sharded as opaque lines.
    assert shard_cli("--source", str(src), "--format", "jsonl", "--num-shards", "2", "--output", str(out)) == 0


def test_validate_accepts_good_data(jsonl_source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert (
        shard_cli(
            "--source",
            str(jsonl_source),
            "--format",
            "jsonl",
            "--num-shards",
            "2",
            "--output",
            str(out),
            "--validate",
        )
        == 0
    )
    assert read_manifest(out)["records"] == 25


def test_validate_text_requires_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "a.txt"
    src.write_bytes(b"fine\n\xc3\x28\nfine\n")
    err = expect_failure(
        capsys,
        1,
        "--source",
        str(src),
        "--format",
        "text",
        "--num-shards",
        "1",
        "--output",
        str(tmp_path / "o"),
        "--validate",
    )
    assert f"{src}:2: not valid UTF-8" in err


def test_not_a_parquet_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyarrow")
    src = tmp_path / "x.parquet"
    src.write_text("not parquet")
    err = expect_failure(
        capsys,
        1,
        "--source",
        str(src),
        "--format",
        "parquet",
        "--num-shards",
        "1",
        "--output",
        str(tmp_path / "o"),
    )
    assert "not a readable parquet file" in err


@pytest.mark.parametrize("module", ["fsspec", "pyarrow"])
def test_missing_data_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
    monkeypatch.setitem(sys.modules, f"{module}.parquet", None)
    (tmp_path / "x.parquet").write_text("x")
    source = "s3://bucket/data" if module == "fsspec" else str(tmp_path / "x.parquet")
    err = expect_failure(
        capsys,
        1,
        "--source",
        source,
        "--format",
        "parquet",
        "--num-shards",
        "1",
        "--output",
        str(tmp_path / "o"),
    )
    assert "pip install 'trainspec[data]'" in err


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
        (["--mode", "mmap"], {}, "unknown mode 'mmap' (from --mode)"),
        ([], {"TRAINSPEC_SHARD_MODE": "links"}, "unknown mode 'links' (from TRAINSPEC_SHARD_MODE)"),
        (["--balance", "lines"], {}, "unknown balance 'lines' (from --balance)"),
        ([], {"TRAINSPEC_SHARD_BALANCE": "size"}, "unknown balance 'size' (from TRAINSPEC_SHARD_BALANCE)"),
        (["--checksum", "md5"], {}, "unknown checksum 'md5' (from --checksum)"),
        ([], {"TRAINSPEC_SHARD_CHECKSUM": "crc"}, "unknown checksum 'crc' (from TRAINSPEC_SHARD_CHECKSUM)"),
        (["--mode", "index", "--assignment", "hashed"], {}, "index mode needs contiguous assignment, not hashed"),
        ([], {"TRAINSPEC_SHARD_MODE": "index", "TRAINSPEC_SHARD_ASSIGNMENT": "round-robin"}, "use --mode copy"),
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], env: dict[str, str], expected: str
) -> None:
    base = {
        "STORAGE_URI": str(tmp_path),
        "TRAINSPEC_DATA_FORMAT": "jsonl",
        "TRAINSPEC_NUM_SHARDS": "2",
        "TRAINSPEC_DATA_DIR": str(tmp_path / "out"),
    }
    err = expect_failure(capsys, 2, *args, env={**base, **env})
    assert expected in err


@pytest.mark.parametrize("missing", ["STORAGE_URI", "TRAINSPEC_DATA_FORMAT", "TRAINSPEC_NUM_SHARDS"])
def test_required_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str], missing: str) -> None:
    env = {"STORAGE_URI": str(tmp_path), "TRAINSPEC_DATA_FORMAT": "jsonl", "TRAINSPEC_NUM_SHARDS": "2"}
    del env[missing]
    assert missing in expect_failure(capsys, 2, env=env)


def test_help_names_every_env_variable(capsys: pytest.CaptureFixture[str]) -> None:
    assert shard_cli("--help") == 0
    text = capsys.readouterr().out
    for var in (
        "STORAGE_URI",
        "TRAINSPEC_DATA_FORMAT",
        "TRAINSPEC_NUM_SHARDS",
        "TRAINSPEC_SHARD_BY",
        "TRAINSPEC_SHARD_ASSIGNMENT",
        "TRAINSPEC_SHARD_SEED",
        "TRAINSPEC_DATA_DIR",
        "TRAINSPEC_SHARD_MODE",
        "TRAINSPEC_SHARD_BALANCE",
        "TRAINSPEC_SHARD_CHECKSUM",
    ):
        assert f"env {var}" in text.replace("\n", " ").replace("  ", " ") or var in text
    for flag in (
        "--validate",
        "--allow-empty-shards",
        "--force",
        "--verify",
        "--mode",
        "--balance",
        "--checksum",
        "--count-records",
    ):
        assert flag in text
