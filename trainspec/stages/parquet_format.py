"""Sharding parquet rows through pyarrow (imported lazily; the ``data`` extra), copy mode.

Index mode needs only the footers (:func:`inspect_row_groups`; ``index_format`` assigns
whole row groups).

All input files must have the same schema (metadata ignored). The row count comes from the
file footers, so ``contiguous`` needs no counting pass: batches are read in order and sliced
at the shard boundaries. ``round-robin`` uses ``take`` with strided indexes per batch;
``hashed`` hashes a canonical JSON form of each row (sorted keys; bytes as hex, dates and
decimals as strings), which is stable across runs for the same data. Output shards keep the
source's compression codec and are written with one shard writer open at a time
(contiguous) or all of them with bounded per-shard buffers (the others).
"""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trainspec.stages.assignment import contiguous_bounds, hash_key, hashed_shard
from trainspec.stages.config import Options, Settings
from trainspec.stages.errors import StageError
from trainspec.stages.fastio import checksum_path
from trainspec.stages.line_plan import check_record_count
from trainspec.stages.manifest import shard_relpath
from trainspec.stages.sink import output_error
from trainspec.stages.sources import DATA_EXTRA, Source, SourceFile

MAX_BATCH_ROWS = 65536
#: Target decoded size of one read batch; rows per batch follow from the footer's byte counts.
BATCH_BYTES = 1 << 20
#: Output row groups are collected up to about this size before being written.
ROW_GROUP_BYTES = 4 << 20


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise StageError(f"parquet needs pyarrow: {DATA_EXTRA}") from None
    # Arrow's default pools (mimalloc/jemalloc) keep freed blocks cached, which shows up as
    # resident memory; the system allocator gives them back and decoding is not
    # allocation-bound, so peak RSS stays near one batch per column.
    pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    return pyarrow, pyarrow.parquet


class _Out:
    """One output parquet shard; created on first use so empty shards still get a valid file."""

    def __init__(self, pq: Any, path: Path, schema: Any, compression: str, checksum: str) -> None:
        self.pq, self.path, self.schema, self.compression = pq, path, schema, compression
        self.checksum = checksum
        self.writer: Any = None
        self.records = 0
        self.pending: list[Any] = []
        self.pending_bytes = 0
        self.result: dict[str, Any] | None = None

    def write(self, table_or_batch: Any) -> None:
        try:
            if self.writer is None:
                self.writer = self.pq.ParquetWriter(str(self.path), self.schema, compression=self.compression)
            if hasattr(table_or_batch, "to_batches"):
                self.writer.write_table(table_or_batch)
            else:
                self.writer.write_batch(table_or_batch)
        except OSError as exc:
            raise output_error(self.path, exc) from None
        self.records += table_or_batch.num_rows

    def buffer(self, batch: Any, limit: int, pa: Any) -> None:
        """Collect small slices so row groups do not become tiny; flush past ``limit`` bytes."""
        self.pending.append(batch)
        self.pending_bytes += batch.nbytes
        if self.pending_bytes >= limit:
            self.flush(pa)

    def flush(self, pa: Any) -> None:
        if self.pending:
            self.write(pa.Table.from_batches(self.pending, schema=self.schema))
            self.pending, self.pending_bytes = [], 0

    def close(self, pa: Any) -> dict[str, Any]:
        """Write what is buffered and the footer; return records, bytes and checksum of the file.

        Idempotent: a writer holds page and compression buffers until closed, so contiguous
        sharding closes each shard as soon as it is complete and again (cheaply) at the end.
        """
        if self.result is not None:
            return self.result
        self.flush(pa)
        try:
            if self.writer is None:
                self.pq.ParquetWriter(str(self.path), self.schema, compression=self.compression).close()
            else:
                self.writer.close()
        except OSError as exc:
            raise output_error(self.path, exc) from None
        self.writer = None
        self.result = {
            "records": self.records,
            "bytes": self.path.stat().st_size,
            "checksum": checksum_path(self.path, self.checksum),
        }
        return self.result


def _open(pq: Any, source: Source, f: SourceFile) -> Any:
    try:
        # Stream column chunks through a small buffer instead of pre-buffering whole row groups.
        # Local files by path: Arrow's own reader, no Python file object in the read loop.
        where = f.location if source.is_local else source.open(f)
        return pq.ParquetFile(where, buffer_size=1 << 20, pre_buffer=False)
    except StageError:
        raise
    except Exception as exc:
        raise StageError(f"{f.location} is not a readable parquet file: {str(exc).splitlines()[0]}") from None


