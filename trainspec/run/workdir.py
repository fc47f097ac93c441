"""The local work directory of ``run --local``: the volumes a cluster would give the job's pods.

::

    .trainspec/run/<namespace>/<job>/      (default; --workdir DIR)
      workspace/      the shard volume (mounted at /workspace): dataset/ shards + manifest.json
      checkpoints/    the checkpoint volume (or the stand-in for an object-store URI)
      mpi/hostfile    the MPI launcher's hostfile
      .trainspec-run-<run id>.lock   held by the run of that id while it runs (:mod:`.lock`)

It is kept between runs, like the checkpoint PVC a TrainJob's deletion leaves behind, so a run
that was killed resumes from its checkpoints when started again; delete it to start over.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.k8s.wellknown import CHECKPOINT_VOLUME, SHARD_VOLUME

DEFAULT_ROOT = Path(".trainspec") / "run"


@dataclass(frozen=True)
class WorkDir:
    """Where each volume of the job lives on this machine."""

    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def hostfile(self) -> Path:
        return self.root / "mpi" / "hostfile"

    def volume_homes(self) -> dict[str, Path]:
        """Volume name -> local directory, for the volumes trainspec puts into pods."""
        return {SHARD_VOLUME: self.workspace, CHECKPOINT_VOLUME: self.checkpoints}


def default_workdir(namespace: str, job: str) -> Path:
    """``.trainspec/run/<namespace>/<job>`` under the working directory."""
    return DEFAULT_ROOT / namespace / job


def prepare(root: Path) -> tuple[WorkDir | None, list[Diagnostic]]:
    """Create the work directory and its volume directories (TS707 when that fails)."""
    work = WorkDir(root.absolute())  # processes may change directory: their paths must not be relative
    try:
        if root.exists() and not root.is_dir():
            raise NotADirectoryError(f"{root} exists and is not a directory")
        for directory in (work.workspace, work.checkpoints, work.hostfile.parent):
            directory.mkdir(parents=True, exist_ok=True)
        if not os.access(root, os.W_OK | os.X_OK):
            raise PermissionError(f"{root} is not writable")
    except OSError as exc:
        return None, [
            Diagnostic(
                code=codes.LOCAL_WORK_DIR,
                message=f"cannot use work directory {root}: {exc}",
                file="<command line>",
                path="--workdir",
                hint="pass --workdir DIR with a directory you can write to",
            )
        ]
    return work, []
