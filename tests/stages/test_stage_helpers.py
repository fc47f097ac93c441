"""In-pod helpers: rank detection, my_shards(), and the checkpoint functions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from stage_testlib import REPO, shard_cli

from trainspec.stages import (
    CheckpointError,
    ManifestError,
    ShardAssignmentError,
    checkpoint_dir,
    checkpoint_step,
    latest_checkpoint,
    list_checkpoints,
    my_shards,
    process_info,
    save_checkpoint,
)


def test_package_import_is_stdlib_only() -> None:
    code = (
        "import sys, trainspec.stages; "
        "heavy = ('pyarrow', 'fsspec', 'pydantic', 's3fs', 'yaml', 'jinja2'); "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in heavy); "
        "print(bad)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("env", "rank", "world", "node", "nodes"),
    [
        ({}, 0, 1, 0, 1),
        (
            {"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4", "GROUP_RANK": "1"},
            5,
            8,
            1,
            2,
        ),
        (
            {"PET_NODE_RANK": "2", "PET_NPROC_PER_NODE": "4", "PET_NNODES": "3", "LOCAL_RANK": "3"},
            11,
            12,
            2,
            3,
        ),
        (
            {
                "PET_NODE_RANK": "1",
                "PET_NPROC_PER_NODE": "auto",
                "PET_NNODES": "2",
                "RANK": "1",
                "WORLD_SIZE": "2",
            },
            1,
            2,
            1,
            2,
        ),
        ({"JAX_PROCESS_ID": "3", "JAX_NUM_PROCESSES": "4"}, 3, 4, 3, 4),
        (
            {
                "OMPI_COMM_WORLD_RANK": "6",
                "OMPI_COMM_WORLD_SIZE": "8",
                "OMPI_COMM_WORLD_LOCAL_RANK": "2",
                "OMPI_COMM_WORLD_LOCAL_SIZE": "4",
            },
            6,
            8,
            1,
            2,
        ),
    ],
)
def test_process_info(env: dict[str, str], rank: int, world: int, node: int, nodes: int) -> None:
    info = process_info(env)
    assert (info.rank, info.world_size, info.node_rank, info.num_nodes) == (rank, world, node, nodes)


@pytest.mark.parametrize("env", [{"RANK": "x", "WORLD_SIZE": "2"}, {"RANK": "2", "WORLD_SIZE": "2"}])
def test_process_info_errors(env: dict[str, str]) -> None:
    with pytest.raises(ShardAssignmentError):
        process_info(env)


@pytest.fixture
def sharded(tmp_path: Path) -> Path:
    src = tmp_path / "d.jsonl"
    src.write_text("".join(json.dumps({"id": i}) + "\n" for i in range(10)))
    out = tmp_path / "dataset"
    assert (
        shard_cli(
            "--source", str(src), "--format", "jsonl", "--num-shards", "4", "--output", str(out), "--mode", "copy"
        )
        == 0
    )
    return out


def test_my_shards_by_rank(sharded: Path) -> None:
    seen: list[int] = []
    for rank in range(4):
        env = {
            "TRAINSPEC_DATA_DIR": str(sharded),
            "RANK": str(rank),
            "WORLD_SIZE": "4",
            "TRAINSPEC_NUM_SHARDS": "4",
        }
        (path,) = my_shards(env=env)
        assert path == sharded / f"shards/shard-{rank:05d}-of-00004.jsonl" and path.is_file()
        seen.extend(json.loads(line)["id"] for line in path.read_text().splitlines())
    assert sorted(seen) == list(range(10))
    # torchrun-less Trainer variables give the same answer.
    env = {
        "TRAINSPEC_DATA_DIR": str(sharded),
        "PET_NODE_RANK": "1",
        "PET_NPROC_PER_NODE": "2",
        "PET_NNODES": "2",
        "LOCAL_RANK": "1",
    }
    assert my_shards(env=env)[0].name == "shard-00003-of-00004.jsonl"


def test_my_shards_by_node(tmp_path: Path) -> None:
    src = tmp_path / "d.txt"
    src.write_text("a\nb\n")
    out = tmp_path / "dataset"
    assert (
        shard_cli(
            "--source",
            str(src),
            "--format",
            "text",
            "--num-shards",
            "2",
            "--shard-by",
            "node",
            "--mode",
            "copy",
            "--output",
            str(out),
        )
        == 0
    )
    for local in range(3):  # every process of node 1 reads node 1's shard
        env = {"PET_NODE_RANK": "1", "PET_NPROC_PER_NODE": "3", "PET_NNODES": "2", "LOCAL_RANK": str(local)}
        assert my_shards(out, env=env)[0].name == "shard-00001-of-00002.txt"
    with pytest.raises(ShardAssignmentError, match=r"2 shards .* 3 nodes"):
        my_shards(out, env={"PET_NODE_RANK": "0", "PET_NPROC_PER_NODE": "1", "PET_NNODES": "3"})


def test_my_shards_mismatch_names_both_numbers(sharded: Path) -> None:
    with pytest.raises(ShardAssignmentError, match=r"4 shards .* world size|4 shards .* 3 processes"):
        my_shards(sharded, env={"RANK": "0", "WORLD_SIZE": "3"})
    with pytest.raises(ShardAssignmentError, match="TRAINSPEC_NUM_SHARDS is 8 but the manifest has 4"):
        my_shards(sharded, env={"RANK": "0", "WORLD_SIZE": "4", "TRAINSPEC_NUM_SHARDS": "8"})


def test_my_shards_files_format(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    for name, size in (("a.bin", 30), ("b.bin", 20), ("d/c.bin", 10)):
        (src / name).write_bytes(b"x" * size)
    out = tmp_path / "dataset"
    assert (
        shard_cli(
            "--source",
            str(src),
            "--format",
            "files",
            "--num-shards",
            "2",
            "--output",
            str(out),
            "--mode",
            "copy",
            "--balance",
            "bytes",
        )
        == 0
    )
    mine = [my_shards(out, env={"RANK": str(r), "WORLD_SIZE": "2"}) for r in range(2)]
    assert [[p.relative_to(out / "shards").as_posix() for p in m] for m in mine] == [
        ["shard-00000-of-00002/a.bin"],
        ["shard-00001-of-00002/b.bin", "shard-00001-of-00002/d/c.bin"],
    ]
    assert all(p.is_file() for m in mine for p in m)


def test_my_shards_without_manifest(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="has the dataset-initializer stage run"):
        my_shards(tmp_path, env={})


def test_checkpoint_dir_unset() -> None:
    with pytest.raises(CheckpointError, match="TRAINSPEC_CHECKPOINT_DIR"):
        checkpoint_dir({})


def test_save_and_latest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSPEC_CHECKPOINT_DIR", str(tmp_path / "ckpt"))
    monkeypatch.setenv("TRAINSPEC_CHECKPOINT_KEEP", "2")
    assert latest_checkpoint() is None
    for step in (10, 20, 30):
        with save_checkpoint(step) as tmp:
            assert tmp.name.startswith(".tmp-step-")
            (tmp / "sub").mkdir()
            (tmp / "sub" / "state.json").write_text(json.dumps({"step": step}))
    latest = latest_checkpoint()
    assert latest is not None and latest.name == "step-000000030" and checkpoint_step(latest) == 30
    assert json.loads((latest / "sub" / "state.json").read_text()) == {"step": 30}
    assert json.loads((latest / "COMPLETE").read_text()) == {"step": 30}
    assert [p.name for p in list_checkpoints()] == ["step-000000020", "step-000000030"]  # pruned to 2
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["step-000000020", "step-000000030"]


def test_failed_save_leaves_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ckpt"
    with save_checkpoint(5, root) as tmp:
        (tmp / "w").write_text("ok")

    def failing_save() -> None:
        with save_checkpoint(6, root) as tmp:
            (tmp / "w").write_text("half")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        failing_save()
    assert sorted(p.name for p in root.iterdir()) == ["step-000000005"]
    assert latest_checkpoint(root) == root / "step-000000005"


def test_partial_and_temp_checkpoints_are_ignored(tmp_path: Path) -> None:
    root = tmp_path / "ckpt"
    with save_checkpoint(5, root, keep=0) as tmp:
        (tmp / "w").write_text("5")
    (root / "step-000000009").mkdir()  # crashed after the rename, before the marker
    (root / ".tmp-step-000000012-abc").mkdir()  # crashed while writing
    (root / "step-notanumber").mkdir()
    assert latest_checkpoint(root) == root / "step-000000005"
    with save_checkpoint(15, root, keep=0) as tmp:
        (tmp / "w").write_text("15")
    names = sorted(p.name for p in root.iterdir())
    assert names == ["step-000000005", "step-000000015", "step-notanumber"]  # stale partials cleaned


def test_resaving_a_step_replaces_it(tmp_path: Path) -> None:
    root = tmp_path / "ckpt"
    for body in ("first", "second"):
        with save_checkpoint(7, root) as tmp:
            (tmp / "w").write_text(body)
    assert (root / "step-000000007" / "w").read_text() == "second"
    assert sorted(p.name for p in root.iterdir()) == ["step-000000007"]
