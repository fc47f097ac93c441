"""One run of a job at a time on a work directory: ``.trainspec-run-<run id>.lock``.

Two runs with one run id on one work directory are what the checkpoint lease cannot tell apart (it
names runs by ``TRAINSPEC_RUN_ID``): both would write the same checkpoints as one run, and shard into
the same files. So a run takes ``flock`` on the lock file of its id before it writes anything there,
and a second run of that id is refused (TS707) with the first one's pid, which the file holds (with
the host). Runs of other shapes of the job (other ids) may share the directory, as a cluster's runs
share a checkpoint claim: the lease makes them take turns; each is told about the others.

The kernel releases the lock when the last descriptor of it closes. The keepers of the run's members
hold it too (:mod:`.processes`), so after ``trainspec run`` is killed the lock stays taken until the
keepers have ended every process of that run; a lock is never stale. A clean end removes the file; a
killed run leaves its pid there, and the next run of that id notes that it took the directory over.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import time
from pathlib import Path

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic

PREFIX = ".trainspec-run-"
SUFFIX = ".lock"
#: How long a run waits for a lock whose holder has exited while its keepers end that run's processes
#: (milliseconds, in practice). A live holder is never waited for.
WAIT_SECONDS = 30.0


class RunLock:
    """The work directory, taken for one run id (see the module docstring)."""

    def __init__(self, fd: int, path: Path, taken_over: int | None, others: list[tuple[str, int]]) -> None:
        self.fd: int | None = fd
        self.path = path
        #: The pid of a run of this id that ended without releasing the directory (it was killed).
        self.taken_over = taken_over
        #: (run id, pid) of the runs of other ids using the directory now.
        self.others = others

    def release(self) -> None:
        """Remove the file (no pid left for the next run to report) and let the lock go."""
        if self.fd is None:
            return
        # Removed while still locked: a run that opened it meanwhile finds, once it has the lock, that
        # the path is no longer its file, and starts over with a new one (see _take).
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self.fd)
        self.fd = None

    def __del__(self) -> None:  # a prepared run that was never executed lets the directory go
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def file_name(run_id: str) -> str:
    """The lock file of ``run_id`` (run ids are DNS labels; anything else is made safe for a file name)."""
    return PREFIX + (re.sub(r"[^A-Za-z0-9._-]", "_", run_id)[:200] or "_") + SUFFIX


def _holder(fd: int) -> tuple[int | None, str, str]:
    """(pid, host, run id) written in a lock file; (None, "", "") when it holds none."""
    try:
        words = os.pread(fd, 512, 0).decode(errors="replace").split()
    except OSError:
        return None, "", ""
    pid = int(words[0]) if words and words[0].isdigit() else None
    return pid, (words[1] if len(words) > 1 else ""), (words[2] if len(words) > 2 else "")


def _alive(pid: int, host: str) -> bool:
    if host and host != socket.gethostname():
        return True  # a run on another machine (a shared file system): it cannot be looked at from here
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        mine, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)


def take(root: Path, run_id: str) -> tuple[RunLock | None, list[Diagnostic]]:
    """Take ``root`` for the run ``run_id``, or TS707 naming the pid of the run of that id that has it.

    None and no diagnostic where there are no file locks (no ``fcntl``, or a file system without
    them): such a run goes on unchecked, as before there was a lock.
    """
    try:
        import fcntl
    except ImportError:
        return None, []
    path = root / file_name(run_id)
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            return None, [_unusable(root, str(exc))]
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid, host, _ = _holder(fd)
            os.close(fd)
            if pid is None or _alive(pid, host) or time.monotonic() >= deadline:
                return None, [_in_use(root, run_id, pid, host)]
            time.sleep(0.05)  # its trainspec was killed and its keepers are ending its processes: soon free
            continue
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                return None, []
            return None, [_unusable(root, str(exc))]
        if _same_file(fd, path):
            break
        os.close(fd)  # the run before released (removed) it between our open and our lock: again
    previous, _, _ = _holder(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {socket.gethostname()} {run_id}\n".encode(), 0)
    except OSError as exc:
        os.close(fd)
        return None, [_unusable(root, str(exc))]
    taken_over = previous if previous is not None and previous != os.getpid() else None
    return RunLock(fd, path, taken_over, _others(root, path)), []


def _others(root: Path, mine: Path) -> list[tuple[str, int]]:
    """The live runs of other ids on ``root``, from their lock files (read only: never locked here,
    which could make one of them find its own lock taken)."""
    found = []
    for path in sorted(root.glob(f"{PREFIX}*{SUFFIX}")):
        if path == mine:
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            pid, host, run_id = _holder(fd)
        finally:
            os.close(fd)
        if pid is not None and _alive(pid, host):
            found.append((run_id or path.name, pid))
    return found


def _in_use(root: Path, run_id: str, pid: int | None, host: str) -> Diagnostic:
    where = f" on {host}" if host and host != socket.gethostname() else ""
    who = f"pid {pid}{where}" if pid is not None else "pid unknown"
    return Diagnostic(
        code=codes.LOCAL_WORK_DIR,
        message=f"work directory {root} is in use by another `trainspec run --local` of run {run_id} ({who}): "
        "two runs of one id would write the same checkpoints",
        file="<command line>",
        path="--workdir",
        hint="wait for that run to end (or stop it), or pass --workdir DIR to run beside it",
    )


def _unusable(root: Path, problem: str) -> Diagnostic:
    return Diagnostic(
        code=codes.LOCAL_WORK_DIR,
        message=f"cannot use work directory {root}: {problem}",
        file="<command line>",
        path="--workdir",
        hint="pass --workdir DIR with a directory you can write to",
    )


__all__ = ["RunLock", "file_name", "take"]
