"""The stage's hot loops: newline counting, checksums and kernel-side copies.

Standard library at import; numpy and xxhash are used when they are installed (the
``data`` extra brings both) and looked up lazily, once per process.

* :func:`count_newlines` counts ``b"\\n"`` in a buffer: ``numpy.count_nonzero(a == 10)``
  when numpy is importable (SIMD, about 6 GB/s on 256 KiB buffers here), else
  ``bytearray.count`` (a C loop, about 2.6 GB/s); no per-byte Python work either way.
  Importing numpy costs about 0.27 s here, which the faster count repays only from about
  1 GiB on, so :func:`select_counter` picks numpy for inputs of at least
  :data:`NUMPY_MIN_BYTES` (before worker processes fork, so they inherit the import).
* :func:`new_hasher` makes the checksum object of ``--checksum``: ``xxh3`` is XXH3-64
  (``xxhash.xxh3_64``, about 8.6 GB/s here), ``sha256`` is :mod:`hashlib` (about 1.6 GB/s),
  ``none`` hashes nothing. A checksum is written as ``"<algorithm>:<hex digest>"``.
* :func:`copy_range` copies a byte range between two file descriptors with
  ``os.copy_file_range`` (in-kernel, and a reflink on filesystems that share extents),
  then ``os.sendfile``, then read/write through one bounded buffer, falling back to the
  next whenever the kernel refuses (EXDEV, ENOSYS, EINVAL, EOPNOTSUPP ...).
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from trainspec.stages.errors import StageError

#: The I/O buffer of copies and counting passes. Measured on 512 MiB (page cache warm):
#: read/write copies run at 3.2 (64 KiB), 3.4 (128 KiB), 3.6 (256 KiB), 3.3 (1 MiB) and
#: 0.6-1.2 GB/s (8 MiB, the old size: the buffer no longer fits the CPU caches); numpy
#: newline counting at 6.2 (256 KiB), 5.2 (1 MiB) and 4.2 GB/s (8 MiB).
IO_BUFFER = 256 << 10
XXHASH_HINT = "pip install xxhash (or 'trainspec[data]')"
#: Kernel answers meaning "this copy primitive cannot do this pair of files": use the next one.
_FALLBACK_ERRNOS = frozenset(
    e
    for e in (
        errno.EXDEV,
        errno.ENOSYS,
        errno.EINVAL,
        errno.EOPNOTSUPP,
        getattr(errno, "ENOTSUP", None),
        errno.EPERM,
        errno.ETXTBSY,
    )
    if e is not None
)


class Hasher(Protocol):
    """What :func:`new_hasher` returns (``hashlib`` and ``xxhash`` objects both fit)."""

    def update(self, data: Any, /) -> None: ...
    def hexdigest(self) -> str: ...


_counter: list[Callable[[Any, int], int]] = []  # memo of the chosen counter, filled on first use
#: Inputs at least this big are counted with numpy (when installed); see the module docstring.
NUMPY_MIN_BYTES = 1 << 30


def _bytes_count(buf: Any, n: int) -> int:
    return int(buf.count(b"\n", 0, n)) if isinstance(buf, (bytes, bytearray)) else bytes(buf[:n]).count(b"\n")


def _numpy_counter() -> Callable[[Any, int], int] | None:
    try:
        import numpy  # lazy: optional, and heavy to import
    except ImportError:
        return None
    frombuffer, count_nonzero, u8 = numpy.frombuffer, numpy.count_nonzero, numpy.uint8

    def count(buf: Any, n: int) -> int:
        return int(count_nonzero(frombuffer(buf, u8, n) == 10)) if n else 0

    return count


def select_counter(total_bytes: int) -> str:
    """Choose the counter for an input of ``total_bytes`` (numpy for big ones); returns its name."""
    chosen = (_numpy_counter() if total_bytes >= NUMPY_MIN_BYTES else None) or _bytes_count
    _counter[:] = [chosen]
    return counter_name()


def count_newlines(buf: Any, n: int) -> int:
    """Newlines in the first ``n`` bytes of ``buf`` (a bytes-like object), fastest way available."""
    if not _counter:
        _counter.append(_numpy_counter() or _bytes_count)
    return _counter[0](buf, n)


def counter_name() -> str:
    """``"numpy"`` or ``"bytes.count"``: which counter :func:`count_newlines` uses."""
    count_newlines(b"", 0)
    return "bytes.count" if _counter[0] is _bytes_count else "numpy"


class _NoHash:
    def update(self, data: Any, /) -> None:
        pass

    def hexdigest(self) -> str:
        return ""


def new_hasher(algorithm: str) -> Hasher | None:
    """A fresh checksum object for ``algorithm``, or None for ``none``; raises :class:`StageError`."""
    if algorithm == "none":
        return None
    if algorithm == "sha256":
        return hashlib.sha256()
    if algorithm == "xxh3":
        try:
            import xxhash  # optional extra
        except ImportError:
            raise StageError(f"--checksum xxh3 needs the xxhash package: {XXHASH_HINT}") from None
        hasher: Hasher = xxhash.xxh3_64()
        return hasher
    raise StageError(f"unknown checksum {algorithm!r}")  # pragma: no cover - parse_config checks


def check_available(algorithm: str) -> None:
    """Fail before any work if the checksum's package is missing."""
    new_hasher(algorithm)


