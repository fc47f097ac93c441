"""Checkpoint directory helpers for training scripts (in-pod; standard library only).

Layout under ``$TRAINSPEC_CHECKPOINT_DIR``::

    step-000000120/            # a checkpoint; complete once it holds COMPLETE
    step-000000120/COMPLETE    # completion marker (JSON: {"step": 120}), written last, atomically
    .tmp-step-000000140-xxxx/  # being written (or left by a crash): always ignored

``save_checkpoint(step)`` yields a temp directory; when the ``with`` block succeeds it fsyncs
everything, renames the directory to ``step-<step>``, writes the marker atomically and
prunes older complete checkpoints down to ``$TRAINSPEC_CHECKPOINT_KEEP`` (default 3;
0 keeps all). If the block raises, the temp directory is removed and no ``step-`` directory
appears. ``latest_checkpoint()`` only returns directories with the marker, so a crash at
any moment leaves at worst an ignored partial directory.

The helpers write wherever they are called: in data-parallel training call
``save_checkpoint`` on rank 0 only (all replicas hold the same weights); every rank may call
``latest_checkpoint`` to resume.

With ``TRAINSPEC_RUN_ID`` set (every trainer pod of a compiled run, ``run --local``), the
directory holds a lease (``.trainspec-lease.json``, :mod:`trainspec.stages.lease`) so that two
runs of one job never write at once: rank 0 takes it in its first ``latest_checkpoint()`` or
``save_checkpoint()`` (waiting while an older run still holds it), the other ranks wait there
until it names their run, and every write checks it first (:class:`CheckpointFenced` once a newer
run took over). Without the variable nothing changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

# The in-pod contract's names, shared with the compiler (a standard-library module).
from trainspec.dsl.kube_facts import CHECKPOINT_DIR_ENV, CHECKPOINT_KEEP_ENV, RUN_ID_ENV
from trainspec.stages.errors import CheckpointError, CheckpointFenced
from trainspec.stages.lease import CheckpointLease, run_id_from

MARKER = "COMPLETE"
_STEP_DIR = re.compile(r"^step-(\d+)$")
_DEFAULT_KEEP = 3


def checkpoint_dir(env: Mapping[str, str] | None = None) -> Path:
    """The checkpoint root from ``TRAINSPEC_CHECKPOINT_DIR``; raises :class:`CheckpointError` if unset."""
    env = os.environ if env is None else env
    value = env.get(CHECKPOINT_DIR_ENV, "").strip()
    if not value:
        raise CheckpointError("TRAINSPEC_CHECKPOINT_DIR is not set; the spec has no checkpoint section")
    return Path(value)


def checkpoint_name(step: int) -> str:
    """Directory name of a step's checkpoint (zero-padded so names sort like steps)."""
    return f"step-{step:09d}"


def checkpoint_step(path: str | os.PathLike[str]) -> int:
    """The step of a checkpoint directory, from its name."""
    match = _STEP_DIR.match(Path(path).name)
    if not match:
        raise CheckpointError(f"{path} is not a checkpoint directory (step-<number>)")
    return int(match.group(1))


def _steps(root: Path) -> list[tuple[int, Path, bool]]:
    """All ``step-N`` directories as ``(step, path, complete)``, by step."""
    try:
        entries = list(root.iterdir())
    except FileNotFoundError:
        return []
    out = []
    for entry in entries:
        match = _STEP_DIR.match(entry.name)
        if match and entry.is_dir():
            out.append((int(match.group(1)), entry, (entry / MARKER).is_file()))
    return sorted(out, key=lambda item: item[0])


