"""Resolve ``STORAGE_URI`` into a deterministic, sorted list of input files.

Forms: a local path (file, directory walked recursively, or glob), ``file://path``,
``pvc://<claim>/<path>`` (mounted at ``$TRAINSPEC_PVC_ROOT/<claim>``, default ``/mnt/pvc``),
and any other ``scheme://`` URL through fsspec (``s3://``, ``gs://``, ``hf://`` ...), which is
imported only for those schemes.

Directory walks skip names starting with ``.`` or ``_`` (``.DS_Store``, ``_SUCCESS``, our own
temp directories), follow no directory symlinks, and never descend into the output
directory. Files are ordered by their relative POSIX path so every run sees the same order.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from trainspec.dsl.kube_facts import (
    PVC_ROOT_ENV,  # the in-pod contract, shared with the compiler
)
from trainspec.dsl.record import Record  # start-up: see stages/config.py
from trainspec.extras import install_hint
from trainspec.stages.errors import StageError, UsageError

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$")
_MAGIC = re.compile(r"[*?\[]")
DATA_EXTRA = install_hint("data")
#: Object-storage metadata keys that identify a version of an object, most specific first.
_STAMP_KEYS = ("ETag", "etag", "md5Hash", "generation", "LastModified", "mtime", "updated", "last_modified")


class Readable(Protocol):
    """What the sharders need from an open input file (``io.FileIO`` and fsspec files both fit)."""

    def read(self, size: int = -1, /) -> bytes: ...
    def readinto(self, buffer: Any, /) -> int | None: ...
    def seek(self, offset: int, whence: int = 0, /) -> int: ...
    def close(self) -> None: ...
    def __enter__(self) -> Any: ...
    def __exit__(self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None, /) -> Any: ...


class SourceFile(Record):
    """One input file: ``rel`` orders it and names it inside ``files`` shards."""

    rel: str
    size: int
    stamp: str  # mtime_ns for local files, ETag/mtime for object storage
    location: str  # local path, or the path fsspec understands


class Source(Record, frozen=False):
    """The resolved input: the files, where they live, and how to open them."""

    uri: str
    files: list[SourceFile]
    fs: Any = None  # an fsspec filesystem, or None for local files
    #: Called with the number of bytes each read returned (the stage's progress line); None: no one.
    on_read: Any = None

    @property
    def is_local(self) -> bool:
        """True if files are read straight from the local filesystem."""
        return self.fs is None

    @property
    def total_bytes(self) -> int:
        """Sum of the input file sizes."""
        return sum(f.size for f in self.files)

    def open(self, f: SourceFile, block_size: int = 8 << 20) -> Readable:
        """Open an input file for binary reading (seekable, supports ``readinto``)."""
        try:
            if self.fs is None:
                handle: Readable = open(f.location, "rb", buffering=0)  # noqa: SIM115 (returned: the caller closes it)
            else:
                handle = self.fs.open(f.location, "rb", block_size=block_size)
        except OSError as exc:
            raise StageError(f"cannot read source file {f.location}: {exc.strerror or exc}") from None
        return _Counted(handle, self.on_read) if self.on_read is not None else handle

    def read_range(self, f: SourceFile, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of a file (fewer at its end): ``pread`` locally, one ranged GET
        (``fs.cat_file``) on object storage - no read-ahead, so a boundary search downloads
        exactly what it reads."""
        try:
            if self.fs is None:
                fd = os.open(f.location, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    return os.pread(fd, end - start, start)
                finally:
                    os.close(fd)
            return bytes(self.fs.cat_file(f.location, start=start, end=end))
        except OSError as exc:
            raise StageError(f"cannot read source file {f.location}: {exc.strerror or exc}") from None

    def changed_files(self) -> list[str]:
        """Local files whose size or mtime differ from when they were listed (empty if none).

        Object-storage sources are not re-checked (it would cost a request per object).
        """
        if self.fs is not None:
            return []
        out = []
        for f in self.files:
            try:
                now = _local_file(f.location, f.rel)
            except OSError:
                out.append(f.location)
                continue
            if (now.size, now.stamp) != (f.size, f.stamp):
                out.append(f.location)
        return out

    def summary(self) -> dict[str, Any]:
        """The manifest's ``source`` entry; ``fingerprint`` changes whenever any file does."""
        listing = json.dumps([[f.rel, f.size, f.stamp] for f in self.files], separators=(",", ":"))
        return {
            "uri": self.uri,
            "files": len(self.files),
            "bytes": self.total_bytes,
            "fingerprint": "sha256:" + hashlib.sha256(listing.encode()).hexdigest(),
        }


def _hidden(rel: str) -> bool:
    return any(part.startswith((".", "_")) for part in rel.split("/"))


def _local_file(path: str, rel: str) -> SourceFile:
    st = os.stat(path)
    return SourceFile(rel=rel, size=st.st_size, stamp=str(st.st_mtime_ns), location=path)


def _walk(root: str, exclude: str | None) -> list[SourceFile]:
    out: list[SourceFile] = []

    def onerror(exc: OSError) -> None:
        raise StageError(f"cannot list source directory {exc.filename}: {exc.strerror}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        # Prune in place so os.walk does not descend; sorted for a stable walk.
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith((".", "_")) and os.path.realpath(os.path.join(dirpath, d)) != exclude
        )
        for name in filenames:
            if name.startswith((".", "_")):
                continue
            path = os.path.join(dirpath, name)
            if os.path.isfile(path):
                out.append(_local_file(path, os.path.relpath(path, root).replace(os.sep, "/")))
    return sorted(out, key=lambda f: f.rel)


def _glob_base(pattern: str) -> str:
    """The directory part of a glob before its first wildcard; relative paths start there."""
    parts = pattern.split("/")
    fixed = []
    for part in parts[:-1]:
        if _MAGIC.search(part):
            break
        fixed.append(part)
    return "/".join(fixed) or ("/" if pattern.startswith("/") else ".")


def _resolve_local(uri: str, path: str, exclude: Path | None) -> list[SourceFile]:
    excl = os.path.realpath(exclude) if exclude is not None else None
    if _MAGIC.search(path) and not os.path.exists(path):
        base = _glob_base(path)
        matches = [m for m in glob.glob(path, recursive=True) if os.path.isfile(m)]
        files = [_local_file(m, os.path.relpath(m, base).replace(os.sep, "/")) for m in matches]
        files = [f for f in files if excl is None or not os.path.realpath(f.location).startswith(excl + os.sep)]
        return sorted(files, key=lambda f: f.rel)
    if not os.path.exists(path):
        raise StageError(f"source not found: {uri}" + (f" (looked at {path})" if path != uri else ""))
    if os.path.isdir(path):
        if not os.access(path, os.R_OK | os.X_OK):
            raise StageError(f"cannot read source directory {path}: permission denied")
        return _walk(path, excl)
    if not os.access(path, os.R_OK):
        raise StageError(f"cannot read source file {path}: permission denied")
    return [_local_file(path, os.path.basename(path))]


def _pvc_path(rest: str, env: Mapping[str, str]) -> str:
    claim, _, sub = rest.partition("/")
    if not claim:
        raise UsageError("pvc:// source needs a claim name: pvc://<claim>/<path>")
    if ".." in sub.split("/") or claim in (".", ".."):
        raise UsageError(f"pvc:// path may not contain '..': pvc://{rest}")
    root = env.get(PVC_ROOT_ENV) or "/mnt/pvc"
    return os.path.join(root, claim, sub) if sub else os.path.join(root, claim)


def _fsspec_fs(uri: str, scheme: str, env: Mapping[str, str]) -> tuple[Any, str]:
    try:
        import fsspec  # lazy: only object storage needs it
    except ImportError:
        raise StageError(f"{scheme}:// sources need fsspec: {DATA_EXTRA}") from None
    kwargs: dict[str, Any] = {}
    if scheme in ("s3", "s3a"):
        endpoint = env.get("TRAINSPEC_S3_ENDPOINT") or env.get("AWS_ENDPOINT_URL")
        if endpoint:
            kwargs["endpoint_url"] = endpoint
    try:
        return fsspec.core.url_to_fs(uri, **kwargs)
    except ImportError as exc:
        # s3/gs backends come with the data extra; others (hf://, az://) are the image's business.
        hint = DATA_EXTRA if scheme in ("s3", "s3a", "gs", "gcs") else "install that fsspec backend in the image"
        raise StageError(f"{scheme}:// sources need an fsspec backend ({exc}): {hint}") from None
    except ValueError as exc:
        raise UsageError(f"unsupported source {uri}: {exc}") from None


def _stamp(info: Mapping[str, Any]) -> str:
    for key in _STAMP_KEYS:
        if info.get(key) not in (None, ""):
            return str(info[key])
    return ""


def _resolve_fsspec(uri: str, scheme: str, env: Mapping[str, str]) -> Source:
    fs, path = _fsspec_fs(uri, scheme, env)
    path = path.rstrip("/")
    try:
        if _MAGIC.search(path):
            base = _glob_base(path)
            found = fs.glob(path, detail=True)
        else:
            info = fs.info(path)
            if info.get("type") == "file":
                base = path.rsplit("/", 1)[0] if "/" in path else ""
                found = {info.get("name", path): info}
            else:
                base = path
                found = fs.find(path, detail=True)
    except FileNotFoundError:
        raise StageError(f"source not found: {uri}") from None
    except PermissionError as exc:
        raise StageError(f"cannot read source {uri}: permission denied ({exc})") from None
    except Exception as exc:
        raise StageError(
            f"cannot list source {uri}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        ) from None
    files = []
    for name, info in found.items():
        if info.get("type", "file") != "file":
            continue
        name = name.rstrip("/")
        rel = name[len(base) + 1 :] if base and name.startswith(base + "/") else name.rsplit("/", 1)[-1]
        if not rel or _hidden(rel):
            continue
        files.append(SourceFile(rel=rel, size=int(info.get("size") or 0), stamp=_stamp(info), location=name))
    return Source(uri=uri, files=sorted(files, key=lambda f: f.rel), fs=fs)


def resolve_source(uri: str, env: Mapping[str, str], exclude: Path | None = None) -> Source:
    """Turn ``STORAGE_URI`` into a :class:`Source`; raises :class:`StageError` if there is nothing to read.

    ``exclude`` (the output directory) is never listed, so an output inside the source
    directory does not feed on itself.
    """
    if not uri:
        raise UsageError("no source: set STORAGE_URI or pass --source")
    match = _SCHEME.match(uri)
    if match and match.group(1).lower() not in ("file", "pvc"):
        source = _resolve_fsspec(uri, match.group(1).lower(), env)
    else:
        if match and match.group(1).lower() == "pvc":
            path = _pvc_path(match.group(2), env)
        else:
            path = match.group(2) if match else uri
        source = Source(uri=uri, files=_resolve_local(uri, path, exclude))
        if exclude is not None:
            out = os.path.realpath(exclude)
            for f in source.files:
                if os.path.realpath(f.location).startswith(out + os.sep):
                    raise UsageError(f"source {uri} is inside the output directory {exclude}")
    if not source.files:
        raise StageError(f"no input files found at {uri}")
    return source


class _Counted:
    """A source file that reports how many bytes each read returned (for the progress line)."""

    def __init__(self, inner: Any, report: Any) -> None:
        self._inner, self._report = inner, report

    def read(self, size: int = -1, /) -> bytes:
        data = self._inner.read(size)
        self._report(len(data))
        return data

    def readinto(self, buffer: Any, /) -> int | None:
        count = self._inner.readinto(buffer)
        self._report(count or 0)
        return count

    def __getattr__(self, name: str) -> Any:  # seek, tell, close, context manager...
        return getattr(self._inner, name)

    def __enter__(self) -> _Counted:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()
