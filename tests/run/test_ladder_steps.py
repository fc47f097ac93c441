"""The ladder's measurement channel: the step timers' step log (TRAINSPEC_STEP_LOG_DIR) and the
rates read back from it, warm-up left out, combined over the ranks at the slowest rank's pace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trainspec.dsl.kube_facts import STEP_LOG_DIR_ENV
from trainspec.stages import StepMetrics
from trainspec.stages.step_rates import (
    MIN_MEASURED_STEPS,
    RankRate,
    StepPoint,
    Warmup,
    combine,
    measure,
    rank_rate,
    read_points,
)

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def _loop(meter: StepMetrics, clock: Clock, steps: int, *, wait: float, work: float, samples: int | None) -> None:
    for _ in range(steps):
        with meter.data_wait():
            clock.now += wait
        with meter.step(samples=samples):
            clock.now += work


def test_every_step_appends_a_line_of_totals_to_the_ranks_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STEP_LOG_DIR_ENV, str(tmp_path / "steps"))
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    clock = Clock()
    meter = StepMetrics(clock)
    _loop(meter, clock, 3, wait=0.5, work=1.5, samples=8)
    lines = [json.loads(line) for line in (tmp_path / "steps" / "rank-3.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [1, 2, 3]
    assert [line["samples"] for line in lines] == [8, 16, 24]
    assert lines[-1]["t"] == pytest.approx(56.0)
    assert lines[-1]["waitSeconds"] == pytest.approx(1.5)
    assert lines[-1]["loopSeconds"] == pytest.approx(6.0)
    assert lines[-1]["tokens"] is None  # never counted
    snap = meter.snapshot()
    assert (snap.samples_total, snap.tokens_total) == (24, None)


def test_without_the_variable_nothing_is_written_and_samples_are_still_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(STEP_LOG_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    clock = Clock()
    meter = StepMetrics(clock)
    with meter.step(samples=4, tokens=4096):
        clock.now += 1
    assert (meter.snapshot().samples_total, meter.snapshot().tokens_total) == (4, 4096)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_that_cannot_be_written_is_said_once_and_training_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(STEP_LOG_DIR_ENV, str(blocker / "steps"))
    clock = Clock()
    meter = StepMetrics(clock)
    _loop(meter, clock, 3, wait=0.1, work=0.1, samples=None)
    assert meter.snapshot().steps == 3
    err = capsys.readouterr().err
    assert err.count(STEP_LOG_DIR_ENV) == 1 and "steps are not logged" in err


def test_a_step_whose_body_raised_writes_no_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STEP_LOG_DIR_ENV, str(tmp_path))
    clock = Clock()
    meter = StepMetrics(clock)
    with pytest.raises(RuntimeError), meter.step(samples=8):
        raise RuntimeError("out of memory")
    with meter.step(samples=8):
        clock.now += 1
    points = read_points(tmp_path / "rank-0.jsonl")
    assert [(p.step, p.samples) for p in points] == [(1, 8)]


def test_the_reader_takes_the_longest_series_and_skips_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "rank-0.jsonl"

    def line(pid: int, meter: int, step: int) -> str:
        return json.dumps(
            {
                "pid": pid,
                "meter": meter,
                "step": step,
                "t": float(step),
                "stepSeconds": 0.5 * step,
                "waitSeconds": 0.1 * step,
                "loopSeconds": 0.6 * step,
                "samples": None,
                "tokens": None,
            }
        )

    # An evaluation meter of the same process, and a killed process's torn last line.
    lines = [line(7, 1, 1), line(7, 2, 1), line(7, 1, 2), line(7, 1, 3), line(7, 2, 2), line(7, 1, 4)[:30]]
    path.write_text("\n".join(lines) + "\n")
    assert [p.step for p in read_points(path)] == [1, 2, 3]


def _points(steps: int, *, first: float, then: float, samples: int | None = 8) -> list[StepPoint]:
    """A series whose first step took ``first`` seconds and every later one ``then`` (a quarter waiting)."""
    points, t = [], 0.0
    for step in range(1, steps + 1):
        t += first if step == 1 else then
        points.append(StepPoint(step, t, 0.75 * t, 0.25 * t, t, None if samples is None else samples * step, None))
    return points


def test_the_warm_up_is_left_out_of_the_rate() -> None:
    # A slow first step (start-up) followed by steady 0.1 s steps: the rate is the steady one.
    rate = rank_rate(0, _points(20, first=5.0, then=0.1), Warmup(steps=None, fraction=0.1))
    assert rate is not None
    assert rate.steps == 18  # steps 3..20: 10% of 20 = 2 warm-up steps
    assert rate.steps_per_second == pytest.approx(10.0)
    assert rate.samples_per_second == pytest.approx(80.0)
    assert rate.data_wait_share == pytest.approx(0.25)
    # No warm-up asked: the window still starts at the first step's end (a rate runs from one step end to another).
    none = rank_rate(0, _points(20, first=5.0, then=0.1), Warmup(steps=0, fraction=None))
    assert none is not None and none.steps == 19 and none.steps_per_second == pytest.approx(10.0)


def test_too_few_steps_after_the_warm_up_give_no_rate() -> None:
    assert rank_rate(0, _points(MIN_MEASURED_STEPS, first=1, then=1), Warmup(steps=1, fraction=None)) is None
    assert rank_rate(0, _points(MIN_MEASURED_STEPS + 1, first=1, then=1), Warmup(steps=1, fraction=None)) is not None
    assert rank_rate(0, [], Warmup()) is None


@pytest.mark.parametrize(
    ("text", "steps", "fraction", "skipped_of_50"),
    [("10%", None, 0.1, 5), ("0", 0, None, 1), ("7", 7, None, 7), ("2.5%", None, 0.025, 2)],
)
def test_warmup_parses_steps_or_a_share(
    text: str, steps: int | None, fraction: float | None, skipped_of_50: int
) -> None:
    warmup = Warmup.parse(text)
    assert (warmup.steps, warmup.fraction) == (steps, fraction)
    assert warmup.skipped(50) == skipped_of_50


@pytest.mark.parametrize("text", ["-1", "100%", "ten", "-5%", "nan%"])
def test_warmup_refuses_what_is_not_a_count_or_share(text: str) -> None:
    with pytest.raises(ValueError, match="is not a warm-up: a step count >= 0, or a percentage below 100%"):
        Warmup.parse(text)


def _rate(rank: int, steps_per_second: float, samples: float | None, wait: float = 0.1) -> RankRate:
    return RankRate(rank, 100, 100 / steps_per_second, steps_per_second, samples, None, wait)


def test_the_job_moves_at_its_slowest_ranks_pace() -> None:
    # Rank 0 checkpoints and steps at 10/s; rank 1 would step at 40/s: the job trains 8 + 8 samples per step at 10/s.
    found = combine([_rate(0, 10.0, 80.0), _rate(1, 40.0, 320.0)], 2)
    assert found is not None
    assert found.steps_per_second == pytest.approx(10.0)
    assert found.samples_per_second == pytest.approx(160.0)
    assert found.samples_from == "counted"
    assert found.slowest.rank == 0


def test_spec_batch_stands_in_for_uncounted_samples_and_sequence_length_gives_tokens() -> None:
    found = combine([_rate(0, 2.0, None), _rate(1, 2.0, None)], 2, samples_per_step=512, tokens_per_sample=4096)
    assert found is not None
    assert (found.samples_per_second, found.samples_from) == (pytest.approx(1024.0), "spec")
    assert found.tokens_per_second == pytest.approx(1024.0 * 4096)
    unknown = combine([_rate(0, 2.0, None)], 1)
    assert unknown is not None and (unknown.samples_per_second, unknown.tokens_per_second) == (None, None)


def test_counts_of_some_ranks_are_scaled_to_the_world_and_wait_is_weighted_by_time() -> None:
    found = combine([_rate(0, 10.0, 80.0, wait=0.5), _rate(1, 5.0, 40.0, wait=0.2)], 4)
    assert found is not None
    assert found.samples_per_second == pytest.approx(5.0 * (8 + 8) * 2)  # 2 of 4 ranks logged
    # Rank 1's window is twice rank 0's: its share weighs twice.
    assert found.data_wait_share == pytest.approx((0.5 * 10 + 0.2 * 20) / 30)


def test_measure_says_why_there_is_no_figure(tmp_path: Path) -> None:
    found, why = measure(tmp_path / "missing", 1, Warmup())
    assert found is None and why is not None and "no step was logged" in why
    (tmp_path / "rank-0.jsonl").write_text("")
    found, why = measure(tmp_path, 1, Warmup())
    assert found is None and why is not None and "too few steps" in why


def test_a_training_process_writes_its_log_where_the_variable_says(tmp_path: Path) -> None:
    """A real process with torchrun's variables: its rank names the file, its samples are counted."""
    code = (
        "from trainspec.stages import StepMetrics\n"
        "m = StepMetrics()\n"
        "for _ in range(12):\n"
        "    with m.data_wait(): pass\n"
        "    with m.step(samples=4, tokens=64): sum(range(1000))\n"
    )
    env = {"PYTHONPATH": str(ROOT), STEP_LOG_DIR_ENV: str(tmp_path), "RANK": "1", "WORLD_SIZE": "2"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    found, why = measure(tmp_path, 2, Warmup(steps=2, fraction=None))
    assert why is None and found is not None
    assert [r.rank for r in found.ranks] == [1]
    assert found.steps == 10
    assert found.samples_per_second is not None and found.samples_per_second > 0
    assert found.tokens_per_second == pytest.approx(found.samples_per_second * 16)


def test_halves_that_disagree_mark_the_figure_unsteady() -> None:
    steady = rank_rate(0, _points(41, first=1.0, then=0.1), Warmup(steps=1, fraction=None))
    assert steady is not None and steady.spread == pytest.approx(0.0, abs=1e-9)
    # Steps 2..21 at 0.1 s, then 0.2 s (something else took the machine): the halves differ by half.
    points = _points(41, first=1.0, then=0.1)
    slower = [
        StepPoint(
            p.step, p.t + max(0, p.step - 21) * 0.1, p.step_seconds, p.wait_seconds, p.loop_seconds, p.samples, None
        )
        for p in points
    ]
    unsteady = rank_rate(0, slower, Warmup(steps=1, fraction=None))
    assert unsteady is not None and unsteady.spread == pytest.approx(0.5)
    found = combine([steady, unsteady], 2)
    assert found is not None and not found.steady and found.spread == pytest.approx(0.5)
