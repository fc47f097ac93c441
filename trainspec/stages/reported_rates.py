"""The figures rank 0's progress reports carry for a measurement, and reading them back (standard library only).

Every report of a :class:`~trainspec.stages.ProgressReporter` carries, after the caller's own
metrics, the meter's figures (:class:`~trainspec.stages.StepMetrics`, its snapshot's recent window:
the last :data:`~trainspec.stages.metrics.RATE_WINDOW` step ends)::

    steps_per_second           the step rate over the recent steps
    data_wait_fraction         the share of the loop waiting for data, over every step so far
    rank0_samples_per_second   samples this process counted (step(samples=...)) per second, recent steps
    rank0_tokens_per_second    the same with tokens (step(tokens=...))
    recent_data_wait_fraction  the share of the loop waiting for data, recent steps
    recent_steps               how many steps the recent figures are over
    recent_spread              how far the rates of their first and second half are apart (0: steady)

The ``rank0_`` figures are the reporting process's share (rank 0's micro-batches), not the job's.
``trainspec ladder report`` reads a rung's last report (the TrainJob's ``status.trainerStatus``,
which a finished TrainJob keeps, or the last ``trainspec progress`` JSON line of the rank-0 pod's
log) back into a :class:`~trainspec.stages.step_rates.RankRate` with :func:`reported_rate`, and
the cluster's ladder is then tabulated by the same functions as the local one's step logs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainspec.stages.metrics import MetricsSnapshot
    from trainspec.stages.step_rates import RankRate

__all__ = [
    "DATA_WAIT_FRACTION",
    "MEASUREMENT",
    "PROGRESS_KEY",
    "RANK0_SAMPLES",
    "RANK0_TOKENS",
    "RECENT_DATA_WAIT",
    "RECENT_SPREAD",
    "RECENT_STEPS",
    "STEPS_PER_SECOND",
    "measurement_metrics",
    "rate_value",
    "reported_rate",
]

STEPS_PER_SECOND = "steps_per_second"
DATA_WAIT_FRACTION = "data_wait_fraction"
RANK0_SAMPLES = "rank0_samples_per_second"
RANK0_TOKENS = "rank0_tokens_per_second"
RECENT_DATA_WAIT = "recent_data_wait_fraction"
RECENT_STEPS = "recent_steps"
RECENT_SPREAD = "recent_spread"
#: The figures for a measurement: machine-read, so the human stdout line leaves them out.
MEASUREMENT = (RANK0_SAMPLES, RANK0_TOKENS, RECENT_DATA_WAIT, RECENT_STEPS, RECENT_SPREAD)
#: The key of a JSON progress line (``StdoutSink(format="json")``): ``{"trainspecProgress": {...}}``.
PROGRESS_KEY = "trainspecProgress"


def rate_value(value: float) -> float:
    """A rate as reported: 3 decimals from 1 up, 4 significant digits below (a 400B model's 0.0123
    steps/s keeps its precision, which 3 decimals would cut to 2 digits)."""
    return round(value, 3) if value >= 1 else float(f"{value:.4g}")


def _text(value: float) -> str:
    return f"{value:.6g}"


def measurement_metrics(snap: MetricsSnapshot) -> dict[str, str]:
    """The measurement figures of a snapshot, as the status API wants them (strings); {} until its
    recent rate is known (two steps ended)."""
    if snap.recent_steps <= 0:
        return {}
    found: dict[str, str] = {}
    if snap.samples_per_second is not None:
        found[RANK0_SAMPLES] = _text(rate_value(snap.samples_per_second))
    if snap.tokens_per_second is not None:
        found[RANK0_TOKENS] = _text(rate_value(snap.tokens_per_second))
    found[RECENT_DATA_WAIT] = _text(round(snap.recent_data_wait_fraction, 4))
    found[RECENT_STEPS] = str(snap.recent_steps)
    if snap.recent_spread is not None:
        found[RECENT_SPREAD] = _text(round(snap.recent_spread, 4))
    return found


def _number(metrics: Mapping[str, str], name: str) -> float | None:
    """The metric as a finite number >= 0; None when absent; ValueError when it is something else."""
    text = metrics.get(name)
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name}={text!r}")
    return value


def reported_rate(metrics: Mapping[str, str], min_steps: int | None = None) -> tuple[RankRate | None, str | None]:
    """Rank 0's figures from the metrics of its last progress report, or None and why there are none.

    ``min_steps``: the fewest recent steps that make a figure (default: the step logs' reader's
    :data:`~trainspec.stages.step_rates.MIN_MEASURED_STEPS`).
    """
    from trainspec.stages.step_rates import MIN_MEASURED_STEPS, RankRate

    least = MIN_MEASURED_STEPS if min_steps is None else min_steps
    try:
        rate = _number(metrics, STEPS_PER_SECOND)
        steps = _number(metrics, RECENT_STEPS)
        samples, tokens = _number(metrics, RANK0_SAMPLES), _number(metrics, RANK0_TOKENS)
        wait, spread = _number(metrics, RECENT_DATA_WAIT), _number(metrics, RECENT_SPREAD)
    except ValueError as exc:
        return None, f"rank 0 reported {exc}, where a number >= 0 belongs"
    if rate is None or rate <= 0:
        return None, (
            "rank 0's progress reports carry no step rate (steps_per_second): time the loop with "
            "trainspec.stages.StepMetrics (with meter.step(): ...) and give it to the reporter "
            "(ProgressReporter(metrics=meter))"
        )
    if steps is None or wait is None:
        return None, (
            f"rank 0's progress reports carry no recent figures ({RECENT_STEPS}, {RECENT_DATA_WAIT}): the "
            "trainspec in the job's image is older than them; install this version of trainspec in the image"
        )
    if steps < least:
        return None, (
            f"too few steps to measure: rank 0's last report is over {steps:g} steps, at least {least} are "
            "needed; run the rung for more steps"
        )
    return (
        RankRate(
            rank=0,
            steps=int(steps),
            seconds=steps / rate,
            steps_per_second=rate,
            samples_per_second=samples,
            tokens_per_second=tokens,
            data_wait_share=min(1.0, wait),
            # Unknown steadiness is reported as unsteady: a figure is trusted only when shown to be.
            spread=1.0 if spread is None else min(1.0, spread),
        ),
        None,
    )
