"""This rank's records as an iterable (for a PyTorch ``IterableDataset`` or a JAX input loop).

Built on :func:`trainspec.stages.ranks.open_shard`, which picks this rank's shard and opens a
reader over it (:mod:`trainspec.stages.readers`). Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, Protocol

from trainspec.stages.ranks import open_shard

__all__ = ["ShardRecords", "WorkerInfo"]


class WorkerInfo(Protocol):
    """What ``torch.utils.data.get_worker_info()`` returns inside a DataLoader worker (torch not needed)."""

    id: int
    num_workers: int


class ShardRecords:
    """This rank's records as an iterable, for a PyTorch ``IterableDataset`` or a JAX input loop.

    Each iteration opens the shard afresh (:func:`trainspec.stages.ranks.open_shard`), so the
    object holds no open file and pickles to DataLoader workers. ``decode``: ``"json"`` (one
    JSON value per record, the jsonl default), ``"text"`` (str) or ``"bytes"``. ``start``
    resumes at that record of the shard (for a checkpoint restart).

    ``worker_info`` (e.g. ``torch.utils.data.get_worker_info``) splits the records among
    DataLoader workers: when the shard's record count is known each worker reads only its own
    contiguous part; otherwise worker ``w`` of ``n`` takes every ``n``-th record from ``w`` on.
    Without a hook (or when it returns None) one iterator yields every record::

        class Records(ShardRecords, torch.utils.data.IterableDataset):
            pass

        loader = DataLoader(Records(start=resume, worker_info=torch.utils.data.get_worker_info), num_workers=4)
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        start: int = 0,
        decode: Literal["json", "text", "bytes"] = "json",
        verify: bool = False,
        env: Mapping[str, str] | None = None,
        worker_info: Callable[[], WorkerInfo | None] | None = None,
    ) -> None:
        if start < 0:
            raise ValueError(f"start ({start}) must be >= 0")
        if decode not in ("json", "text", "bytes"):
            raise ValueError(f"decode must be json, text or bytes, not {decode!r}")
        self.data_dir = None if data_dir is None else os.fspath(data_dir)
        self.start, self.decode, self.verify = start, decode, verify
        self.env = None if env is None else dict(env)
        self.worker_info = worker_info

    def _part(self, total: int | None) -> tuple[int, int | None, int, int]:
        """(first record, stop or None, step, offset) of this worker's share."""
        info = self.worker_info() if self.worker_info is not None else None
        if info is None or info.num_workers <= 1:
            return self.start, None, 1, 0
        if total is not None:
            left = max(0, total - self.start)
            lo = self.start + left * info.id // info.num_workers
            hi = self.start + left * (info.id + 1) // info.num_workers
            return lo, hi, 1, 0
        return self.start, None, info.num_workers, info.id

    def __iter__(self) -> Iterator[Any]:
        with open_shard(self.data_dir, self.env, verify=self.verify) as reader:
            first, stop, step, offset = self._part(reader.num_records)
            decode = _decoder(self.decode)
            for n, record in enumerate(reader.records(first)):
                if stop is not None and first + n >= stop:
                    break
                if n % step == offset:
                    yield decode(record)


def _decoder(kind: str) -> Callable[[bytes], Any]:
    if kind == "json":
        import json

        return json.loads
    if kind == "text":
        return lambda record: record.decode("utf-8")
    return lambda record: record
