"""The stage on local jsonl / text / parquet / files sources, with every assignment."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from stage_testlib import read_manifest, shard_cli, shard_lines, verify_manifest

from trainspec.stages.assignment import hash_key, hashed_shard

ASSIGNMENTS = ["contiguous", "round-robin", "hashed"]


def _ids(records: list[bytes]) -> list[int]:
    return [json.loads(r)["id"] for r in records]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_jsonl_every_record_once(jsonl_source: Path, tmp_path: Path, assignment: str) -> None:
    out = tmp_path / "out"
    assert (
        shard_cli(
            "--source",
            str(jsonl_source),
            "--format",
            "jsonl",
            "--num-shards",
            "4",
            "--assignment",
            assignment,
            "--seed",
            "5",
            "--output",
            str(out),
        )
        == 0
    )
    verify_manifest(out)
    shards = shard_lines(out)
    assert sorted(i for s in shards for i in _ids(s)) == list(range(25))
    manifest = read_manifest(out)
    assert [s["records"] for s in manifest["shards"]] == [len(s) for s in shards]
    assert manifest["settings"] == {
        "format": "jsonl",
        "num_shards": 4,
        "shard_by": "rank",
        "assignment": assignment,
        "seed": 5,
        "mode": "index" if assignment == "contiguous" else "copy",
        "balance": "records",
        "checksum": "none",
    }
    if assignment == "contiguous":  # order kept, first T % N shards one bigger
        assert [_ids(s) for s in shards] == [
            list(range(7)),
            list(range(7, 13)),
            list(range(13, 19)),
            list(range(19, 25)),
        ]
    elif assignment == "round-robin":
        assert [_ids(s) for s in shards] == [list(range(k, 25, 4)) for k in range(4)]
    else:
        key = hash_key(5)
        for index, records in enumerate(shards):
            assert all(hashed_shard(r, key, 4) == index for r in records)


def test_contiguous_paths_and_manifest_layout(jsonl_source: Path, tmp_path: Path) -> None:
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
        )
        == 0
    )
    manifest = read_manifest(out)
    assert [s["path"] for s in manifest["shards"]] == [f"shards/shard-0000{i}-of-00003.jsonl" for i in range(3)]
    assert manifest["source"]["files"] == 2 and manifest["source"]["uri"] == str(jsonl_source)
    assert manifest["source"]["fingerprint"].startswith("sha256:")
    assert manifest["trainspec_version"]
    text = (out / "manifest.json").read_text()
    assert text == json.dumps(manifest, sort_keys=True, indent=2) + "\n"  # deterministic form


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_deterministic(jsonl_source: Path, tmp_path: Path, assignment: str) -> None:
    outs = []
    for name in ("one", "two"):
        out = tmp_path / name
        assert (
            shard_cli(
                "--source",
                str(jsonl_source),
                "--format",
                "jsonl",
                "--num-shards",
                "3",
                "--assignment",
                assignment,
                "--output",
                str(out),
            )
            == 0
        )
        outs.append(out)
    assert (outs[0] / "manifest.json").read_bytes() == (outs[1] / "manifest.json").read_bytes()


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_text_keeps_empty_lines_and_adds_final_newline(tmp_path: Path, assignment: str) -> None:
    src = tmp_path / "t.txt"
    src.write_bytes(b"alpha\n\nbeta\r\ngamma")  # empty line, CRLF kept as bytes, no final newline
    out = tmp_path / "out"
    assert (
        shard_cli(
            "--source",
            str(src),
            "--format",
            "text",
            "--num-shards",
            "2",
            "--assignment",
            assignment,
            "--output",
            str(out),
        )
        == 0
    )
    verify_manifest(out)
    assert Counter(r for s in shard_lines(out) for r in s) == Counter([b"alpha", b"", b"beta\r", b"gamma"])
    if assignment != "contiguous":  # copy mode
        assert read_manifest(out)["shards"][0]["path"].endswith(".txt")


def test_directory_walk_is_sorted_recursive_and_skips_hidden(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "b" / "c").mkdir(parents=True)
    (src / ".hidden").mkdir()
    (src / "z.txt").write_text("z\n")
    (src / "b" / "c" / "y.txt").write_text("y\n")
    (src / "b" / "x.txt").write_text("x\n")
    (src / "_SUCCESS").write_text("")
    (src / ".hidden" / "h.txt").write_text("h\n")
    (src / ".DS_Store").write_text("junk\n")
    out = tmp_path / "out"
    assert shard_cli("--source", str(src), "--format", "text", "--num-shards", "1", "--output", str(out)) == 0
    assert shard_lines(out) == [[b"y", b"x", b"z"]]  # b/c/y.txt < b/x.txt < z.txt


def test_glob_source(tmp_path: Path) -> None:
    for name, body in (("p1.jsonl", "1\n"), ("p2.jsonl", "2\n"), ("other.txt", "no\n")):
        (tmp_path / name).write_text(body)
    out = tmp_path / "out"
    assert (
        shard_cli(
            "--source",
            str(tmp_path / "p*.jsonl"),
            "--format",
            "jsonl",
            "--num-shards",
            "2",
            "--output",
            str(out),
        )
        == 0
    )
    assert shard_lines(out) == [[b"1"], [b"2"]]


def test_output_inside_source_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text("a\nb\n")
    out = tmp_path / "dataset"
    for _ in range(2):  # the second run must neither read the shards back nor change fingerprint
        assert shard_cli("--source", str(tmp_path), "--format", "text", "--num-shards", "2", "--output", str(out)) == 0
    assert shard_lines(out) == [[b"a"], [b"b"]]


def test_pvc_source(tmp_path: Path) -> None:
    root = tmp_path / "pvc"
    (root / "claim-1" / "data").mkdir(parents=True)
    (root / "claim-1" / "data" / "x.txt").write_text("1\n2\n3\n")
    out = tmp_path / "out"
    env = {"TRAINSPEC_PVC_ROOT": str(root)}
    assert (
        shard_cli(
            "--source",
            "pvc://claim-1/data",
            "--format",
            "text",
            "--num-shards",
            "3",
            "--output",
            str(out),
            env=env,
        )
        == 0
    )
    assert shard_lines(out) == [[b"1"], [b"2"], [b"3"]]
    assert read_manifest(out)["source"]["uri"] == "pvc://claim-1/data"


def _write_parquet(path: Path, start: int, rows: int, row_group: int) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {
            "id": pa.array(range(start, start + rows), type=pa.int64()),
            "name": [f"row-{i}" for i in range(start, start + rows)],
            "blob": [bytes([i % 256]) * 3 for i in range(rows)],
        }
    )
    pq.write_table(table, path, row_group_size=row_group, compression="zstd")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_parquet(tmp_path: Path, assignment: str) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    src = tmp_path / "src"
    src.mkdir()
    _write_parquet(src / "part-0.parquet", 0, 130, 40)
    _write_parquet(src / "part-1.parquet", 130, 70, 25)
    out = tmp_path / "out"
    assert (
        shard_cli(
            "--source",
            str(src),
            "--format",
            "parquet",
            "--num-shards",
            "3",
            "--assignment",
            assignment,
            "--mode",
            "copy",
            "--output",
            str(out),
        )
        == 0
    )
    verify_manifest(out)
    manifest = read_manifest(out)
    ids = []
    for shard in manifest["shards"]:
        pf = pq.ParquetFile(out / shard["path"])
        table = pf.read()
        assert table.num_rows == shard["records"]
        assert table.column_names == ["id", "name", "blob"]
        assert pf.metadata.row_group(0).column(0).compression == "ZSTD"  # codec kept
        ids.append(table["id"].to_pylist())
    assert sorted(i for s in ids for i in s) == list(range(200))
    if assignment == "contiguous":
        assert ids == [list(range(67)), list(range(67, 134)), list(range(134, 200))]
    if assignment == "round-robin":
        assert ids == [list(range(k, 200, 3)) for k in range(3)]


def test_parquet_schema_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"a": [1, 2]}), src / "1.parquet")
    pq.write_table(pa.table({"b": ["x"]}), src / "2.parquet")
    out = tmp_path / "out"
    assert shard_cli("--source", str(src), "--format", "parquet", "--num-shards", "1", "--output", str(out)) == 1
    assert "different parquet schema" in capsys.readouterr().err
    assert not out.exists()


def test_parquet_empty_shard_file_is_valid(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    _write_parquet(tmp_path / "one.parquet", 0, 2, 10)
    out = tmp_path / "out"
    assert (
        shard_cli(
            "--source",
            str(tmp_path / "one.parquet"),
            "--format",
            "parquet",
            "--num-shards",
            "3",
            "--allow-empty-shards",
            "--mode",
            "copy",
            "--output",
            str(out),
        )
        == 0
    )
    tables = [pq.read_table(out / s["path"]) for s in read_manifest(out)["shards"]]
    assert [t.num_rows for t in tables] == [1, 1, 0]
    assert tables[2].column_names == ["id", "name", "blob"]


def _make_files(src: Path) -> dict[str, bytes]:
    contents = {
        "big.bin": b"B" * 900,
        "mid/one.bin": b"1" * 500,
        "mid/two.bin": b"2" * 500,
        "small/a.bin": b"a" * 100,
        "small/b.bin": b"b" * 100,
        "small/c.bin": b"",
        "x/one.bin": b"same base name, other directory",
    }
    for rel, data in contents.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes(data)
    return contents


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_files(tmp_path: Path, assignment: str) -> None:
    src = tmp_path / "src"
    contents = _make_files(src)
    out = tmp_path / "out"
    assert (
        shard_cli(
            "--source",
            str(src),
            "--format",
            "files",
            "--num-shards",
            "3",
            "--assignment",
            assignment,
            "--mode",
            "copy",
            "--balance",
            "bytes",
            "--output",
            str(out),
        )
        == 0
    )
    verify_manifest(out)
    manifest = read_manifest(out)
    got: dict[str, bytes] = {}
    for shard in manifest["shards"]:
        assert shard["path"] == f"shards/shard-{shard['index']:05d}-of-00003"
        for entry in shard["files"]:
            assert entry["path"] not in got
            got[entry["path"]] = (out / shard["path"] / entry["path"]).read_bytes()
    assert got == contents
    if assignment == "contiguous":  # greedy by bytes, largest first, ties by path
        loads = sorted(s["bytes"] for s in manifest["shards"])
        assert loads == [600, 631, 900]
        assert [e["path"] for e in manifest["shards"][0]["files"]] == ["big.bin"]
