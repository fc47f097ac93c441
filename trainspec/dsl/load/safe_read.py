"""The one safe file reader: every file trainspec reads from disk goes through :func:`read_file`.

Spec files, values files, ``.trainspecignore``, the manifests ``check --cluster`` and
``migrate`` read, the files of an output directory and its marker: all are opened the same way,

* ``O_NONBLOCK`` and ``O_NOCTTY``, so that opening a FIFO never waits for a writer and a
  terminal never becomes the controlling one;
* ``fstat`` on the open descriptor decides what the file is (no window between a check and the
  open): anything but a regular file is refused before a byte is read, since a FIFO would block
  the reader forever and a device never ends;
* at most ``max_bytes`` are read (one more to know a file is too big without reading it all);
* ``follow_symlinks=False`` adds ``O_NOFOLLOW``: the output tree refuses a link put in place of a
  file it scanned. Inputs follow links (a symlinked spec file is read as its target).

It raises ``OSError`` (its subclasses below for the refusals) and never returns part of a file
unless asked to (:func:`peek_file`).
"""

from __future__ import annotations

import errno
import os
import stat

from trainspec.dsl.errors import TrainspecError

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(OSError, TrainspecError):
    """The path is a FIFO, a socket or a device: refused before it is read. ``mode`` is its ``st_mode``."""

    def __init__(self, path: str | os.PathLike[str], mode: int) -> None:
        super().__init__(errno.EINVAL, "not a regular file", os.fspath(path))
        self.mode = mode


class FileTooLarge(OSError, TrainspecError):
    """The file holds more than the bytes allowed. ``size``: its size as far as known."""

    def __init__(self, path: str | os.PathLike[str], size: int, max_bytes: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {max_bytes} bytes", os.fspath(path))
        self.size = size
        self.max_bytes = max_bytes


def read_file(path: str | os.PathLike[str], max_bytes: int | None = None, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file at ``path``.

    Raises :class:`FileTooLarge` past ``max_bytes`` (None: no cap), :class:`NotRegularFile` for a
    FIFO, socket or device, ``IsADirectoryError`` for a directory, ``OSError`` with ``ELOOP`` for
    a symbolic link when ``follow_symlinks`` is false, any other ``OSError`` of ``open``, and
    ``ValueError`` for a path holding a NUL character.
    """
    fd = _open_regular(path, follow_symlinks)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
        if max_bytes is not None and len(data) > max_bytes:
            try:
                size = max(os.fstat(fd).st_size, len(data))
            except OSError:
                size = len(data)
            raise FileTooLarge(path, size, max_bytes)
        return data
    finally:
        os.close(fd)


def peek_file(path: str | os.PathLike[str], limit: int) -> bytes | None:
    """Up to ``limit`` bytes of ``path`` if it is a regular file that can be read, else None.

    For a look that decides what a file is (a ``.py`` file a spec module?) or a small control
    file: what cannot be read is left to whoever reads it for real, who reports why.
    """
    try:
        fd = _open_regular(path, True)
    except (OSError, ValueError):
        return None
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _open_regular(path: str | os.PathLike[str], follow_symlinks: bool) -> int:
    """A descriptor of ``path``, opened without blocking and checked to be a regular file."""
    fd = os.open(path, _FLAGS if follow_symlinks else _FLAGS | getattr(os, "O_NOFOLLOW", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
    except BaseException:
        os.close(fd)
        raise
    return fd


__all__ = ["FileTooLarge", "NotRegularFile", "peek_file", "read_file"]
