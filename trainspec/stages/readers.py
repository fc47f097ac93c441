"""Readers over this rank's shard: byte ranges of the source (index mode) or a shard file (copy mode).

A :class:`ShardReader` is a binary, seekable file object (an :class:`io.BufferedReader`) over
the concatenation of a shard's ranges: ``read``, ``readinto``, ``readline``, iteration by line,
``seek``/``tell`` in the shard's logical stream. That stream holds exactly the bytes the
copy-mode shard file would hold: each range's bytes, plus the newline the stage adds after a
file's last line when the file lacks one, so a record never runs into the next file's first.
``records(start=k)`` and ``lines(start=k)`` resume at record ``k`` (for checkpoint restarts).

On first use every file the reader needs is checked against the manifest (size and mtime_ns,
or the ETag on object storage; the checksum too with ``verify=True``): a difference is
:class:`~trainspec.stages.errors.SourceChangedError`, naming the file and what changed.

Standard library only at import; object storage needs fsspec and its backend in the image.
"""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainspec.stages.errors import ManifestError, SourceChangedError
from trainspec.stages.reader_io import SourceFiles, is_remote

__all__ = ["Range", "RowGroups", "ShardReader", "copy_reader", "index_readers"]

#: Buffer of a reader over local files, and over object storage (one ranged request per fill).
LOCAL_BUFFER = 256 << 10
REMOTE_BUFFER = 8 << 20
_SCAN = 1 << 20  # bytes read at a time while counting records to a resume point


@dataclass(frozen=True)
class Range:
    """Bytes ``[start, end)`` of manifest file ``file``, holding ``records`` records (None: not counted)."""

    file: int
    start: int
    end: int
    records: int | None = None


class _RangesRaw(io.RawIOBase):
    """The raw stream under :class:`ShardReader`: ranges back to back, plus the newlines the stage adds."""

    def __init__(self, files: SourceFiles, ranges: Sequence[Range], *, verify: bool, lines: bool = True) -> None:
        super().__init__()
        self.files, self.ranges = files, list(ranges)
        self._verify, self._lines = verify, lines
        self._checked: set[int] = set()
        self._offsets = [0]  # logical start of range k, known for k < len(self._offsets)
        self._pos = 0
        self._hint = 0

    # Logical lengths are found lazily: a range ending at its file's end needs one byte probed.
    def _length(self, k: int) -> int:
        r = self.ranges[k]
        body = r.end - r.start
        if self._lines and body and r.end == self.files.size(r.file):
            last = memoryview(bytearray(1))
            self._check(r.file)
            if self.files.readinto(r.file, r.end - 1, last) != 1:
                raise SourceChangedError(f"{self.files.path(r.file)} is shorter than the manifest says")
            return body + (last[0] != 0x0A)
        return body

    def offset_of(self, k: int) -> int:
        """Logical offset where range ``k`` starts (``k == len(ranges)``: the stream's length)."""
        while len(self._offsets) <= k:
            n = len(self._offsets) - 1
            self._offsets.append(self._offsets[-1] + self._length(n))
        return self._offsets[k]

    def _range_at(self, pos: int) -> int | None:
        # Reads go forward: start from the range the last read was in, so a shard of many
        # ranges (one per small file) costs a step per range, not a scan from the first.
        k = self._hint if self._hint < len(self.ranges) and self.offset_of(self._hint) <= pos else 0
        while k < len(self.ranges):
            if pos < self.offset_of(k + 1):
                self._hint = k
                return k
            k += 1
        return None

    def _check(self, file: int) -> None:
        if file not in self._checked:
            self.files.check(file, verify=self._verify)
            self._checked.add(file)

    def check_all(self) -> None:
        """Check every file the ranges refer to (the reader does this when it opens)."""
        for r in self.ranges:
            self._check(r.file)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = self.offset_of(len(self.ranges)) + offset
        else:
            raise ValueError(f"invalid whence ({whence})")
        if pos < 0:  # as a file does: EINVAL
            raise OSError(errno.EINVAL, f"negative seek position {pos}")
        self._pos = pos
        return pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        k = self._range_at(self._pos)
        if k is None or not len(view):
            return 0
        r = self.ranges[k]
        inside = self._pos - self.offset_of(k)
        body = r.end - r.start
        if inside < body:
            self._check(r.file)
            want = min(len(view), body - inside)
            n = self.files.readinto(r.file, r.start + inside, view[:want])
            if n == 0:
                raise SourceChangedError(
                    f"{self.files.path(r.file)} ended at byte {r.start + inside}, before the manifest's range "
                    f"end {r.end}: it changed since the shard manifest was written"
                )
        else:  # the newline the stage adds after a file's last line
            view[0] = 0x0A
            n = 1
        self._pos += n
        return n

    def close(self) -> None:
        if not self.closed:
            self.files.close()
        super().close()


