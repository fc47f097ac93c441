"""Writing shard files: byte counting, the optional checksum while writing, and fsync helpers.

Output errors (disk full, permission denied, file too large) become one-line
:class:`StageError`s naming the file, so the CLI can clean up and exit 1.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trainspec.stages.errors import StageError
from trainspec.stages.fastio import IO_BUFFER, copy_range, digest, new_hasher, pread_chunks


def output_error(path: Path | str, exc: OSError) -> StageError:
    """A one-line error for a failed write or create under the output directory."""
    return StageError(f"cannot write output {path}: {exc.strerror or exc}")


class ShardWriter:
    """One shard file being written. Small writes are buffered; big blocks go straight through.

    Hashing (only with a ``checksum``) happens in the thread that writes, and ``os.write``,
    ``sha256.update`` and ``xxh3.update`` release the GIL for large buffers, so several
    writers in threads run in parallel. Without a checksum, :meth:`copy_from` lets the
    kernel copy a range of a local source file.
    """

    def __init__(self, path: Path, buffer_limit: int = IO_BUFFER, checksum: str = "none") -> None:
        self.path = path
        self.records: int | None = 0
        self.bytes = 0
        self._algorithm = checksum
        self._hash = new_hasher(checksum)
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._limit = buffer_limit
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise output_error(path, exc) from None

    def _write_all(self, data: bytes | memoryview) -> None:
        assert self._fd is not None
        view = memoryview(data)
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
        except OSError as exc:
            raise output_error(self.path, exc) from None
        if self._hash is not None:
            self._hash.update(data)
        self.bytes += len(data)

    def copy_from(self, fd: int, offset: int, count: int, kernel: bool = True) -> int:
        """Append ``count`` bytes of the open file ``fd`` from ``offset``; return the bytes copied.

        In-kernel (copy_file_range/sendfile) unless a checksum needs to see the bytes.
        """
        self._flush()
        assert self._fd is not None
        if self._hash is not None:
            done = 0
            for chunk in pread_chunks(fd, offset, count):
                self._write_all(chunk)
                done += len(chunk)
            return done
        try:
            done = copy_range(fd, self._fd, offset, count, kernel=kernel)
        except OSError as exc:
            raise output_error(self.path, exc) from None
        self.bytes += done
        return done

    def _flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._pending_size = 0
            self._write_all(data)

    def write(self, data: bytes | memoryview) -> None:
        """Append bytes; buffered below the buffer limit, written through above it."""
        if len(data) >= self._limit:
            self._flush()
            self._write_all(data)
            return
        self._pending.append(bytes(data))
        self._pending_size += len(data)
        if self._pending_size >= self._limit:
            self._flush()

    def close(self) -> dict[str, Any]:
        """Flush and close; return ``{"records", "bytes", "checksum"}``.

        No fsync here: the runner fsyncs the whole staging tree at the end, by which time
        background writeback has already done most of the work (an fsync right after each
        shard would make the copying threads wait for the disk).
        """
        self._flush()
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError as exc:  # NFS and friends report write errors at close
                raise output_error(self.path, exc) from None
        return {"records": self.records, "bytes": self.bytes, "checksum": digest(self._algorithm, self._hash)}

    def abort(self) -> None:
        """Close without flushing (the staging directory is deleted anyway)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def fsync_path(path: Path) -> None:
    """fsync a file or a directory (a directory fsync makes renames/creates inside it durable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise output_error(path, exc) from None
    try:
        os.fsync(fd)
    except OSError as exc:
        raise output_error(path, exc) from None
    finally:
        os.close(fd)


def fsync_tree(root: Path) -> None:
    """fsync every file, then every directory bottom-up, under ``root``."""
    from concurrent.futures import ThreadPoolExecutor

    files: list[Path] = []
    dirs: list[Path] = []
    for dirpath, _dirnames, filenames in os.walk(root):
        dirs.append(Path(dirpath))
        files.extend(Path(dirpath, name) for name in filenames)
    # Many small fsyncs in parallel let the filesystem batch them into fewer journal commits.
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(fsync_path, files))
    for d in reversed(dirs):
        fsync_path(d)
