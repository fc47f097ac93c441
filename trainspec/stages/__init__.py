"""In-pod helpers for training scripts, and the data-sharding stage (``trainspec.stages.shard``).

Importing this package uses the standard library only (no pyarrow, fsspec or pydantic), so
any training image that has trainspec can use it::

    from trainspec.stages import latest_checkpoint, my_shards, open_shard, save_checkpoint

    with open_shard() as shard:       # this rank's records, from the stage's manifest
        for record in shard.records(start=done):   # resume at a record offset
            ...
    for item in my_shards():          # copy mode: shard paths; index mode: readers over ranges
        ...
    resume = latest_checkpoint()      # newest complete checkpoint, or None
    with save_checkpoint(step) as d:  # atomic; call on rank 0 only in data-parallel training
        (d / "state.json").write_text(...)

With ``TRAINSPEC_RUN_ID`` set, both checkpoint helpers go through the run's lease on the
directory (``trainspec.stages.lease``): an older run of the same job still writing makes them
wait, and a newer run taking over makes ``save_checkpoint`` raise ``CheckpointFenced``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Name -> the module that defines it. Imported on first use (PEP 562), so that running the
# sharding stage (``python -m trainspec.stages.shard``) or reading one helper does not pay for
# every other helper's imports: the stage's start-up is most of a by-bytes index run.
_EXPORTS = {
    "CheckpointError": "errors",
    "CheckpointFenced": "errors",
    "ManifestError": "errors",
    "ShardAssignmentError": "errors",
    "SourceChangedError": "errors",
    "acquire_lease": "checkpoints",
    "checkpoint_dir": "checkpoints",
    "checkpoint_name": "checkpoints",
    "checkpoint_step": "checkpoints",
    "latest_checkpoint": "checkpoints",
    "list_checkpoints": "checkpoints",
    "save_checkpoint": "checkpoints",
    "CheckpointLease": "lease",
    "load_manifest": "manifest",
    "ProcessInfo": "ranks",
    "my_shard_index": "ranks",
    "my_shards": "ranks",
    "open_shard": "ranks",
    "process_info": "ranks",
    "RowGroups": "readers",
    "ShardReader": "readers",
    "ShardRecords": "records",
    # Step and data-wait timers, rank-0 guards and progress reports: standard library too.
    "MetricsSnapshot": "metrics",
    "StepMetrics": "metrics",
    "data_wait": "metrics",
    "default_metrics": "metrics",
    "train_step": "metrics",
    "serve_metrics": "metrics_http",
    "ProgressReporter": "progress_report",
    "report_progress": "progress_report",
    "is_rank_zero": "rank_zero",
    "rank_zero_only": "rank_zero",
    "rank_zero_print": "rank_zero",
    # Experiment tracking from rank 0 (spec.tracking); mlflow / wandb load when a run starts.
    "Tracker": "tracking_run",
    "TrackingError": "tracking_run",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 (built from the lazy table; type checkers read the X as X imports)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'trainspec.stages' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"trainspec.stages.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # pragma: no cover
    # ``X as X``: an explicit re-export, which type checkers require of a py.typed package.
    from trainspec.stages.checkpoints import (
        acquire_lease as acquire_lease,
        checkpoint_dir as checkpoint_dir,
        checkpoint_name as checkpoint_name,
        checkpoint_step as checkpoint_step,
        latest_checkpoint as latest_checkpoint,
        list_checkpoints as list_checkpoints,
        save_checkpoint as save_checkpoint,
    )
    from trainspec.stages.errors import (
        CheckpointError as CheckpointError,
        CheckpointFenced as CheckpointFenced,
        ManifestError as ManifestError,
        ShardAssignmentError as ShardAssignmentError,
        SourceChangedError as SourceChangedError,
    )
    from trainspec.stages.lease import (
        CheckpointLease as CheckpointLease,
    )
    from trainspec.stages.manifest import (
        load_manifest as load_manifest,
    )
    from trainspec.stages.metrics import (
        MetricsSnapshot as MetricsSnapshot,
        StepMetrics as StepMetrics,
        data_wait as data_wait,
        default_metrics as default_metrics,
        train_step as train_step,
    )
    from trainspec.stages.metrics_http import (
        serve_metrics as serve_metrics,
    )
    from trainspec.stages.progress_report import (
        ProgressReporter as ProgressReporter,
        report_progress as report_progress,
    )
    from trainspec.stages.rank_zero import (
        is_rank_zero as is_rank_zero,
        rank_zero_only as rank_zero_only,
        rank_zero_print as rank_zero_print,
    )
    from trainspec.stages.ranks import (
        ProcessInfo as ProcessInfo,
        my_shard_index as my_shard_index,
        my_shards as my_shards,
        open_shard as open_shard,
        process_info as process_info,
    )
    from trainspec.stages.readers import (
        RowGroups as RowGroups,
        ShardReader as ShardReader,
    )
    from trainspec.stages.records import ShardRecords as ShardRecords
    from trainspec.stages.tracking_run import (
        Tracker as Tracker,
        TrackingError as TrackingError,
    )