class ShardReader(io.BufferedReader):
    """A binary file over a shard's records (see the module docstring).

    ``index`` is the shard's index, ``num_records`` its record count (None when the stage did
    not count, balance ``bytes``), ``first_record`` the global number of its first record,
    ``name`` what it reads (a path or ``shard-<index>``). ``fetched`` is the bytes read from
    storage so far.
    """

    def __init__(
        self,
        raw: _RangesRaw,
        *,
        index: int,
        num_records: int | None,
        first_record: int | None,
        name: str,
        buffer_size: int = LOCAL_BUFFER,
    ) -> None:
        super().__init__(raw, buffer_size)
        self._raw = raw
        self.index, self.num_records, self.first_record = index, num_records, first_record
        self._label = name
        raw.check_all()

    @property
    def name(self) -> str:  # BufferedReader's comes from the raw file
        return self._label

    @property
    def fetched(self) -> int:
        """Bytes fetched from storage by this reader (ranged reads and probes)."""
        return self._raw.files.fetched

    def __repr__(self) -> str:
        return f"<ShardReader {self._label} records={self.num_records}>"

    def seek_record(self, k: int) -> int:
        """Position the reader at the start of record ``k`` of this shard; returns the byte offset.

        Whole ranges with known record counts are skipped without reading; inside a range the
        newlines are counted in 1 MiB reads. Past the last record: the end of the stream.
        """
        if k < 0:
            raise ValueError(f"record offset {k} is negative")
        raw, left, k_range = self._raw, k, 0
        while k_range < len(raw.ranges) and raw.ranges[k_range].records is not None:
            count = raw.ranges[k_range].records
            assert count is not None
            if left < count:
                break
            left -= count
            k_range += 1
        pos = raw.offset_of(k_range) if k_range < len(raw.ranges) else raw.offset_of(len(raw.ranges))
        self.seek(pos)
        while left:
            chunk = self.read(_SCAN)
            if not chunk:
                break
            found = chunk.count(b"\n")
            if found < left:
                left -= found
                pos += len(chunk)
                continue
            at = -1
            for _ in range(left):
                at = chunk.index(b"\n", at + 1)
            pos += at + 1
            left = 0
        return self.seek(pos)

    def records(self, start: int = 0) -> Iterator[bytes]:
        """Each record from record ``start`` on, as bytes without its newline."""
        self.seek_record(start)
        for line in self:
            yield line[:-1] if line.endswith(b"\n") else line

    def lines(self, start: int = 0, encoding: str = "utf-8") -> Iterator[str]:
        """Each record from record ``start`` on, decoded, without its newline."""
        for record in self.records(start):
            yield record.decode(encoding)


