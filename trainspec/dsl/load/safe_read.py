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
    fd, size = _open_regular(path, follow_symlinks)
    try:
        data = _read_up_to(fd, size, None if max_bytes is None else max_bytes + 1)
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
        fd, size = _open_regular(path, True)
    except (OSError, ValueError):
        return None
    try:
        return _read_up_to(fd, size, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _open_regular(path: str | os.PathLike[str], follow_symlinks: bool) -> tuple[int, int]:
    """A descriptor of ``path``, opened without blocking and checked to be a regular file, and
    the file's size then."""
    fd = os.open(path, _FLAGS if follow_symlinks else _FLAGS | getattr(os, "O_NOFOLLOW", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(path))
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path, st.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


#: Bytes asked for per read once the file turned out longer than its size said (it grew).
_CHUNK = 1 << 16


def _read_up_to(fd: int, size: int, limit: int | None) -> bytes:
    """The file's bytes to its end, or its first ``limit`` bytes (None: no limit).

    Asks for the size ``fstat`` gave, plus one byte to see the end, rather than for ``limit``:
    a buffer of ``limit`` bytes (16 MiB for a spec file) would be allocated and mapped for every
    file read, which cost more than the read itself. A file that grew is read on in chunks.
    """
    parts: list[bytes] = []
    total = 0
    want = size + 1
    while limit is None or total < limit:
        chunk = os.read(fd, want if limit is None else min(want, limit - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
        want = _CHUNK
    return parts[0] if len(parts) == 1 else b"".join(parts)


__all__ = ["FileTooLarge", "NotRegularFile", "peek_file", "read_file"]
