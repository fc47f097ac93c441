"""Throughput and data-wait share read back from step logs (:mod:`trainspec.stages.step_log`).

A rung of ``trainspec ladder run`` leaves one step log per rank. For each rank the first steps
are left out (warm-up: start-up, compilation, the first collective, loader workers filling
their queues), then the rate is read between the end of the last warm-up step and the end of
the last step, by the meter's clock (so checkpoint and evaluation pauses between steps count,
as they count in a real run)::

    steps/s      = (steps at the end - steps after warm-up) / (t at the end - t after warm-up)
    samples/s    = the same with the samples the script counted (step(samples=...))
    data wait    = waited seconds / loop seconds over the same steps
    spread       = |rate of the window's first half - rate of its second half| / the larger one

The spread says whether the figure is steady: a window too short for the pauses it holds, or a
machine busy with something else, gives halves that disagree (:data:`UNSTEADY`).

The job moves at the pace of its slowest rank: in synchronous data parallelism every step waits
for the gradient all-reduce, so no rank steps faster than the slowest, and a job whose ranks do not
wait for each other is done when its slowest rank is. So the job's step rate is its slowest rank's,
and its throughput (:func:`combine`) is that rate times the samples (or tokens) one step of the job
trains on: the sum over the ranks of what each counted per step. A script that counts none gets
``samples_per_step`` (the spec's ``model.globalBatch``) instead; with neither, only steps per second
are known. Standard library only.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from trainspec.stages.step_log import FILE_GLOB

__all__ = [
    "UNSTEADY",
    "Measurement",
    "RankRate",
    "StepPoint",
    "Warmup",
    "combine",
    "measure",
    "rank_rate",
    "read_points",
]

#: Steps a rank must have after its warm-up for a rate (fewer say little about a steady state).
MIN_MEASURED_STEPS = 5
#: A spread between the two halves of a window above this marks the figure as unsteady.
UNSTEADY = 0.2
_RANK_FILE = re.compile(r"^rank-(\d+)\.jsonl$")


@dataclass(frozen=True)
class StepPoint:
    """One line of a step log: the meter's totals at the end of step ``step``."""

    step: int
    t: float
    step_seconds: float
    wait_seconds: float
    loop_seconds: float
    samples: int | None
    tokens: int | None


@dataclass(frozen=True)
class Warmup:
    """The steps left out at the start of each rank's series: ``steps`` of them, or a ``fraction`` of all."""

    steps: int | None = None
    fraction: float | None = 0.1

    @classmethod
    def parse(cls, text: str) -> Warmup:
        """``"10"`` (steps) or ``"10%"`` (of each rank's steps); raises ValueError otherwise."""
        text = text.strip()
        try:
            if text.endswith("%"):
                percent = float(text[:-1])
                if 0 <= percent < 100:  # NaN fails this too
                    return cls(steps=None, fraction=percent / 100)
            elif int(text) >= 0:
                return cls(steps=int(text), fraction=None)
        except ValueError:
            pass
        raise ValueError(f"{text!r} is not a warm-up: a step count >= 0, or a percentage below 100%")

    def skipped(self, total: int) -> int:
        """How many of ``total`` steps are warm-up: never fewer than 1 (the first step's end is the window's start)."""
        count = self.steps if self.steps is not None else math.ceil((self.fraction or 0.0) * total)
        return max(1, count)

    def __str__(self) -> str:
        if self.steps is not None:
            return f"the first {self.steps} step{'s' * (self.steps != 1)} of each rank"
        return f"the first {round((self.fraction or 0.0) * 100, 2):g}% of each rank's steps"


@dataclass(frozen=True)
class RankRate:
    """One rank's steady-state figures, after its warm-up."""

    rank: int
    steps: int
    seconds: float
    steps_per_second: float
    samples_per_second: float | None
    tokens_per_second: float | None
    data_wait_share: float
    #: How much the rates of the window's two halves differ, relative to the larger (0: the same).
    spread: float = 0.0


@dataclass(frozen=True)
class Measurement:
    """A job's figures from its ranks' step logs (see the module docstring for how each is read)."""

    ranks: tuple[RankRate, ...]
    #: Ranks the job has; fewer logged means the counted figures were scaled up to all of them.
    world_size: int
    steps_per_second: float
    samples_per_second: float | None
    tokens_per_second: float | None
    data_wait_share: float
    #: Where samples/s came from: "counted" (the script), "spec" (model.globalBatch) or None (unknown).
    samples_from: str | None

    @property
    def spread(self) -> float:
        """The largest spread of the ranks' halves (see the module docstring)."""
        return max(r.spread for r in self.ranks)

    @property
    def steady(self) -> bool:
        return self.spread <= UNSTEADY

    @property
    def slowest(self) -> RankRate:
        """The rank whose pace the job moves at."""
        return min(self.ranks, key=lambda r: r.steps_per_second)

    @property
    def steps(self) -> int:
        """The steps measured on the slowest rank."""
        return self.slowest.steps

    @property
    def seconds(self) -> float:
        """The slowest rank's measured window."""
        return self.slowest.seconds


