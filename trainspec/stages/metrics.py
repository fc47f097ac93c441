"""Step and data-wait timers for a training loop (in-pod helper; standard library only).

Is the job starved by its input pipeline? Time the two parts of the loop::

    from trainspec.stages import StepMetrics

    meter = StepMetrics()
    for batch_index in range(total_steps):
        with meter.step():                 # one training step
            with meter.data_wait():        # the time spent waiting for input
                batch = next(batches)
            train_on(batch)
    meter.snapshot().data_wait_fraction    # 0.31: 31% of the loop waited for data

``data_wait()`` may also sit outside ``step()`` (fetch, then step): the loop time is then the
step time plus the waits outside any step, so the fraction means the same in both layouts.
A block that raises still counts its time (a ``StopIteration`` from the loader was waited
for), but a step whose body raised is not counted as a step.

The module-level :func:`data_wait` and :func:`train_step` use one default :class:`StepMetrics`
created on first use (:func:`default_metrics`); the progress reporter and the Prometheus
endpoint read that one unless given another. ``train_step`` is not called ``step`` because
a loop variable named ``step`` would shadow it in almost every training script.

Thread safety: counters are updated under a lock, and whether a wait is inside a step is
tracked per thread, so a loader thread timing its own waits does not confuse the loop's.

``step(samples=n, tokens=n)`` also counts what the step trained on (this process's share: its
micro-batches, not the global batch), so a throughput can be read in samples or tokens per
second. With ``TRAINSPEC_STEP_LOG_DIR`` set, each completed step also appends a line to this
rank's step log (:mod:`trainspec.stages.step_log`), which ``trainspec ladder run --local`` reads.
The snapshot's recent figures (the last :data:`RATE_WINDOW` step ends: steps/s, samples/s,
tokens/s, the data-wait share, the steadiness of the rate) are what rank 0's progress reports
carry, and what ``trainspec ladder report`` reads back from a cluster.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from trainspec.stages.step_log import StepLogWriter

__all__ = ["MetricsSnapshot", "StepMetrics", "data_wait", "default_metrics", "train_step"]

Clock = Callable[[], float]

#: Step ends kept for the recent figures (steps/s, the ETA, samples/s, the recent data wait follow
#: the last this many step ends).
RATE_WINDOW = 50


class _End(NamedTuple):
    """The meter's totals at the end of one step (what the recent figures are read from)."""

    t: float
    samples: int | None
    tokens: int | None
    wait: float
    loop: float


@dataclass(frozen=True)
class MetricsSnapshot:
    """The timers' figures at one moment (seconds from the meter's clock)."""

    #: Completed steps (``step()`` blocks that did not raise).
    steps: int
    #: Time inside ``step()`` blocks (their nested waits included).
    step_seconds_total: float
    #: Time inside ``data_wait()`` blocks, wherever they are.
    data_wait_seconds_total: float
    #: The loop's measured time: step time plus the waits outside any step.
    loop_seconds_total: float
    #: ``data_wait_seconds_total / loop_seconds_total`` (0.0 before anything was timed).
    data_wait_fraction: float
    #: Steps per second over the last :data:`RATE_WINDOW` steps, by the wall clock between step
    #: ends (so evaluation and checkpoint pauses count); 0.0 (unknown) until two steps ended.
    steps_per_second: float
    #: Samples the steps trained on, as counted by ``step(samples=...)`` (None: never counted).
    samples_total: int | None = None
    #: Tokens, as counted by ``step(tokens=...)`` (None: never counted).
    tokens_total: int | None = None
    #: Over the same recent steps as ``steps_per_second``: the samples and tokens this process
    #: counted per second (None: not counted, or the rate is unknown) ...
    samples_per_second: float | None = None
    tokens_per_second: float | None = None
    #: ... the share of the loop spent waiting for data in those steps (0.0 until two steps ended) ...
    recent_data_wait_fraction: float = 0.0
    #: ... how many steps they are (0 until two steps ended) ...
    recent_steps: int = 0
    #: ... and how far the step rates of their first and second half are apart, relative to the
    #: larger (0: the same; 1.0 when a half is too short to have a rate; None until two steps ended).
    recent_spread: float | None = None

    def remaining_seconds(self, total_steps: int, done_steps: int | None = None) -> float | None:
        """Seconds left for ``total_steps`` at the recent rate (None while the rate is unknown)."""
        done = self.steps if done_steps is None else done_steps
        if self.steps_per_second <= 0:
            return None
        return max(0, total_steps - done) / self.steps_per_second


