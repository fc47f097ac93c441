"""Settings and run options of the data-sharding stage.

``Settings`` decide *what* the output is: they are written into the manifest and are part of
the cache key. ``Options`` decide *how* the stage runs (validation, durability, block size)
and never change the shard contents.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

FORMATS = ("jsonl", "text", "parquet", "files")
SHARD_BY = ("rank", "node")
ASSIGNMENTS = ("contiguous", "hashed", "round-robin")

#: Read/write block for line formats. Big blocks keep the per-block Python overhead negligible
#: against the memcpy/hash cost, and 8 MiB keeps peak memory far below the 100 MB budget.
DEFAULT_BLOCK_SIZE = 8 << 20


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Settings:
    """What to produce. Recorded in the manifest; a change means a re-shard."""

    format: str
    num_shards: int
    shard_by: str = "rank"
    assignment: str = "contiguous"
    seed: int = 0

    def as_dict(self) -> dict[str, object]:
        """The settings as the manifest stores them."""
        return asdict(self)


@dataclass(frozen=True)
class Options:
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


@dataclass(frozen=True)
class Config:
    """Everything a run needs, after merging flags, environment and defaults."""

    source: str
    output: Path
    settings: Settings
    options: Options
    force: bool
    verify: bool
