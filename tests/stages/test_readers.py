"""Readers over index-mode shards (manifest version 2) and copy-mode shards, on local files."""

from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from readers_testlib import (
    index_manifest,
    local_entry,
    logical_bytes,
    rank_env,
    write_manifest,
    write_source,
)

from trainspec.stages import (
    ManifestError,
    ShardReader,
    ShardRecords,
    SourceChangedError,
    my_shards,
    open_shard,
)

CONTENTS = [
    b"".join(json.dumps({"id": i}).encode() + b"\n" for i in range(7)),
    b"\n".join(json.dumps({"id": i}).encode() for i in range(7, 12)),  # no final newline
    b"",
    b'{"id": 12}\n\n{"id": 14}\n',  # an empty line is a record (text); the stage keeps it
]


def _setup(tmp_path: Path, contents: list[bytes], shards: int, **kw: object) -> Path:
    entries = write_source(tmp_path / "src", contents, checksum=kw.pop("checksum", None))  # type: ignore[arg-type]
    data = tmp_path / "dataset"
    write_manifest(data, index_manifest(entries, contents, shards, **kw))  # type: ignore[arg-type]
    return data


def _lines(reader: ShardReader) -> list[bytes]:
    reader.seek(0)
    return list(reader)


def _all_records(contents: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    for data in contents:
        out.extend(logical_bytes(data).split(b"\n")[:-1])  # not splitlines(): \r is no record end
    return out


def test_reader_is_a_binary_file_over_its_ranges(tmp_path: Path) -> None:
    data = _setup(tmp_path, CONTENTS, 1)
    expected = b"".join(logical_bytes(c) for c in CONTENTS)
    with open_shard(data, rank_env(data, 0, 1)) as reader:
        assert isinstance(reader, ShardReader) and reader.num_records == 15
        assert reader.read() == expected
        reader.seek(0)
        assert reader.readline() == b'{"id": 0}\n'
        assert reader.tell() == len(b'{"id": 0}\n')
        reader.seek(-3, io.SEEK_END)
        assert reader.read() == b"4}\n"
        reader.seek(5)
        buf = bytearray(20)
        assert reader.readinto(buf) == 20 and bytes(buf) == expected[5:25]
        reader.seek(0)
        assert b"".join(reader) == expected and all(line.endswith(b"\n") for line in _lines(reader))
        # The last line of part-001 has no newline in the file; the reader adds the stage's.
        reader.seek(0)
        assert b'{"id": 11}\n{"id": 12}\n' in reader.read()


def test_records_and_lines_resume_at_an_offset(tmp_path: Path) -> None:
    data = _setup(tmp_path, CONTENTS, 1)
    records = _all_records(CONTENTS)
    with open_shard(data, rank_env(data, 0, 1)) as reader:
        assert list(reader.records()) == records
        assert list(reader.records(start=9)) == records[9:]
        assert list(reader.lines(start=14)) == [r.decode() for r in records[14:]]
        assert list(reader.records(start=15)) == [] and list(reader.records(start=99)) == []
        with pytest.raises(ValueError, match="is negative"):
            reader.seek_record(-1)


# -- properties ------------------------------------------------------------------------------

_record = st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"."))
_file = st.tuples(st.lists(_record, max_size=8), st.booleans()).map(
    lambda t: b"\n".join(t[0]) + (b"\n" if t[1] and t[0] else b"")
)


