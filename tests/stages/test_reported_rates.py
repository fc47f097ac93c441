"""The measurement figures rank 0's progress reports carry (the meter's recent window), and reading them
back into the rate the ladder's table is worked out from (``trainspec ladder report``)."""

from __future__ import annotations

import io
import json

import pytest

from trainspec.stages import ProgressReporter, StepMetrics
from trainspec.stages.progress_report import StdoutSink
from trainspec.stages.reported_rates import MEASUREMENT, rate_value, reported_rate
from trainspec.stages.step_rates import combine
from trainspec.stages.trainer_status import Update


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


class Kept:
    blocking = False

    def __init__(self) -> None:
        self.updates: list[Update] = []

    def send(self, update: Update) -> bool:
        self.updates.append(update)
        return True


def _loop(meter: StepMetrics, clock: Clock, steps: int, step: float, wait: float, samples: int | None = 8) -> None:
    for _ in range(steps):
        with meter.data_wait():
            clock.now += wait
        with meter.step(samples=samples, tokens=None if samples is None else samples * 128):
            clock.now += step


def test_the_recent_figures_leave_the_warm_up_out() -> None:
    clock = Clock()
    meter = StepMetrics(clock, window=11)
    _loop(meter, clock, 20, step=0.5, wait=2.0)  # start-up: slow steps, the loader filling its queue
    _loop(meter, clock, 10, step=0.08, wait=0.02)  # steady: 10 steps/s, a fifth of the loop waiting
    snap = meter.snapshot()
    assert snap.recent_steps == 10
    assert snap.steps_per_second == pytest.approx(10.0)
    assert snap.samples_per_second == pytest.approx(80.0)
    assert snap.tokens_per_second == pytest.approx(80.0 * 128)
    assert snap.recent_data_wait_fraction == pytest.approx(0.2)
    assert snap.data_wait_fraction > 0.7  # every step so far: mostly the warm-up's waits
    assert snap.recent_spread == pytest.approx(0.0, abs=1e-9)


def test_a_rate_that_changes_inside_the_window_is_unsteady_and_uncounted_samples_stay_unknown() -> None:
    clock = Clock()
    meter = StepMetrics(clock, window=21)
    _loop(meter, clock, 11, step=0.1, wait=0.0, samples=None)
    _loop(meter, clock, 10, step=0.3, wait=0.0, samples=None)  # a third as fast: a checkpoint every step, say
    snap = meter.snapshot()
    assert snap.samples_per_second is None and snap.tokens_per_second is None
    assert snap.recent_spread == pytest.approx(2 / 3)


def test_before_two_steps_there_are_no_recent_figures() -> None:
    clock = Clock()
    meter = StepMetrics(clock)
    _loop(meter, clock, 1, step=0.1, wait=0.1)
    snap = meter.snapshot()
    assert (snap.recent_steps, snap.recent_spread, snap.samples_per_second) == (0, None, None)


def _reported(fmt: str | None, steps: int = 30) -> tuple[dict[str, str], str]:
    """The last report's metrics (to a sink of ``fmt``: None for a status-like sink) and the stdout text."""
    clock, out, kept = Clock(), io.StringIO(), Kept()
    meter = StepMetrics(clock)
    sink = kept if fmt is None else StdoutSink(out, format=fmt)
    with ProgressReporter(sink, metrics=meter, clock=clock, env={}, interval=0) as progress:
        for done in range(1, steps + 1):
            _loop(meter, clock, 1, step=0.09, wait=0.01)
            progress.report(done, steps, metrics={"loss": 0.5})
    if fmt == "json":
        line = out.getvalue().splitlines()[-1]
        status = json.loads(line)["trainspecProgress"]
        return {m["name"]: m["value"] for m in status["metrics"]}, line
    return (dict(kept.updates[-1].metrics) if fmt is None else {}), out.getvalue()


def test_status_and_json_lines_carry_the_figures_the_human_line_does_not() -> None:
    metrics, _ = _reported(None)
    assert metrics == {
        "loss": "0.5",
        "steps_per_second": "10",
        "data_wait_fraction": "0.1",
        "rank0_samples_per_second": "80",
        "rank0_tokens_per_second": "10240",
        "recent_data_wait_fraction": "0.1",
        "recent_steps": "29",
        "recent_spread": "0",
    }
    logged, _ = _reported("json")
    assert logged == metrics
    _, text = _reported("text")
    assert "steps_per_second=10" in text and not any(name in text for name in MEASUREMENT)


def test_reading_a_report_back_gives_the_step_logs_figures() -> None:
    metrics, _ = _reported(None)
    rate, why = reported_rate(metrics)
    assert why is None and rate is not None
    assert (rate.rank, rate.steps, rate.spread) == (0, 29, 0.0)
    assert rate.seconds == pytest.approx(2.9)
    assert (rate.samples_per_second, rate.data_wait_share) == (80.0, 0.1)
    # Rank 0 of 4 ranks: the job's throughput is its count per step on every rank, as with step logs.
    job = combine([rate], 4)
    assert job is not None and job.samples_per_second == pytest.approx(320.0) and job.samples_from == "counted"


@pytest.mark.parametrize(
    ("metrics", "why"),
    [
        ({"loss": "0.1"}, "rank 0's progress reports carry no step rate (steps_per_second)"),
        ({"steps_per_second": "2", "data_wait_fraction": "0.1"}, "rank 0's progress reports carry no recent"),
        (
            {"steps_per_second": "2", "recent_steps": "3", "recent_data_wait_fraction": "0.1"},
            "too few steps to measure: rank 0's last report is over 3 steps, at least 5",
        ),
        ({"steps_per_second": "fast", "recent_steps": "9"}, "rank 0 reported steps_per_second='fast', where a"),
        ({"steps_per_second": "2", "recent_steps": "-1"}, "rank 0 reported recent_steps='-1', where a number >= 0"),
    ],
)
def test_a_report_without_figures_says_why(metrics: dict[str, str], why: str) -> None:
    rate, found = reported_rate(metrics)
    assert rate is None and found is not None and found.startswith(why)


def test_slow_rates_keep_four_significant_digits() -> None:
    # A 400B model's step takes tens of seconds: 3 decimals would leave 2 digits.
    assert (rate_value(0.012345), rate_value(312.0614), rate_value(0.5)) == (0.01235, 312.061, 0.5)