class StepMetrics:
    """Timers for one training loop: ``with m.step():`` and ``with m.data_wait():``."""

    def __init__(self, clock: Clock = time.perf_counter, *, window: int = RATE_WINDOW) -> None:
        if window < 2:
            raise ValueError(f"window must be >= 2 steps, got {window}")
        self._clock = clock
        self._lock = threading.Lock()
        self._local = threading.local()  # per thread: how many step() blocks are open
        self._steps = 0
        self._step_total = 0.0
        self._wait_total = 0.0
        self._wait_outside = 0.0
        self._ends: deque[_End] = deque(maxlen=window)
        self._samples: int | None = None
        self._tokens: int | None = None
        self._log: StepLogWriter | None = None
        self._log_opened = False  # the step log is looked for at the first step's end (the env is read then)

    def _depth(self) -> int:
        return getattr(self._local, "depth", 0)

    @contextlib.contextmanager
    def data_wait(self) -> Iterator[None]:
        """Time a wait for input: ``with m.data_wait(): batch = next(it)``."""
        inside = self._depth() > 0
        start = self._clock()
        try:
            yield
        finally:
            spent = max(0.0, self._clock() - start)
            with self._lock:
                self._wait_total += spent
                if not inside:
                    self._wait_outside += spent

    @contextlib.contextmanager
    def step(self, samples: int | None = None, tokens: int | None = None) -> Iterator[None]:
        """Time one training step; a step whose body raises adds its time but is not counted.

        ``samples`` / ``tokens``: what this process trained on in the step (counted when it completes).
        """
        self._local.depth = self._depth() + 1
        start = self._clock()
        ok = False
        try:
            yield
            ok = True
        finally:
            end = self._clock()
            self._local.depth -= 1
            with self._lock:
                self._step_total += max(0.0, end - start)
                if ok:
                    self._steps += 1
                    if samples is not None:
                        self._samples = (self._samples or 0) + samples
                    if tokens is not None:
                        self._tokens = (self._tokens or 0) + tokens
                    loop = self._step_total + self._wait_outside
                    self._ends.append(_End(end, self._samples, self._tokens, self._wait_total, loop))
                    if self._log is not None or not self._log_opened:  # no call per step when no log
                        self._log_step(end)

    def _log_step(self, end: float) -> None:
        """The step's line in the step log, when there is one (called under the lock: lines stay in order)."""
        if not self._log_opened:
            from trainspec.stages.step_log import open_step_log

            self._log_opened = True
            self._log = open_step_log(id(self))
        if self._log is not None:
            loop = self._step_total + self._wait_outside
            self._log.write(self._steps, end, self._step_total, self._wait_total, loop, self._samples, self._tokens)

    def snapshot(self) -> MetricsSnapshot:
        """The figures now (consistent with each other: read under the lock)."""
        with self._lock:
            steps, step_total = self._steps, self._step_total
            wait_total, loop = self._wait_total, self._step_total + self._wait_outside
            ends = list(self._ends)
            samples, tokens = self._samples, self._tokens
        fraction = min(1.0, wait_total / loop) if loop > 0 else 0.0
        # Unknown until two steps ended: one step's own time says nothing of the pauses between.
        if len(ends) < 2 or ends[-1].t <= ends[0].t:
            return MetricsSnapshot(steps, step_total, wait_total, loop, fraction, 0.0, samples, tokens)
        first, last = ends[0], ends[-1]
        seconds = last.t - first.t
        looped = last.loop - first.loop
        return MetricsSnapshot(
            steps,
            step_total,
            wait_total,
            loop,
            fraction,
            (len(ends) - 1) / seconds,
            samples,
            tokens,
            samples_per_second=_per_second(first.samples, last.samples, seconds),
            tokens_per_second=_per_second(first.tokens, last.tokens, seconds),
            recent_data_wait_fraction=min(1.0, max(0.0, (last.wait - first.wait) / looped)) if looped > 0 else 0.0,
            recent_steps=len(ends) - 1,
            recent_spread=_spread(ends),
        )


def _per_second(first: int | None, last: int | None, seconds: float) -> float | None:
    return None if last is None else (last - (first or 0)) / seconds


def _spread(ends: list[_End]) -> float:
    """How far the rates of the first and second half of ``ends`` are apart (as the step logs' reader
    works it out, :func:`trainspec.stages.step_rates.rank_rate`)."""
    middle = (len(ends) - 1) // 2
    halves = [(middle, ends[middle].t - ends[0].t), (len(ends) - 1 - middle, ends[-1].t - ends[middle].t)]
    first, second = (steps / seconds if seconds > 0 else 0.0 for steps, seconds in halves)
    return abs(first - second) / max(first, second) if min(first, second) > 0 else 1.0


_default: StepMetrics | None = None
_default_lock = threading.Lock()


def default_metrics() -> StepMetrics:
    """The process's default :class:`StepMetrics`, created on first use."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = StepMetrics()
    return _default


def data_wait() -> contextlib.AbstractContextManager[None]:
    """``with data_wait(): batch = next(it)`` on the default meter."""
    return default_metrics().data_wait()


def train_step() -> contextlib.AbstractContextManager[None]:
    """``with train_step(): ...`` times one step on the default meter."""
    return default_metrics().step()
