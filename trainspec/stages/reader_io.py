"""Byte access to the files a shard manifest names, by range, with the manifest's fingerprints checked.

Local paths are read with ``os.preadv`` straight into the caller's buffer (no file position
shared between readers, no copy). Any ``scheme://`` path goes through fsspec (imported only
then) with one ranged request per read, clipped to the range, so a reader never fetches much
more than its own bytes: ``fs.cat_file(path, start, end)``, not ``fs.open``'s read-ahead cache.
Object-storage filesystems are built exactly as the sharding stage builds them
(``TRAINSPEC_S3_ENDPOINT`` / ``AWS_ENDPOINT_URL``, the pod's own identity for credentials).

Standard library only at import.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from trainspec.stages.errors import ManifestError, SourceChangedError

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_RERUN = "re-run the sharding stage (the dataset initializer) to index the source again"


def is_remote(path: str) -> bool:
    """True for a ``scheme://`` path (read through fsspec), False for a local one."""
    match = _SCHEME.match(path)
    return match is not None and match.group(1).lower() != "file"


def _local(path: str) -> str:
    return path.removeprefix("file://")


class SourceFiles:
    """The files of one manifest (its ``files`` entries), opened on first use and checked then.

    ``check`` compares size and mtime_ns (local) or ETag (object storage) with the manifest, and
    the checksum too when ``verify`` is set; a difference is :class:`SourceChangedError`.
    """

    def __init__(self, entries: Sequence[Mapping[str, Any]], *, env: Mapping[str, str] | None = None) -> None:
        self._entries = list(entries)
        self._env = os.environ if env is None else env
        self._fds: dict[int, int] = {}
        self._remote: dict[int, tuple[Any, str]] = {}
        #: Bytes returned by ranged reads, per file index (what a reader cost; tests bound it).
        self.fetched = 0

    def entry(self, i: int) -> Mapping[str, Any]:
        """The manifest entry of file ``i``; :class:`ManifestError` for an index it does not have."""
        if not 0 <= i < len(self._entries):
            raise ManifestError(f"the shard manifest's range refers to file {i}, but it lists {len(self._entries)}")
        return self._entries[i]

    def path(self, i: int) -> str:
        """What the reader opens for file ``i``: a local path or a ``scheme://`` URI."""
        return str(self.entry(i)["path"])

    def size(self, i: int) -> int:
        """The size of file ``i`` the manifest recorded."""
        return int(self.entry(i)["size"])

    # -- fingerprints -------------------------------------------------------------------------

    def check(self, i: int, *, verify: bool = False) -> None:
        """Raise :class:`SourceChangedError` if file ``i`` differs from its manifest entry."""
        entry, path = self.entry(i), self.path(i)
        if is_remote(path):
            fs, key = self._fs(i)
            try:
                info = fs.info(key)
            except FileNotFoundError:
                raise SourceChangedError(f"{path} is gone since the shard manifest was written; {_RERUN}") from None
            actual_size, stamp, what = int(info.get("size") or 0), _stamp(info), "ETag"
            want_stamp = entry.get("etag")
        else:
            try:
                st = os.fstat(self._fd(i))
            except OSError as exc:
                raise SourceChangedError(f"{path} cannot be read ({exc.strerror}); {_RERUN}") from None
            actual_size, stamp, what = st.st_size, str(st.st_mtime_ns), "mtime_ns"
            want_stamp = entry.get("mtime_ns")
        if actual_size != int(entry["size"]):
            raise SourceChangedError(
                f"{path} changed since the shard manifest was written: it has {actual_size} bytes, the manifest "
                f"says {entry['size']}; {_RERUN}"
            )
        if want_stamp is not None and str(stamp) != str(want_stamp):
            raise SourceChangedError(
                f"{path} changed since the shard manifest was written: its {what} is {stamp}, the manifest says "
                f"{want_stamp}; {_RERUN}"
            )
        checksum = entry.get("checksum")
        if verify and checksum:
            actual = self.checksum(i, str(checksum).partition(":")[0], len(str(checksum).partition(":")[2]))
            if actual != checksum:
                raise SourceChangedError(
                    f"{path} changed since the shard manifest was written: its checksum is {actual}, the manifest "
                    f"says {checksum}; {_RERUN}"
                )

    def checksum(self, i: int, algorithm: str, hex_length: int = 16) -> str:
        """``"<algorithm>:<hex>"`` of the whole of file ``i`` (xxh3: 64-bit, or 128-bit for 32 hex digits)."""
        digest = new_digest(algorithm, hex_length)
        size, pos, step = self.size(i), 0, 4 << 20
        buf = bytearray(step)
        while pos < size:
            n = self.readinto(i, pos, memoryview(buf)[: min(step, size - pos)])
            if n == 0:
                break
            digest.update(memoryview(buf)[:n])
            pos += n
        return f"{algorithm}:{digest.hexdigest()}"

    # -- reading ------------------------------------------------------------------------------

    def readinto(self, i: int, offset: int, view: memoryview) -> int:
        """Read up to ``len(view)`` bytes of file ``i`` at ``offset`` into ``view``; 0 at its end."""
        if not len(view):
            return 0
        path = self.path(i)
        if is_remote(path):
            fs, key = self._fs(i)
            end = min(offset + len(view), self.size(i))
            if end <= offset:
                return 0
            try:
                data = fs.cat_file(key, start=offset, end=end)
            except FileNotFoundError:
                raise SourceChangedError(f"{path} is gone since the shard manifest was written; {_RERUN}") from None
            view[: len(data)] = data
            count = len(data)
        else:
            try:
                count = os.preadv(self._fd(i), [view], offset)
            except OSError as exc:
                raise SourceChangedError(f"{path} cannot be read ({exc.strerror}); {_RERUN}") from None
        self.fetched += count
        return count

    def close(self) -> None:
        """Close the local files this object opened (remote filesystems hold no per-file state)."""
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            os.close(fd)

    def _fd(self, i: int) -> int:
        fd = self._fds.get(i)
        if fd is None:
            path = _local(self.path(i))
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except FileNotFoundError:
                raise SourceChangedError(f"{path} is gone since the shard manifest was written; {_RERUN}") from None
            except OSError as exc:
                raise SourceChangedError(f"{path} cannot be opened ({exc.strerror}); {_RERUN}") from None
            self._fds[i] = fd
        return fd

    def _fs(self, i: int) -> tuple[Any, str]:
        found = self._remote.get(i)
        if found is None:
            # The stage's own way to reach object storage (endpoint variables, backends, errors).
            from trainspec.stages.errors import StageError
            from trainspec.stages.sources import _fsspec_fs

            path = self.path(i)
            scheme = path.split("://", 1)[0].lower()
            try:
                found = _fsspec_fs(path, scheme, self._env)
            except StageError as exc:  # fsspec or its backend missing in the training image
                raise ManifestError(f"cannot read {path}: {exc}") from None
            self._remote[i] = found
        return found


def _stamp(info: Mapping[str, Any]) -> str:
    # The keys the stage fingerprints objects by, so both sides read the same one.
    from trainspec.stages.sources import _STAMP_KEYS

    for key in _STAMP_KEYS:
        if info.get(key) not in (None, ""):
            return str(info[key])
    return ""


def new_digest(algorithm: str, hex_length: int = 16) -> Any:
    """A hash object for ``sha256`` or ``xxh3`` (the ``xxhash`` package; :class:`ManifestError` without it)."""
    if algorithm == "sha256":
        return hashlib.sha256()
    if algorithm == "xxh3":
        try:
            import xxhash  # optional: only for xxh3 checksums
        except ImportError:
            raise ManifestError(
                "the manifest's checksums are xxh3, which needs the xxhash package "
                "(pip install xxhash), or read with verify=False"
            ) from None
        return xxhash.xxh3_128() if hex_length == 32 else xxhash.xxh3_64()
    raise ManifestError(f"the manifest names checksum algorithm {algorithm!r}; this trainspec knows sha256 and xxh3")
