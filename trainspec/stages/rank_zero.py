"""Rank-0-only guards for trackers, logging and reports (in-pod helper; standard library only).

Every process of a data-parallel job runs the same script; experiment trackers, progress
reports and most log lines should come from one of them. The rank is the one
:func:`~trainspec.stages.process_info` reads (``RANK``, else Trainer's ``PET_NODE_RANK`` x
``PET_NPROC_PER_NODE`` + ``LOCAL_RANK``, else ``JAX_PROCESS_ID``, else
``OMPI_COMM_WORLD_RANK``; none of them: a single process, rank 0)::

    from trainspec.stages import is_rank_zero, rank_zero_only

    @rank_zero_only
    def log_metrics(step, loss):       # returns None on every other rank
        tracker.log({"loss": loss}, step=step)

    if is_rank_zero():
        tracker.init(project="llm")

The rank is read when the guarded function is called, not when it is decorated, so a module
that decorates at import time still sees the launcher's environment.

There is deliberately no ``with rank_zero():`` block: Python cannot skip the body of a
``with`` statement without tracing hacks, so such a block would run everywhere; use
``if is_rank_zero():``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

from trainspec.stages.ranks import process_info

__all__ = ["is_rank_zero", "rank_zero_only", "rank_zero_print"]

P = ParamSpec("P")
R = TypeVar("R")


def is_rank_zero(env: Mapping[str, str] | None = None) -> bool:
    """True in the job's global rank 0 (and in a process started without any rank variables)."""
    return process_info(env).rank == 0


def rank_zero_only(fn: Callable[P, R]) -> Callable[P, R | None]:
    """Decorate ``fn`` to run on global rank 0 only; elsewhere the call does nothing and returns None."""

    @functools.wraps(fn)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R | None:
        if not is_rank_zero():
            return None
        return fn(*args, **kwargs)

    return guarded


def rank_zero_print(*args: object, **kwargs: Any) -> None:
    """``print()`` on global rank 0 only (flushed, so lines reach the pod log as they happen)."""
    if is_rank_zero():
        kwargs.setdefault("flush", True)
        print(*args, **kwargs)