def _inspect(pq: Any, source: Source) -> tuple[Any, list[int], str, int]:
    """Common schema, rows per file, the codec of the first column chunk, rows per batch."""
    schema, rows, codec = None, [], "snappy"
    first = ""
    row_bytes, row_count = 0, 0
    for f in source.files:
        pf = _open(pq, source, f)
        meta = pf.metadata
        if schema is None:
            schema, first = pf.schema_arrow, f.rel
            if meta.num_row_groups and meta.num_columns:
                codec = str(meta.row_group(0).column(0).compression).lower()
        elif not pf.schema_arrow.equals(schema, check_metadata=False):
            raise StageError(f"{f.rel} has a different parquet schema than {first}; all input files must match")
        rows.append(meta.num_rows)
        for g in range(meta.num_row_groups):
            row_bytes += meta.row_group(g).total_byte_size  # uncompressed
            row_count += meta.row_group(g).num_rows
        pf.close()
    batch = max(1, min(MAX_BATCH_ROWS, BATCH_BYTES * max(row_count, 1) // max(row_bytes, 1)))
    return schema, rows, ("none" if codec in ("uncompressed", "") else codec), batch


def inspect_row_groups(source: Source) -> list[tuple[int, int, int, int]]:
    """``(file index, row group, rows, compressed bytes)`` of every row group, from the footers.

    All files must share a schema (as in copy mode). Only footers are read: a ranged read
    near each file's end on object storage.
    """
    _pa, pq = _pyarrow()
    units: list[tuple[int, int, int, int]] = []
    schema, first = None, ""
    for fi, f in enumerate(source.files):
        pf = _open(pq, source, f)
        try:
            if schema is None:
                schema, first = pf.schema_arrow, f.rel
            elif not pf.schema_arrow.equals(schema, check_metadata=False):
                raise StageError(f"{f.rel} has a different parquet schema than {first}; all input files must match")
            meta = pf.metadata
            for g in range(meta.num_row_groups):
                group = meta.row_group(g)
                size = sum(group.column(c).total_compressed_size for c in range(group.num_columns))
                units.append((fi, g, group.num_rows, size))
        finally:
            pf.close()
    return units


def _batches(pq: Any, source: Source, batch_rows: int) -> Iterator[Any]:
    for f in source.files:
        pf = _open(pq, source, f)
        try:
            yield from pf.iter_batches(batch_size=batch_rows, use_threads=False)
        finally:
            pf.close()


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime, datetime.timedelta, decimal.Decimal)):
        return str(value)
    return repr(value)


def row_bytes(row: dict[str, Any]) -> bytes:
    """The canonical bytes of a parquet row that ``hashed`` assignment hashes."""
    return json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_json_default).encode()


def shard_parquet(source: Source, settings: Settings, options: Options, staging: Path) -> list[dict[str, Any]]:
    """Write parquet shards into ``staging/shards``; return per-shard records/bytes/checksum."""
    pa, pq = _pyarrow()
    n = settings.num_shards
    schema, rows, codec, batch_rows = _inspect(pq, source)
    total = sum(rows)
    check_record_count(total, n, options.allow_empty_shards, what="rows")
    (staging / "shards").mkdir()
    outs = [_Out(pq, staging / shard_relpath(i, n, "parquet"), schema, codec, settings.checksum) for i in range(n)]
    seen = 0
    try:
        if settings.assignment == "contiguous":
            bounds = contiguous_bounds(total, n)
            shard = 0
            for batch in _batches(pq, source, batch_rows):
                offset = 0
                while offset < batch.num_rows:
                    while seen >= bounds[shard + 1]:
                        shard += 1
                    take = min(batch.num_rows - offset, bounds[shard + 1] - seen)
                    if shard and outs[shard - 1].result is None:
                        outs[shard - 1].close(pa)  # complete: free its buffers now
                    outs[shard].buffer(batch.slice(offset, take), ROW_GROUP_BYTES, pa)
                    offset += take
                    seen += take
        else:
            key = hash_key(settings.seed)
            limit = max(256 << 10, (32 << 20) // n)
            for batch in _batches(pq, source, batch_rows):
                if settings.assignment == "round-robin":
                    picks = [list(range((s - seen) % n, batch.num_rows, n)) for s in range(n)]
                else:
                    picks = [[] for _ in range(n)]
                    for j, row in enumerate(batch.to_pylist()):
                        picks[hashed_shard(row_bytes(row), key, n)].append(j)
                for s, idx in enumerate(picks):
                    if idx:
                        outs[s].buffer(batch.take(pa.array(idx, type=pa.int64())), limit, pa)
                seen += batch.num_rows
        if seen != total:
            raise StageError(f"parquet footers promised {total} rows but {seen} were read; did the source change?")
        results = [o.close(pa) for o in outs]
    except StageError:
        raise
    except OSError as exc:
        raise StageError(f"error while sharding parquet: {exc.strerror or exc}") from None
    return results