def read_points(path: Path) -> list[StepPoint]:
    """The training loop's series in one rank's step log: the (pid, meter) with the most steps.

    A line that does not parse (the last one of a killed process) is skipped.
    """
    series: dict[tuple[int, int], list[StepPoint]] = {}
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                item = json.loads(line)
                point = StepPoint(
                    int(item["step"]),
                    float(item["t"]),
                    float(item["stepSeconds"]),
                    float(item["waitSeconds"]),
                    float(item["loopSeconds"]),
                    None if item.get("samples") is None else int(item["samples"]),
                    None if item.get("tokens") is None else int(item["tokens"]),
                )
                key = (int(item["pid"]), int(item["meter"]))
            except (ValueError, KeyError, TypeError):
                continue
            series.setdefault(key, []).append(point)
    if not series:
        return []
    return max(series.values(), key=lambda points: (points[-1].step, len(points)))


def rank_rate(rank: int, points: Sequence[StepPoint], warmup: Warmup) -> RankRate | None:
    """The rank's figures after its warm-up; None with fewer than :data:`MIN_MEASURED_STEPS` steps left."""
    if not points:
        return None
    skipped = warmup.skipped(points[-1].step)
    start = next((p for p in points if p.step >= skipped), None)
    end = points[-1]
    if start is None or end.step - start.step < MIN_MEASURED_STEPS or end.t <= start.t:
        return None
    seconds = end.t - start.t
    loop = end.loop_seconds - start.loop_seconds
    wait = end.wait_seconds - start.wait_seconds
    half = start.step + (end.step - start.step) // 2
    middle = next(p for p in points if p.step >= half)
    first = (middle.step - start.step) / (middle.t - start.t) if middle.t > start.t else 0.0
    second = (end.step - middle.step) / (end.t - middle.t) if end.t > middle.t else 0.0
    return RankRate(
        rank=rank,
        steps=end.step - start.step,
        seconds=seconds,
        steps_per_second=(end.step - start.step) / seconds,
        samples_per_second=_per_second(start.samples, end.samples, seconds),
        tokens_per_second=_per_second(start.tokens, end.tokens, seconds),
        data_wait_share=min(1.0, max(0.0, wait / loop)) if loop > 0 else 0.0,
        spread=abs(first - second) / max(first, second) if min(first, second) > 0 else 1.0,
    )


def _per_second(first: int | None, last: int | None, seconds: float) -> float | None:
    if last is None:
        return None
    return (last - (first or 0)) / seconds


def combine(
    rates: Sequence[RankRate],
    world_size: int,
    *,
    samples_per_step: int | None = None,
    tokens_per_sample: int | None = None,
) -> Measurement | None:
    """The job's figures from its ranks' (see the module docstring); None when no rank has a rate.

    Counted figures of the ranks that logged are scaled to ``world_size`` when some did not log.
    ``tokens_per_sample`` (the spec's sequence length) turns samples into tokens when the script
    counts no tokens.
    """
    if not rates:
        return None
    scale = world_size / len(rates) if len(rates) < world_size else 1.0
    steps = min(r.steps_per_second for r in rates)  # the slowest rank's pace
    samples_from: str | None = None
    samples = _per_job_step([r.samples_per_second for r in rates], rates)
    if samples is not None:
        samples, samples_from = samples * scale * steps, "counted"
    elif samples_per_step is not None:
        samples, samples_from = steps * samples_per_step, "spec"
    tokens = _per_job_step([r.tokens_per_second for r in rates], rates)
    if tokens is not None:
        tokens *= scale * steps
    elif samples is not None and tokens_per_sample is not None:
        tokens = samples * tokens_per_sample
    # The share of the loop spent waiting, over every rank's loop (not a mean of shares: a rank's
    # weight is its loop time).
    loops = [(r.data_wait_share, r.seconds) for r in rates]
    total = sum(seconds for _, seconds in loops)
    wait = sum(share * seconds for share, seconds in loops) / total if total > 0 else 0.0
    return Measurement(tuple(rates), world_size, steps, samples, tokens, wait, samples_from)


def _per_job_step(counted: Sequence[float | None], rates: Sequence[RankRate]) -> float | None:
    """What one step of the job trains on: each rank's count per step, summed (None unless every rank counted)."""
    if any(v is None for v in counted):
        return None
    return sum((v or 0.0) / r.steps_per_second for v, r in zip(counted, rates, strict=True))


def measure(
    directory: Path,
    world_size: int,
    warmup: Warmup,
    *,
    samples_per_step: int | None = None,
    tokens_per_sample: int | None = None,
) -> tuple[Measurement | None, str | None]:
    """The job's figures from the step logs in ``directory``, or None and why there are none."""
    files = sorted(
        (int(m.group(1)), path)
        for path in (directory.glob(FILE_GLOB) if directory.is_dir() else ())
        if (m := _RANK_FILE.match(path.name))
    )
    if not files:
        return None, "no step was logged: the script times no steps with trainspec.stages.StepMetrics"
    rates = []
    longest = 0
    for rank, path in files:
        points = read_points(path)
        longest = max(longest, points[-1].step if points else 0)
        rate = rank_rate(rank, points, warmup)
        if rate is not None:
            rates.append(rate)
    if not rates:
        return None, (
            f"too few steps to measure: {longest} logged, {warmup} are warm-up and at least "
            f"{MIN_MEASURED_STEPS} must follow; run more steps (or a smaller --warmup)"
        )
    return combine(rates, world_size, samples_per_step=samples_per_step, tokens_per_sample=tokens_per_sample), None