@dataclass(frozen=True)
class RowGroups:
    """Index-mode parquet: whole row groups of one source file, by reference (read them with pyarrow)."""

    path: str
    rel: str
    row_groups: tuple[int, ...]
    records: int | None
    #: The file's manifest entry (size, mtime_ns or ETag, checksum), checked when it is opened.
    entry: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def open(self, env: Mapping[str, str] | None = None, *, verify: bool = False) -> ShardReader:
        """The file's exact bytes, checked against the manifest: ``pyarrow.parquet.ParquetFile(groups.open())``."""
        files = SourceFiles([self.entry or {"path": self.path, "size": os.stat(self.path).st_size}], env=env)
        raw = _RangesRaw(files, [Range(0, 0, files.size(0))], verify=verify, lines=False)
        return ShardReader(
            raw, index=-1, num_records=self.records, first_record=None, name=self.path, buffer_size=_buffer(files, 1)
        )


def _buffer(files: SourceFiles, count: int) -> int:
    return REMOTE_BUFFER if any(is_remote(files.path(i)) for i in range(count)) else LOCAL_BUFFER


def _ranges(shard: Mapping[str, Any]) -> list[Range]:
    try:
        return [
            Range(
                int(r["file"]), int(r["start"]), int(r["end"]), None if r.get("records") is None else int(r["records"])
            )
            for r in shard["ranges"]
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise ManifestError(f"shard {shard.get('index')} of the manifest has a malformed range ({exc})") from None


def index_readers(
    manifest: Mapping[str, Any], index: int, *, verify: bool = False, env: Mapping[str, str] | None = None
) -> list[Any]:
    """Readers over shard ``index`` of an index-mode manifest.

    ``jsonl``/``text``: one :class:`ShardReader` over all of the shard's ranges. ``files``: one
    :class:`ShardReader` per file over its exact bytes (``name`` is its path relative to the
    source root).
    ``parquet``: one :class:`RowGroups` per file.
    """
    shard = manifest["shards"][index]
    entries = manifest.get("files") or []
    fmt = manifest["settings"].get("format")
    if fmt == "parquet":
        return [
            RowGroups(
                str(entries[r["file"]]["path"]),
                str(entries[r["file"]].get("rel", "")),
                tuple(int(g) for g in r.get("row_groups", ())),
                r.get("records"),
                entries[r["file"]],
            )
            for r in shard["ranges"]
        ]
    ranges = _ranges(shard)
    if fmt == "files":
        out = []
        for r in ranges:
            files = SourceFiles(entries, env=env)
            raw = _RangesRaw(files, [r], verify=verify, lines=False)  # a file's own bytes, no newline added
            out.append(
                ShardReader(
                    raw,
                    index=index,
                    num_records=r.records,
                    first_record=None,
                    name=str(entries[r.file].get("rel") or entries[r.file]["path"]),
                    buffer_size=_buffer(files, len(entries)),
                )
            )
        return out
    files = SourceFiles(entries, env=env)
    raw = _RangesRaw(files, ranges, verify=verify)
    return [
        ShardReader(
            raw,
            index=index,
            num_records=shard.get("records"),
            first_record=shard.get("first_record"),
            name=f"shard-{index:05d}",
            buffer_size=_buffer(files, len(entries)),
        )
    ]


def copy_reader(data_dir: Path, manifest: Mapping[str, Any], index: int, *, verify: bool = False) -> ShardReader:
    """A reader over shard ``index``'s materialised file (copy mode, manifest version 1 or 2)."""
    shard = manifest["shards"][index]
    if "files" in shard:
        raise ManifestError("a files-format shard is a directory of files: use my_shards() for their paths")
    path = data_dir / shard["path"]
    checksum = shard.get("checksum") or (f"sha256:{shard['sha256']}" if shard.get("sha256") else None)
    entry: dict[str, Any] = {"path": str(path), "size": int(shard["bytes"]), "checksum": checksum}
    files = SourceFiles([entry])
    raw = _RangesRaw(files, [Range(0, 0, int(shard["bytes"]), shard.get("records"))], verify=verify)
    return ShardReader(raw, index=index, num_records=shard.get("records"), first_record=None, name=str(path))
