"""The step log: one JSON line per training step, written for a measurement (standard library only).

When ``TRAINSPEC_STEP_LOG_DIR`` names a directory, every :class:`~trainspec.stages.StepMetrics` of a
process appends one line per completed step to ``<dir>/rank-<global rank>.jsonl``::

    {"pid":4242,"meter":1,"step":17,"t":12.503,"stepSeconds":0.9,"waitSeconds":0.31,"loopSeconds":1.2,"samples":136,"tokens":null}

``step`` counts the meter's completed steps; ``t`` is the meter's clock (``time.perf_counter``) at
the end of that step; the seconds, ``samples`` and ``tokens`` are the meter's totals so far
(``samples``/``tokens``: None until the script counts them with ``step(samples=..., tokens=...)``).
Every figure is cumulative, so any two lines of one meter give the rate and the data-wait share
between them (:mod:`trainspec.stages.step_rates` reads them). ``pid`` and ``meter`` tell apart the
series of a restarted process and of a second meter in one process.

``trainspec ladder run`` sets the variable for every rung it runs. Lines are written as the steps
end (line-buffered: a rung killed mid-way keeps what it measured), about 150 bytes each: meant for
bounded measurement runs, not for a month-long job. A directory that cannot be written is said
once on stderr and the steps go on unlogged: a measurement never stops training.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from trainspec.dsl.kube_facts import STEP_LOG_DIR_ENV

__all__ = ["FILE_GLOB", "StepLogWriter", "open_step_log", "step_log_path"]

#: The files of one directory, one per rank.
FILE_GLOB = "rank-*.jsonl"


def step_log_path(directory: str | os.PathLike[str], rank: int) -> Path:
    """The file rank ``rank`` appends to."""
    return Path(directory) / f"rank-{rank}.jsonl"


class StepLogWriter:
    """Appends one meter's step lines to an open text stream (the caller serialises the calls)."""

    def __init__(self, stream: TextIO, meter: int, pid: int | None = None) -> None:
        self._stream: TextIO | None = stream
        self._head = f'{{"pid":{os.getpid() if pid is None else pid},"meter":{meter},'

    def write(
        self,
        steps: int,
        t: float,
        step_seconds: float,
        wait_seconds: float,
        loop_seconds: float,
        samples: int | None,
        tokens: int | None,
    ) -> None:
        """One step's line; on an error the log is closed and said once (training goes on)."""
        if self._stream is None:
            return
        # Formatted by hand (no json.dumps): this runs once per step of the training loop.
        line = (
            f'{self._head}"step":{steps},"t":{t!r},"stepSeconds":{step_seconds!r},"waitSeconds":{wait_seconds!r},'
            f'"loopSeconds":{loop_seconds!r},"samples":{_int(samples)},"tokens":{_int(tokens)}}}\n'
        )
        try:
            self._stream.write(line)
        except (OSError, ValueError) as exc:
            print(f"trainspec: step log: {exc}; no more steps are logged", file=sys.stderr, flush=True)
            self.close()

    def close(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            with contextlib.suppress(OSError):
                stream.close()


def _int(value: int | None) -> str:
    return "null" if value is None else str(int(value))


def open_step_log(meter: int, env: Mapping[str, str] | None = None) -> StepLogWriter | None:
    """A writer for this process's rank when ``TRAINSPEC_STEP_LOG_DIR`` is set, else None.

    Problems (an unreadable rank, a directory that cannot be written) are said once on stderr and
    give None: the caller's steps go on unlogged.
    """
    env = os.environ if env is None else env
    directory = env.get(STEP_LOG_DIR_ENV, "").strip()
    if not directory:
        return None
    from trainspec.stages.ranks import process_info

    try:
        rank = process_info(env).rank
        path = step_log_path(directory, rank)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Line-buffered: each step's line reaches the file as the step ends (a killed run keeps its lines).
        stream = path.open("a", encoding="utf-8", buffering=1)
    except (OSError, RuntimeError) as exc:  # RuntimeError: ShardAssignmentError, a rank variable that is no number
        print(f"trainspec: {STEP_LOG_DIR_ENV}={directory}: {exc}; steps are not logged", file=sys.stderr, flush=True)
        return None
    return StepLogWriter(stream, meter)