def digest(algorithm: str, hasher: Hasher | None) -> str | None:
    """``"<algorithm>:<hex>"`` of a finished hasher, None when no checksum was asked for."""
    return None if hasher is None else f"{algorithm}:{hasher.hexdigest()}"


def checksum_fd(fd: int, algorithm: str, start: int = 0, end: int | None = None) -> str | None:
    """The checksum of bytes ``[start, end)`` of an open file (to its end when ``end`` is None)."""
    hasher = new_hasher(algorithm)
    if hasher is None:
        return None
    buf = bytearray(IO_BUFFER)
    view = memoryview(buf)
    pos = start
    while end is None or pos < end:
        want = IO_BUFFER if end is None else min(IO_BUFFER, end - pos)
        n = os.preadv(fd, [view[:want]], pos)
        if not n:
            break
        hasher.update(view[:n])
        pos += n
    return digest(algorithm, hasher)


def checksum_path(path: str | os.PathLike[str], algorithm: str) -> str | None:
    """The checksum of a whole local file."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return checksum_fd(fd, algorithm)
    finally:
        os.close(fd)


def _write_all(fd: int, data: memoryview) -> None:
    while data:
        data = data[os.write(fd, data) :]


def pread_chunks(fd: int, offset: int, count: int) -> Iterator[memoryview]:
    """``count`` bytes of ``fd`` from ``offset`` (fewer at its end), as views of one reused
    ``IO_BUFFER``-sized buffer: each view is valid until the next one is taken."""
    buf = bytearray(min(IO_BUFFER, max(count, 1)))
    view = memoryview(buf)
    done = 0
    while done < count:
        n = os.preadv(fd, [view[: min(len(buf), count - done)]], offset + done)
        if not n:
            return
        yield view[:n]
        done += n


def _copy_rw(src: int, dst: int, offset: int, count: int) -> int:
    done = 0
    for chunk in pread_chunks(src, offset, count):
        _write_all(dst, chunk)
        done += len(chunk)
    return done


def copy_range(src: int, dst: int, offset: int, count: int, *, kernel: bool = True) -> int:
    """Append ``count`` bytes of ``src`` from ``offset`` to ``dst`` (at its current position).

    Returns the bytes copied, fewer only if ``src`` ended early. ``kernel=False`` forces the
    read/write loop. Output errors (ENOSPC, EIO ...) propagate as :class:`OSError`.
    """
    done = 0
    for primitive in ("copy_file_range", "sendfile") if kernel else ():
        fn = getattr(os, primitive, None)
        if fn is None:
            continue
        try:
            while done < count:
                # Chunks of at most 1 GiB: a signal can interrupt between them, and sendfile
                # caps one call near 2 GiB anyway.
                chunk = min(count - done, 1 << 30)
                if primitive == "copy_file_range":
                    n = fn(src, dst, chunk, offset + done)
                else:
                    n = fn(dst, src, offset + done, chunk)
                if not n:
                    return done
                done += n
            return done
        except OSError as exc:
            if exc.errno not in _FALLBACK_ERRNOS:
                raise
            if done:
                break  # part copied: finish with read/write from where it stopped
    return done + _copy_rw(src, dst, offset + done, count - done)
