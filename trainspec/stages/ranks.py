"""Which process am I, and which shard is mine? (In-pod helper; standard library only.)

Rank variables, first match wins:

* global rank: ``RANK`` (torchrun, per process) -> ``PET_NODE_RANK * PET_NPROC_PER_NODE +
  LOCAL_RANK`` (Kubeflow Trainer) -> ``JAX_PROCESS_ID`` -> ``OMPI_COMM_WORLD_RANK`` -> 0
* world size: ``WORLD_SIZE`` -> ``PET_NNODES * PET_NPROC_PER_NODE`` -> ``JAX_NUM_PROCESSES``
  -> ``OMPI_COMM_WORLD_SIZE`` -> 1
* local rank: ``LOCAL_RANK`` -> ``OMPI_COMM_WORLD_LOCAL_RANK`` -> 0
* processes per node: ``PET_NPROC_PER_NODE`` (when numeric) -> ``LOCAL_WORLD_SIZE`` ->
  ``OMPI_COMM_WORLD_LOCAL_SIZE`` -> 1
* node rank: ``PET_NODE_RANK`` -> ``GROUP_RANK`` -> global rank // processes per node
* nodes: ``PET_NNODES`` -> ceil(world size / processes per node)

With no variables at all this is a single process: rank 0 of 1.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Names of the in-pod contract and of Trainer's torch env, shared with the compiler (stdlib only).
from trainspec.dsl.kube_facts import (
    DATA_DIR_ENV,
    JAX_NUM_PROCESSES_ENV,
    JAX_PROCESS_ID_ENV,
    NUM_SHARDS_ENV,
    PET_NNODES_ENV,
    PET_NODE_RANK_ENV,
    PET_NPROC_PER_NODE_ENV,
)
from trainspec.stages.errors import ManifestError, ShardAssignmentError
from trainspec.stages.manifest import load_manifest

if TYPE_CHECKING:  # the readers load only when a manifest needs them
    from trainspec.stages.readers import RowGroups, ShardReader


@dataclass(frozen=True)
class ProcessInfo:
    """This process's place in the job."""

    rank: int
    world_size: int
    local_rank: int
    node_rank: int
    num_nodes: int
    procs_per_node: int


def _get(env: Mapping[str, str], name: str, *, numeric_only: bool = False) -> int | None:
    value = env.get(name, "").strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        if numeric_only:  # e.g. PET_NPROC_PER_NODE=auto: not usable here, look further
            return None
        raise ShardAssignmentError(f"environment variable {name}={value!r} is not an integer") from None


def _first(*values: int | None) -> int | None:
    return next((v for v in values if v is not None), None)


