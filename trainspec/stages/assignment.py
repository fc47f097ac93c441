"""Which shard each record goes to. Pure arithmetic, no I/O, standard library only.

* ``contiguous``: shard i gets records ``[bounds[i], bounds[i+1])``; the first ``T % N`` shards
  get one record more, so counts differ by at most one and the input order is preserved.
* ``round-robin``: record k goes to shard ``k % N``; counts differ by at most one.
* ``hashed``: record k goes to ``blake2b(record bytes, key=seed) % N``. The same record always
  lands in the same shard for the same seed and N, whatever its position, so appending data
  does not move old records. Balance is statistical: each shard's count is Binomial(T, 1/N),
  i.e. about ``T/N ± sqrt(T/N)``; small datasets can leave a shard empty.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Sequence


def contiguous_bounds(total: int, num_shards: int) -> list[int]:
    """Record-index boundaries: shard i holds records ``[b[i], b[i+1])``; ``len(b) == N + 1``."""
    base, extra = divmod(total, num_shards)
    bounds = [0]
    for i in range(num_shards):
        bounds.append(bounds[-1] + base + (1 if i < extra else 0))
    return bounds


def hash_key(seed: int) -> bytes:
    """The blake2b key for a seed (blake2b keys are at most 64 bytes; a decimal int fits)."""
    return b"trainspec:" + str(seed).encode()


def hashed_shard(record: bytes, key: bytes, num_shards: int) -> int:
    """Shard of one record under ``hashed`` assignment (stable across runs and machines)."""
    digest = hashlib.blake2b(record, digest_size=8, key=key).digest()
    return int.from_bytes(digest, "big") % num_shards


def greedy_by_bytes(sizes: Sequence[tuple[str, int]], num_shards: int) -> list[list[int]]:
    """Balance whole files over shards by bytes: largest first onto the least-loaded shard.

    ``sizes`` is ``(path, bytes)`` per file; returns, per shard, the indexes into ``sizes``.
    Ties: files of equal size go in path order; shards of equal load are ranked by file count
    and then index, so a shard without files is always chosen before one with a zero-byte
    file (no empty shard while there are at least as many files as shards).
    """
    order = sorted(range(len(sizes)), key=lambda i: (-sizes[i][1], sizes[i][0]))
    heap = [(0, 0, shard) for shard in range(num_shards)]
    out: list[list[int]] = [[] for _ in range(num_shards)]
    for i in order:
        load, count, shard = heapq.heappop(heap)
        out[shard].append(i)
        heapq.heappush(heap, (load + sizes[i][1], count + 1, shard))
    return out
