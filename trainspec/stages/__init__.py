"""In-pod helpers for training scripts, and the data-sharding stage (``trainspec.stages.shard``).

Importing this package uses the standard library only (no pyarrow, fsspec or pydantic), so
any training image that has trainspec can use it::

    from trainspec.stages import latest_checkpoint, my_shards, save_checkpoint

    for path in my_shards():          # this rank's shard(s), from the stage's manifest
        ...
    resume = latest_checkpoint()      # newest complete checkpoint, or None
    with save_checkpoint(step) as d:  # atomic; call on rank 0 only in data-parallel training
        (d / "state.json").write_text(...)
"""

from __future__ import annotations

from trainspec.stages.checkpoints import (
    checkpoint_dir,
    checkpoint_name,
    checkpoint_step,
    latest_checkpoint,
    list_checkpoints,
    save_checkpoint,
)
from trainspec.stages.errors import CheckpointError, ManifestError, ShardAssignmentError
from trainspec.stages.manifest import load_manifest
from trainspec.stages.ranks import ProcessInfo, my_shard_index, my_shards, process_info

__all__ = [
    "CheckpointError",
    "ManifestError",
    "ProcessInfo",
    "ShardAssignmentError",
    "checkpoint_dir",
    "checkpoint_name",
    "checkpoint_step",
    "latest_checkpoint",
    "list_checkpoints",
    "load_manifest",
    "my_shard_index",
    "my_shards",
    "process_info",
    "save_checkpoint",
]
