"""Error types of the data-sharding stage and the in-pod helpers (standard library only)."""

from __future__ import annotations

from trainspec.dsl.errors import TrainspecError


class StageError(TrainspecError):
    """A problem with the input or the output of the stage: printed as one line, exit code 1."""

    exit_code = 1


class UsageError(StageError):
    """A problem with the command line or the stage's environment variables: exit code 2."""

    exit_code = 2


class ManifestError(RuntimeError, TrainspecError):
    """The shard manifest is missing, unreadable or not a trainspec manifest."""


class SourceChangedError(ManifestError):
    """A file the manifest refers to changed since the stage wrote it (size, mtime, ETag or checksum)."""


class ShardAssignmentError(RuntimeError, TrainspecError):
    """This process cannot be matched to a shard (world size and shard count disagree, etc.)."""


class CheckpointError(RuntimeError, TrainspecError):
    """The checkpoint directory is not configured or a checkpoint cannot be written."""


class CheckpointFenced(CheckpointError):
    """Another run of the job holds the checkpoint lease: this run must write no more checkpoints.

    ``run_id`` is this run's id, ``taken_by`` the run that holds the lease now (None when the
    lease file is missing or unreadable).
    """

    def __init__(self, message: str, *, run_id: str = "", taken_by: str | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.taken_by = taken_by
