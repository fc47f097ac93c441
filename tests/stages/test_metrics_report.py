"""Progress reports: rank 0 only, the rate limit (an injected clock, no sleeps), the stdout line."""

from __future__ import annotations

import io
import itertools
import json

import pytest

from trainspec.stages import ProgressReporter, StepMetrics
from trainspec.stages.progress_report import StdoutSink
from trainspec.stages.trainer_status import (
    TrainerStatusSink,
    Update,
    status_payload,
    trainer_endpoint,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    """A sink that keeps what it is given (synchronous, like stdout)."""

    blocking = False

    def __init__(self) -> None:
        self.updates: list[Update] = []
        self.ok = True

    def send(self, update: Update) -> bool:
        self.updates.append(update)
        return self.ok


WALL = 1767225600.0  # 2026-01-01T00:00:00Z


def _reporter(
    sink: Recorder,
    clock: FakeClock,
    *,
    interval: float = 10.0,
    env: dict[str, str] | None = None,
    meter: StepMetrics | None = None,
) -> ProgressReporter:
    return ProgressReporter(
        sink,
        metrics=meter or StepMetrics(clock),
        interval=interval,
        clock=clock,
        wallclock=lambda: WALL,
        env={} if env is None else env,
    )


def test_the_rate_limit_bounds_reports_and_the_latest_values_win() -> None:
    clock, sink = FakeClock(), Recorder()
    reporter = _reporter(sink, clock, interval=10.0)
    for step in range(1, 1001):  # 1,000 steps, 0.1 s apart: 100 s of training
        clock.now += 0.1
        reporter.report(step, 1000, metrics={"loss": 1.0 / step})
    # The first report at once, then one per 10 s window: 100 s -> at most 1 + 10.
    assert 1 <= len(sink.updates) <= 11
    assert [u.step for u in sink.updates][:2] == [1, 101]
    gaps = [b.step - a.step for a, b in itertools.pairwise(sink.updates)]
    assert all(gap >= 99 for gap in gaps)
    reporter.close()  # the final flush sends the values of the last call
    assert sink.updates[-1].step == 1000 and sink.updates[-1].progress == 100
    assert dict(sink.updates[-1].metrics)["loss"] == "0.001"
    reporter.close()
    assert sink.updates[-1].step == 1000 and sum(u.step == 1000 for u in sink.updates) == 1  # nothing new: no resend


def test_flush_without_any_report_sends_nothing() -> None:
    sink = Recorder()
    _reporter(sink, FakeClock()).close()
    assert sink.updates == []


def test_only_rank_zero_reports() -> None:
    for rank in range(4):
        clock, sink = FakeClock(), Recorder()
        reporter = _reporter(sink, clock, env={"RANK": str(rank), "WORLD_SIZE": "4"})
        for step in range(50):
            clock.now += 1
            reporter.report(step, 50)
        reporter.close()
        assert bool(sink.updates) is (rank == 0), rank
        assert reporter.active is (rank == 0)


def test_a_failed_send_is_retried_by_the_final_flush() -> None:
    clock, sink = FakeClock(), Recorder()
    reporter = _reporter(sink, clock)
    reporter.report(1, 10)
    sink.ok = False
    clock.now += 20
    reporter.report(2, 10)  # sent, fails
    assert [u.step for u in sink.updates] == [1, 2]
    sink.ok = True
    reporter.flush()
    assert [u.step for u in sink.updates] == [1, 2, 2]


def test_progress_and_eta_come_from_the_step_and_the_meter() -> None:
    clock, sink = FakeClock(), Recorder()
    meter = StepMetrics(clock)
    reporter = _reporter(sink, clock, meter=meter)
    for _ in range(30):
        with meter.step():
            with meter.data_wait():
                clock.now += 0.5
            clock.now += 1.5
    reporter.report(30, 120, metrics={"loss": 0.25, "epoch": 2, "done": False})
    update = sink.updates[-1]
    assert update.progress == 25
    assert update.remaining_seconds == 180  # 90 steps at 0.5 steps/s
    assert dict(update.metrics) == {
        "loss": "0.25",
        "epoch": "2",
        "done": "false",
        "steps_per_second": "0.5",
        "data_wait_fraction": "0.25",
        # The recent figures a measurement reads back (the last 29 step-to-step intervals, all alike).
        "recent_data_wait_fraction": "0.25",
        "recent_steps": "29",
        "recent_spread": "0",
    }
    clock.now += 60
    reporter.report(progress=40.7, remaining_seconds=float("nan"))  # given values win; NaN is unknown
    assert (sink.updates[-1].progress, sink.updates[-1].remaining_seconds) == (40, None)


def test_bad_metrics_are_left_out_and_named_once(capsys: pytest.CaptureFixture[str]) -> None:
    clock, sink = FakeClock(), Recorder()
    reporter = _reporter(sink, clock, interval=0)
    for _ in range(3):
        reporter.report(1, 2, metrics={"": 1, "x" * 65: 1, "note": "y" * 65, "ok": 1})
    assert all(dict(u.metrics) == {"ok": "1"} for u in sink.updates)
    err = capsys.readouterr().err
    assert err.count("metric ''") == 1 and err.count("metric 'note'") == 1


def test_the_payload_is_what_the_api_accepts() -> None:
    update = Update(progress=140, remaining_seconds=1 << 40, metrics=(("loss", "0.1"),), time=WALL)
    assert status_payload(update) == {
        "trainerStatus": {
            "progressPercentage": 100,
            "estimatedRemainingSeconds": (1 << 31) - 1,
            "metrics": [{"name": "loss", "value": "0.1"}],
            "lastUpdatedTime": "2026-01-01T00:00:00Z",
        }
    }
    assert status_payload(Update(time=WALL)) == {"trainerStatus": {"lastUpdatedTime": "2026-01-01T00:00:00Z"}}


def test_stdout_lines_text_and_json() -> None:
    update = Update(35, 62, (("loss", "0.42"), ("data_wait_fraction", "0.041")), WALL, step=20, total_steps=57)
    assert (
        StdoutSink().line(update)
        == "trainspec progress: step 20/57 (35%), about 1m02s left, loss=0.42, data_wait_fraction=0.041"
    )
    assert StdoutSink().line(Update(remaining_seconds=7500, time=WALL)) == "trainspec progress: about 2h05m left"
    data = json.loads(StdoutSink(format="json").line(update))
    assert data == {
        "trainspecProgress": {
            "step": 20,
            "totalSteps": 57,
            "progressPercentage": 35,
            "estimatedRemainingSeconds": 62,
            "metrics": [{"name": "loss", "value": "0.42"}, {"name": "data_wait_fraction", "value": "0.041"}],
            "lastUpdatedTime": "2026-01-01T00:00:00Z",
        }
    }


def test_without_the_trainer_variables_reports_go_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    reporter = ProgressReporter(metrics=StepMetrics(), env={})
    assert isinstance(reporter.sink, StdoutSink) and reporter.interval == 60.0
    reporter.report(3, 6)
    reporter.close()
    assert capsys.readouterr().out == "trainspec progress: step 3/6 (50%)\n"


def test_a_closed_stdout_does_not_stop_training() -> None:
    stream = io.StringIO()
    stream.close()
    assert StdoutSink(stream).send(Update(time=WALL)) is False


def test_with_the_trainer_variables_reports_go_to_the_endpoint() -> None:
    env = {
        "KUBEFLOW_TRAINER_SERVER_URL": "https://trainer.example:8082/apis/x",
        "KUBEFLOW_TRAINER_SERVER_CA_CERT": "/ca.crt",
        "KUBEFLOW_TRAINER_SERVER_TOKEN": "/token",
    }
    reporter = ProgressReporter(metrics=StepMetrics(), env=env)
    assert isinstance(reporter.sink, TrainerStatusSink) and reporter.interval == 10.0
    assert reporter.sink.endpoint == trainer_endpoint(env)
    assert trainer_endpoint({k: v for k, v in env.items() if "TOKEN" not in k}) is None
    # On another rank nothing is even set up.
    assert ProgressReporter(env={**env, "RANK": "2", "WORLD_SIZE": "4"}).sink is None