def list_checkpoints(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """Complete checkpoints, oldest first."""
    root = Path(directory) if directory is not None else checkpoint_dir()
    return [path for _step, path, complete in _steps(root) if complete]


def latest_checkpoint(directory: str | os.PathLike[str] | None = None) -> Path | None:
    """The newest complete checkpoint, or None (partial and temp directories are ignored).

    With ``TRAINSPEC_RUN_ID`` set this first waits for the run's lease (rank 0 takes it, the
    other ranks wait until it does), so the newest checkpoint is one no older run still adds to.
    """
    root = Path(directory) if directory is not None else checkpoint_dir()
    lease_for(root)
    complete = list_checkpoints(root)
    return complete[-1] if complete else None


# One lease per checkpoint directory and process: what save_checkpoint and latest_checkpoint share.
_LEASES: dict[str, CheckpointLease] = {}
_REGISTRY = threading.Lock()


def lease_for(directory: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> CheckpointLease | None:
    """This process's lease on ``directory``, taken (rank 0) or joined (other ranks) on first use.

    None without ``TRAINSPEC_RUN_ID``: nothing is leased and nothing is checked.
    """
    env = os.environ if env is None else env
    run_id = run_id_from(env)
    if run_id is None:
        return None
    key = os.path.realpath(directory)
    with _REGISTRY:  # held while waiting: this process's other threads would have to wait as well
        lease = _LEASES.get(key)
        if lease is None or lease.run_id != run_id:
            lease = _LEASES[key] = CheckpointLease(directory, run_id, env=env)
        if lease.fenced_by is None and not lease.holding and lease.role != "follower":
            from trainspec.stages.ranks import process_info  # only with a run id: keeps the import light

            if process_info(env).rank == 0:
                lease.acquire()
            else:
                lease.join()
    return lease


def acquire_lease(
    directory: str | os.PathLike[str] | None = None,
    *,
    run_id: str | None = None,
    ttl: float | None = None,
    wait: float | None = None,
    env: Mapping[str, str] | None = None,
) -> CheckpointLease:
    """Take the checkpoint lease now (rank 0 only); ``with acquire_lease():`` releases it at the end.

    ``directory`` defaults to ``$TRAINSPEC_CHECKPOINT_DIR``, ``run_id`` to ``$TRAINSPEC_RUN_ID``
    (one of them is required), ``ttl``/``wait`` to ``$TRAINSPEC_LEASE_TTL``/``$TRAINSPEC_LEASE_WAIT``.
    This process's ``save_checkpoint`` and ``latest_checkpoint`` use that lease from then on.
    """
    env = os.environ if env is None else env
    root = Path(directory) if directory is not None else checkpoint_dir(env)
    run = run_id if run_id is not None else run_id_from(env)
    if run is None:
        raise CheckpointError(f"{RUN_ID_ENV} is not set and no run_id was given: a lease needs the run's id")
    lease = CheckpointLease(root, run, ttl=ttl, wait=wait, env=env)
    with _REGISTRY:
        _LEASES[os.path.realpath(root)] = lease
    return lease.acquire()


def _check(lease: CheckpointLease | None) -> None:
    if lease is not None:
        lease.check()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            _fsync(Path(dirpath, name))
        _fsync(Path(dirpath))


def _write_marker(final: Path, step: int) -> None:
    tmp = final / f".{MARKER}.tmp"
    with open(tmp, "w") as fh:
        json.dump({"step": step}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, final / MARKER)
    _fsync(final)


def _keep(keep: int | None, env: Mapping[str, str]) -> int:
    if keep is not None:
        return keep
    value = env.get(CHECKPOINT_KEEP_ENV, "").strip()
    try:
        return int(value) if value else _DEFAULT_KEEP
    except ValueError:
        raise CheckpointError(f"TRAINSPEC_CHECKPOINT_KEEP={value!r} is not an integer") from None


def _remove(path: Path) -> None:
    # Drop the marker first: a half-deleted directory must never look complete.
    with contextlib.suppress(FileNotFoundError):
        (path / MARKER).unlink()
    shutil.rmtree(path, ignore_errors=True)


def prune_checkpoints(root: Path, keep: int, newest: int) -> None:
    """Keep the ``keep`` newest complete checkpoints; drop partial ones older than ``newest``."""
    entries = _steps(root)
    complete = [path for _s, path, done in entries if done]
    if keep > 0:
        for path in complete[:-keep]:
            _remove(path)
    for step, path, done in entries:
        if not done and step < newest:
            _remove(path)
    for entry in root.iterdir():  # temp dirs of crashed saves of earlier steps
        match = re.match(r"^\.(?:tmp|old)-step-(\d+)-", entry.name)
        if match and int(match.group(1)) < newest:
            shutil.rmtree(entry, ignore_errors=True)


@contextlib.contextmanager
def save_checkpoint(
    step: int, directory: str | os.PathLike[str] | None = None, *, keep: int | None = None
) -> Iterator[Path]:
    """Write a checkpoint atomically: ``with save_checkpoint(step) as d: write files into d``.

    On success the files are fsynced, ``d`` becomes ``step-<step>`` with its ``COMPLETE``
    marker, and older checkpoints are pruned (``keep`` defaults to
    ``$TRAINSPEC_CHECKPOINT_KEEP`` or 3; 0 keeps all). An existing checkpoint of the same
    step is replaced. On an exception nothing new is left behind.
    """
    if step < 0:
        raise CheckpointError(f"checkpoint step must be >= 0, got {step}")
    root = Path(directory) if directory is not None else checkpoint_dir()
    keep_n = _keep(keep, os.environ)
    root.mkdir(parents=True, exist_ok=True)
    lease = lease_for(root)
    _check(lease)  # a fenced run writes nothing at all
    name = checkpoint_name(step)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{name}-", dir=root))
    final = root / name
    try:
        yield tmp
        _fsync_tree(tmp)
        _check(lease)  # before anything becomes visible, or an existing step is replaced
        if final.exists():  # re-saving a step (e.g. after a resume): move the old one aside
            old = Path(tempfile.mkdtemp(prefix=f".old-{name}-", dir=root))
            with contextlib.suppress(FileNotFoundError):
                (final / MARKER).unlink()
            os.replace(final, old / name)
            shutil.rmtree(old, ignore_errors=True)
        os.rename(tmp, final)
        _fsync(root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        _check(lease)  # the marker makes it a checkpoint: only while the lease is still ours
    except CheckpointFenced:
        _remove(final)
        raise
    _write_marker(final, step)
    _check(lease)  # pruning deletes other checkpoints
    prune_checkpoints(root, keep_n, step)
