"""Settings and run options of the data-sharding stage.

``Settings`` decide *what* the output is: they are written into the manifest and are part of
the cache key. ``Options`` decide *how* the stage runs (validation, durability, block size)
and never change the shard contents (``count_records`` only adds counts to an index).

``mode``: ``index`` (the default for ``contiguous``) writes only the manifest, byte ranges
or row groups or whole files of the source per shard; ``copy`` (the default, and the only
mode, for ``hashed`` and ``round-robin``) materialises shard files. ``balance`` places
contiguous boundaries by record count (exact within one) or by bytes (no full scan).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

# Records, not dataclasses: importing dataclasses (inspect, ast...) was a sixth of the start-up of
# an index run balanced by bytes, which is nearly all start-up (bench/shard.py).
from trainspec.dsl.record import Record, field, fields

FORMATS = ("jsonl", "text", "parquet", "files")
SHARD_BY = ("rank", "node")
ASSIGNMENTS = ("contiguous", "hashed", "round-robin")
MODES = ("index", "copy")
BALANCES = ("records", "bytes")
CHECKSUMS = ("none", "xxh3", "sha256")

#: Granularity of the newline index of a counting pass (a 4-byte count per block: 4 MB per TB
#: of input) and so the most a record-count boundary reads to find its byte offset (half of
#: it on average; on object storage that is what a boundary downloads). Reads and copies
#: themselves go through 256 KiB buffers (``fastio.IO_BUFFER``).
DEFAULT_BLOCK_SIZE = 1 << 20


def default_mode(assignment: str) -> str:
    """Index mode for contiguous assignment (its shards are ranges), copy mode for the others."""
    return "index" if assignment == "contiguous" else "copy"


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


class Settings(Record):
    """What to produce. Recorded in the manifest; a change means a re-shard."""

    format: str
    num_shards: int
    shard_by: str = "rank"
    assignment: str = "contiguous"
    seed: int = 0
    #: "" means the default for the assignment (:func:`default_mode`).
    mode: str = ""
    balance: str = "records"
    checksum: str = "none"

    if not TYPE_CHECKING:  # type checkers see the record's own __init__

        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            if not self.mode:  # frozen: resolve the default once, here
                object.__setattr__(self, "mode", default_mode(self.assignment))

    def as_dict(self) -> dict[str, object]:
        """The settings as the manifest stores them."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


class Options(Record):
    """How to run. Never changes the bytes of the output."""

    validate: bool = False
    allow_empty_shards: bool = False
    #: fsync every output file and directory before publishing (crash safety on node failure;
    #: a killed *process* is covered by the rename alone).
    durable: bool = True
    block_size: int = DEFAULT_BLOCK_SIZE
    #: Threads copying shards concurrently (reads, writes and sha256 all release the GIL).
    workers: int = field(default_factory=lambda: max(1, min(8, _cpu_count())))
    #: Local line sources at least this big are newline-counted by forked worker processes,
    #: because ``bytes.count`` holds the GIL.
    parallel_count_min_bytes: int = 128 << 20
    #: Index/copy mode with balance ``bytes``: also count the records of every range (a full read).
    count_records: bool = False
    #: Copy contiguous ranges in the kernel (copy_file_range/sendfile) where it can; tests turn
    #: it off to cover the read/write path.
    kernel_copy: bool = True


class Config(Record):
    """Everything a run needs, after merging flags, environment and defaults."""

    source: str
    output: Path
    settings: Settings
    options: Options
    force: bool
    verify: bool