@settings(max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=st.lists(_file, min_size=1, max_size=5), shards=st.integers(1, 6), count=st.booleans(), data=st.data())
def test_every_record_exactly_once_across_ranks_and_resume(
    contents: list[bytes], shards: int, count: bool, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = _setup(Path(tmp), contents, shards, count=count)
        got: list[bytes] = []
        for rank in range(shards):
            with open_shard(root, rank_env(root, rank, shards)) as reader:
                mine = list(reader.records())
                got.extend(mine)
                k = data.draw(st.integers(0, len(mine) + 1), label=f"resume offset of rank {rank}")
                assert list(reader.records(start=k)) == mine[k:]
        assert got == _all_records(contents)


@settings(max_examples=80, deadline=None, database=None)
@given(
    contents=st.lists(_file, min_size=1, max_size=4),
    ops=st.lists(st.tuples(st.integers(0, 2), st.integers(-5, 80), st.integers(0, 40)), max_size=12),
)
def test_seek_tell_read_match_the_copy_mode_bytes(contents: list[bytes], ops: list[tuple[int, int, int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = _setup(Path(tmp), contents, 1)
        oracle = io.BytesIO(b"".join(logical_bytes(c) for c in contents))
        with open_shard(root, rank_env(root, 0, 1)) as reader:
            for whence, offset, size in ops:
                if whence == io.SEEK_SET:
                    offset = abs(offset)
                base = (0, oracle.tell(), len(oracle.getbuffer()))[whence]
                if base + offset < 0:
                    with pytest.raises(OSError, match="negative seek position"):
                        reader.seek(offset, whence)
                    continue
                want = oracle.seek(offset, whence)
                assert reader.seek(offset, whence) == want
                assert reader.read(size) == oracle.read(size)
                assert reader.tell() == oracle.tell()
                assert reader.readline() == oracle.readline()


# -- change detection ------------------------------------------------------------------------


def test_appended_file_is_refused_naming_it(tmp_path: Path) -> None:
    data = _setup(tmp_path, CONTENTS, 2)
    target = tmp_path / "src" / "part-000.jsonl"
    with target.open("ab") as fh:
        fh.write(b'{"id": 99}\n')
    with pytest.raises(SourceChangedError, match=r"part-000\.jsonl changed .* bytes, the manifest says"):
        open_shard(data, rank_env(data, 0, 2))
    assert issubclass(SourceChangedError, ManifestError)


def test_touched_file_is_refused(tmp_path: Path) -> None:
    data = _setup(tmp_path, CONTENTS, 1)
    target = tmp_path / "src" / "part-001.jsonl"
    st_ = target.stat()
    os.utime(target, ns=(st_.st_atime_ns, st_.st_mtime_ns + 1_000_000_000))
    with pytest.raises(SourceChangedError, match=r"part-001\.jsonl changed .*mtime_ns"):
        open_shard(data, rank_env(data, 0, 1))


def test_checksum_is_compared_only_when_verifying(tmp_path: Path) -> None:
    data = _setup(tmp_path, CONTENTS, 1, checksum="sha256")
    target = tmp_path / "src" / "part-000.jsonl"
    st_ = target.stat()
    target.write_bytes(target.read_bytes().replace(b'"id": 3', b'"id": 4'))  # same size
    os.utime(target, ns=(st_.st_atime_ns, st_.st_mtime_ns))  # and the same mtime
    open_shard(data, rank_env(data, 0, 1)).close()
    with pytest.raises(SourceChangedError, match=r"part-000\.jsonl changed .*checksum is sha256:"):
        open_shard(data, rank_env(data, 0, 1), verify=True)


def test_missing_file_is_refused(tmp_path: Path) -> None:
    data = _setup(tmp_path, CONTENTS, 1)
    (tmp_path / "src" / "part-003.jsonl").unlink()
    with pytest.raises(SourceChangedError, match=r"part-003\.jsonl is gone"):
        open_shard(data, rank_env(data, 0, 1))


# -- my_shards and the other formats -----------------------------------------------------------


def test_my_shards_gives_readers_for_index_manifests(tmp_path: Path) -> None:
    data = _setup(tmp_path, CONTENTS, 3)
    env = rank_env(data, 1, 3)
    (reader,) = my_shards(env=env)
    assert isinstance(reader, ShardReader) and reader.index == 1 and reader.first_record == 5
    with reader:
        assert list(reader.records()) == _all_records(CONTENTS)[5:10]


def test_files_format_gives_one_reader_per_file(tmp_path: Path) -> None:
    data = _setup(tmp_path, [b"abc", b"defg"], 2)
    manifest = json.loads((data / "manifest.json").read_text())
    manifest["settings"]["format"] = "files"
    for shard, (f, size) in zip(manifest["shards"], [(0, 3), (1, 4)], strict=True):
        shard["ranges"] = [{"file": f, "start": 0, "end": size, "records": 1}]
    write_manifest(data, manifest)
    (reader,) = my_shards(env=rank_env(data, 1, 2))
    assert isinstance(reader, ShardReader) and reader.name == "part-001.jsonl"
    with reader:
        assert reader.read() == b"defg"  # a file's own bytes: no newline added


def test_parquet_gives_row_group_references(tmp_path: Path) -> None:
    data = _setup(tmp_path, [b"PAR1....PAR1"], 1)
    manifest = json.loads((data / "manifest.json").read_text())
    manifest["settings"]["format"] = "parquet"
    manifest["shards"][0]["ranges"] = [{"file": 0, "row_groups": [0, 2], "records": 30}]
    write_manifest(data, manifest)
    (groups,) = my_shards(env=rank_env(data, 0, 1))
    assert groups.row_groups == (0, 2) and groups.records == 30 and groups.rel == "part-000.jsonl"
    with groups.open() as fh:
        assert fh.read() == b"PAR1....PAR1"  # exact bytes: pyarrow reads the footer from the end
    (tmp_path / "src" / "part-000.jsonl").write_bytes(b"PAR1......PAR1")
    with pytest.raises(SourceChangedError, match=r"part-000\.jsonl changed"):
        groups.open()
    with pytest.raises(ManifestError, match="parquet"):
        open_shard(data, rank_env(data, 0, 1))


def test_open_shard_reads_copy_mode_manifests(tmp_path: Path, jsonl_source: Path) -> None:
    from stage_testlib import run_stage

    out = tmp_path / "out"
    result = run_stage(
        [
            "--source",
            str(jsonl_source),
            "--format",
            "jsonl",
            "--num-shards",
            "2",
            "--output",
            str(out),
            "--mode",
            "copy",
        ]
    )
    if result.returncode == 2 and "--mode" in result.stderr:  # a stage without modes writes copy manifests
        result = run_stage(
            ["--source", str(jsonl_source), "--format", "jsonl", "--num-shards", "2", "--output", str(out)]
        )
    assert result.returncode == 0, result.stderr
    ids = []
    for rank in range(2):
        (path,) = my_shards(out, rank_env(out, rank, 2))
        assert isinstance(path, Path)  # copy mode: paths, as before
        with open_shard(out, rank_env(out, rank, 2), verify=True) as reader:
            ids.extend(json.loads(r)["id"] for r in reader.records())
            assert list(reader.records(start=3)) == path.read_bytes().split(b"\n")[3:-1]
    assert ids == list(range(25))


# -- ShardRecords ----------------------------------------------------------------------------


@pytest.mark.parametrize("count", [True, False])
def test_shard_records_split_among_workers_exactly_once(tmp_path: Path, count: bool) -> None:
    contents = [b"".join(json.dumps({"id": i}).encode() + b"\n" for i in range(23))]
    data = _setup(tmp_path, contents, 1, count=count)
    env = rank_env(data, 0, 1)
    assert [r["id"] for r in ShardRecords(data, env=env)] == list(range(23))
    assert [r["id"] for r in ShardRecords(data, env=env, start=20)] == [20, 21, 22]
    seen = []
    for worker in range(4):
        info = SimpleNamespace(id=worker, num_workers=4)
        part = [r["id"] for r in ShardRecords(data, env=env, start=2, worker_info=lambda info=info: info)]
        assert part
        seen.extend(part)
    assert sorted(seen) == list(range(2, 23))
    assert list(ShardRecords(data, env=env, decode="bytes", start=22)) == [b'{"id": 22}']
    assert list(ShardRecords(data, env=env, decode="text", start=22)) == ['{"id": 22}']


def test_shard_records_pickles_without_open_files(tmp_path: Path) -> None:
    import pickle

    data = _setup(tmp_path, CONTENTS[:1], 1)
    records = ShardRecords(data, env=rank_env(data, 0, 1), decode="bytes")
    assert list(pickle.loads(pickle.dumps(records))) == list(records)


def test_the_stage_index_manifest_reads_as_its_copy_mode_shards(tmp_path: Path, jsonl_source: Path) -> None:
    """Against the stage itself: index-mode readers yield exactly the copy-mode shard files' bytes."""
    from stage_testlib import run_stage

    outs = {}
    for mode in ("index", "copy"):
        outs[mode] = tmp_path / mode
        result = run_stage(
            [
                "--source",
                str(jsonl_source),
                "--format",
                "jsonl",
                "--num-shards",
                "3",
                "--output",
                str(outs[mode]),
                "--mode",
                mode,
            ]
        )
        if result.returncode == 2 and "--mode" in result.stderr:
            pytest.skip("this stage has no --mode yet")
        assert result.returncode == 0, result.stderr
    for rank in range(3):
        with (
            open_shard(outs["index"], rank_env(outs["index"], rank, 3)) as index,
            open_shard(outs["copy"], rank_env(outs["copy"], rank, 3)) as copy,
        ):
            assert index.read() == copy.read()
            assert index.num_records == copy.num_records


def test_parquet_row_groups_read_through_pyarrow(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    src = tmp_path / "src"
    src.mkdir()
    path = src / "t.parquet"
    pq.write_table(pa.table({"id": list(range(30))}), path, row_group_size=10)
    manifest = index_manifest([local_entry(path, "t.parquet")], [b""], 1, fmt="parquet")
    manifest["shards"][0]["ranges"] = [{"file": 0, "row_groups": [0, 2], "records": 20}]
    write_manifest(tmp_path / "dataset", manifest)
    (groups,) = my_shards(env=rank_env(tmp_path / "dataset", 0, 1))
    with groups.open() as fh:
        table = pq.ParquetFile(fh).read_row_groups(list(groups.row_groups))
    assert table.column("id").to_pylist() == [*range(10), *range(20, 30)]