def process_info(env: Mapping[str, str] | None = None) -> ProcessInfo:
    """Read rank, world size, node rank, etc. from the launcher's environment variables."""
    env = os.environ if env is None else env
    node = _get(env, PET_NODE_RANK_ENV)
    nproc = _get(env, PET_NPROC_PER_NODE_ENV, numeric_only=True)
    nnodes = _get(env, PET_NNODES_ENV, numeric_only=True)
    local = _first(_get(env, "LOCAL_RANK"), _get(env, "OMPI_COMM_WORLD_LOCAL_RANK")) or 0
    pet_rank = node * nproc + local if node is not None and nproc is not None else None
    rank = _first(_get(env, "RANK"), pet_rank, _get(env, JAX_PROCESS_ID_ENV), _get(env, "OMPI_COMM_WORLD_RANK"), 0)
    pet_world = nnodes * nproc if nnodes is not None and nproc is not None else None
    world = _first(
        _get(env, "WORLD_SIZE"),
        pet_world,
        _get(env, JAX_NUM_PROCESSES_ENV),
        _get(env, "OMPI_COMM_WORLD_SIZE"),
        1,
    )
    per_node = _first(nproc, _get(env, "LOCAL_WORLD_SIZE"), _get(env, "OMPI_COMM_WORLD_LOCAL_SIZE"), 1)
    assert rank is not None and world is not None and per_node is not None
    if world < 1 or per_node < 1:
        raise ShardAssignmentError(f"world size ({world}) and processes per node ({per_node}) must be >= 1")
    if not 0 <= rank < world:
        raise ShardAssignmentError(f"rank {rank} is outside the world size {world}")
    node_rank = _first(node, _get(env, "GROUP_RANK"), rank // per_node)
    num_nodes = _first(nnodes, -(-world // per_node))
    assert node_rank is not None and num_nodes is not None
    return ProcessInfo(rank, world, local, node_rank, num_nodes, per_node)


def my_shard_index(manifest: Mapping[str, Any], env: Mapping[str, str] | None = None) -> int:
    """The index of this process's shard; raises :class:`ShardAssignmentError` on a mismatch."""
    env = os.environ if env is None else env
    info = process_info(env)
    settings = manifest["settings"]
    shards = int(settings["num_shards"])
    expected = env.get(NUM_SHARDS_ENV, "").strip()
    if expected and expected != str(shards):
        raise ShardAssignmentError(
            f"TRAINSPEC_NUM_SHARDS is {expected} but the manifest has {shards} shards; "
            "the dataset was sharded for a different job (re-run the initializer)"
        )
    if settings.get("shard_by") == "node":
        index, count, what = info.node_rank, info.num_nodes, "nodes"
    else:
        index, count, what = info.rank, info.world_size, "processes (world size)"
    if count != shards:
        raise ShardAssignmentError(
            f"the manifest has {shards} shards (shard_by={settings.get('shard_by')}) "
            f"but the job has {count} {what}; shard count and job size must be equal"
        )
    if not 0 <= index < shards:
        raise ShardAssignmentError(f"shard index {index} is outside 0..{shards - 1}")
    return index


def _data_root(data_dir: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Path:
    return Path(data_dir if data_dir is not None else env.get(DATA_DIR_ENV) or "/workspace/dataset")


def is_index_manifest(manifest: Mapping[str, Any]) -> bool:
    """True for a manifest whose shards are ranges over the source (version 2, mode index)."""
    return manifest.get("manifest_version") == 2 and manifest["settings"].get("mode") == "index"


def my_shards(
    data_dir: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None, *, verify: bool = False
) -> list[Path] | list[ShardReader] | list[RowGroups]:
    """This process's shard, from ``$TRAINSPEC_DATA_DIR/manifest.json`` and the rank variables.

    Copy mode (manifest version 1, or version 2 with ``mode: copy``) is unchanged: a list of
    paths, one file for ``jsonl``/``text``/``parquet`` and the files of this shard for ``files``
    (possibly none). Index mode has no shard files, so it gives readers instead (decided so:
    the call and its list shape stay, the items change with the manifest the stage wrote):
    one :class:`~trainspec.stages.readers.ShardReader` over this shard's ranges for
    ``jsonl``/``text``, one per file for ``files``, one
    :class:`~trainspec.stages.readers.RowGroups` per file for ``parquet``. A reader is a binary
    file (``with``, ``for line in reader``, ``read``, ``seek``) and checks its files against the
    manifest when it opens (``verify``: their checksums too). Code that works in both modes
    uses :func:`open_shard` (jsonl/text) instead.

    With ``shard_by=node`` every process on a node gets the same shard: split it further by
    ``LOCAL_RANK`` if they should not read the same records.
    Raises :class:`ShardAssignmentError` if the shard count does not match the job.
    """
    env = os.environ if env is None else env
    root = _data_root(data_dir, env)
    manifest = load_manifest(root)
    index = my_shard_index(manifest, env)
    if is_index_manifest(manifest):
        from trainspec.stages.readers import index_readers

        return index_readers(manifest, index, verify=verify, env=env)
    shard = manifest["shards"][index]
    base = root / shard["path"]
    if "files" in shard:
        return [base / entry["path"] for entry in shard["files"]]
    return [base]


def open_shard(
    data_dir: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None, *, verify: bool = False
) -> ShardReader:
    """One reader over this process's records (``jsonl``/``text``), in index and copy mode alike.

    ``reader.records(start=k)`` resumes at record ``k`` of the shard. ``verify`` also compares
    checksums the manifest holds. Raises :class:`ManifestError` for ``files``/``parquet``
    (use :func:`my_shards`) and :class:`SourceChangedError` when the source changed.
    """
    from trainspec.stages.readers import ShardReader, copy_reader, index_readers

    env = os.environ if env is None else env
    root = _data_root(data_dir, env)
    manifest = load_manifest(root)
    index = my_shard_index(manifest, env)
    fmt = manifest["settings"].get("format")
    if fmt not in ("jsonl", "text"):
        raise ManifestError(f"open_shard() reads jsonl and text shards; this one is {fmt}: use my_shards()")
    if is_index_manifest(manifest):
        reader = index_readers(manifest, index, verify=verify, env=env)[0]
        assert isinstance(reader, ShardReader)
        return reader
    return copy_reader(root, manifest, index, verify=verify)
