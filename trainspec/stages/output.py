"""The output directory: locking, staging next to it, and the atomic publish.

Everything is written into ``.<name>.tmp-XXXX`` beside the output directory (same
filesystem, so renames are atomic), fsynced, and only then renamed into place. An existing
output is first renamed aside to ``.<name>.old-XXXX`` and deleted after the new one is in.
A run killed at any point therefore leaves either the old complete output, the new complete
output, or no output - never a manifest describing shards that are not there. Leftover
temp/old directories of killed runs are removed by the next run, under the lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import signal
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from trainspec.stages.errors import StageError
from trainspec.stages.manifest import MANIFEST_KIND, MANIFEST_NAME
from trainspec.stages.sink import fsync_path, output_error


def prepare_parent(out_dir: Path) -> None:
    """Create the output's parent directory; a clear error if that is impossible."""
    if out_dir.exists() and not out_dir.is_dir():
        raise StageError(f"output {out_dir} exists and is not a directory")
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StageError(f"cannot create output directory {out_dir.parent}: {exc.strerror or exc}") from None
    if not os.access(out_dir.parent, os.W_OK | os.X_OK):
        raise StageError(f"cannot write output directory {out_dir.parent}: permission denied")


@contextlib.contextmanager
def locked(out_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock for this output, so two stages never interleave their publishes."""
    lock_path = out_dir.parent / f".{out_dir.name}.lock"
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise output_error(lock_path, exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:  # some network filesystems have no flock; rename stays atomic
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                raise output_error(lock_path, exc) from None
        yield
    finally:
        os.close(fd)


def remove_stale(out_dir: Path) -> None:
    """Delete temp and old directories left by killed runs (call with the lock held)."""
    prefixes = (f".{out_dir.name}.tmp-", f".{out_dir.name}.old-")
    for entry in out_dir.parent.iterdir():
        if entry.name.startswith(prefixes) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def check_replaceable(out_dir: Path) -> None:
    """Refuse to replace a non-empty directory that is not a previous trainspec output."""
    if not out_dir.is_dir() or not any(out_dir.iterdir()):
        return
    manifest = out_dir / MANIFEST_NAME
    try:
        ours = MANIFEST_KIND.encode() in manifest.read_bytes()[:4096]
    except OSError:
        ours = False
    if not ours:
        raise StageError(
            f"output directory {out_dir} is not empty and holds no trainspec manifest; "
            "refusing to replace it (choose another --output or remove it)"
        )


def make_staging(out_dir: Path) -> Path:
    """A fresh staging directory beside the output."""
    try:
        return Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    except OSError as exc:
        raise output_error(out_dir.parent, exc) from None


def publish(staging: Path, out_dir: Path, durable: bool) -> None:
    """Atomically move the finished staging directory to ``out_dir``, replacing any old output."""
    if durable:
        fsync_path(staging)
    old = None
    # Hold SIGTERM/SIGINT off across the two renames so an interrupt cannot land between them.
    blocked = {signal.SIGTERM, signal.SIGINT}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    except (AttributeError, ValueError, OSError):  # pragma: no cover - platforms without it
        previous = None
    try:
        if out_dir.exists():
            old = out_dir.parent / f".{out_dir.name}.old-{uuid.uuid4().hex[:12]}"
            os.rename(out_dir, old)
        os.rename(staging, out_dir)
        if durable:
            fsync_path(out_dir.parent)
    except OSError as exc:
        if old is not None and not out_dir.exists():
            with contextlib.suppress(OSError):
                os.rename(old, out_dir)  # put the previous output back
        raise output_error(out_dir, exc) from None
    finally:
        if previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def discard(staging: Path | None) -> None:
    """Remove a staging directory after a failure."""
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)
