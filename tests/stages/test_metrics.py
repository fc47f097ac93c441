"""The in-pod step and data-wait timers, the rank-0 guards and the Prometheus endpoint (issue 15, part 5)."""

from __future__ import annotations

import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

from trainspec.stages import (
    StepMetrics,
    data_wait,
    default_metrics,
    is_rank_zero,
    rank_zero_only,
    rank_zero_print,
    serve_metrics,
    train_step,
)
from trainspec.stages.metrics_http import METRIC_NAMES, prometheus_text

REPO = Path(__file__).resolve().parents[2]


class FakeClock:
    """A clock the test moves by hand: no sleeps, exact figures."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_wait_inside_the_step_is_a_fraction_of_the_step_time() -> None:
    clock = FakeClock()
    meter = StepMetrics(clock)
    for _ in range(4):
        with meter.step():
            with meter.data_wait():
                clock.advance(0.25)
            clock.advance(0.75)
    snap = meter.snapshot()
    assert snap.steps == 4
    assert snap.step_seconds_total == pytest.approx(4.0)
    assert snap.data_wait_seconds_total == pytest.approx(1.0)
    assert snap.loop_seconds_total == pytest.approx(4.0)
    assert snap.data_wait_fraction == pytest.approx(0.25)
    assert snap.steps_per_second == pytest.approx(1.0)  # one step end per second


def test_wait_outside_the_step_means_the_same_fraction() -> None:
    """``with data_wait(): batch = next(it)`` then ``with step():``: the loop is wait + step."""
    clock = FakeClock()
    meter = StepMetrics(clock)
    for _ in range(4):
        with meter.data_wait():
            clock.advance(0.25)
        with meter.step():
            clock.advance(0.75)
    snap = meter.snapshot()
    assert snap.step_seconds_total == pytest.approx(3.0)
    assert snap.loop_seconds_total == pytest.approx(4.0)
    assert snap.data_wait_fraction == pytest.approx(0.25)


def test_nothing_timed_is_all_zeros_and_no_eta() -> None:
    snap = StepMetrics(FakeClock()).snapshot()
    assert (snap.steps, snap.data_wait_fraction, snap.steps_per_second) == (0, 0.0, 0.0)
    assert snap.remaining_seconds(100) is None


def test_the_rate_follows_the_recent_window_and_gives_the_eta() -> None:
    clock = FakeClock()
    meter = StepMetrics(clock, window=5)
    for seconds in [10.0] * 10 + [1.0] * 10:  # slow start, then fast: the window sees the fast steps
        with meter.step():
            clock.advance(seconds)
    snap = meter.snapshot()
    assert snap.steps_per_second == pytest.approx(1.0)
    assert snap.remaining_seconds(80) == pytest.approx(60.0)
    assert snap.remaining_seconds(80, done_steps=50) == pytest.approx(30.0)


def test_a_raising_block_counts_its_time_but_a_failed_step_is_not_a_step() -> None:
    clock = FakeClock()
    meter = StepMetrics(clock)
    it = iter([])

    def failing_step() -> None:
        with meter.step(), meter.data_wait():
            clock.advance(2.0)
            next(it)

    with pytest.raises(StopIteration):
        failing_step()
    snap = meter.snapshot()
    assert snap.steps == 0
    assert snap.data_wait_seconds_total == pytest.approx(2.0)
    assert snap.step_seconds_total == pytest.approx(2.0)
    # The nesting depth was restored: a later wait inside a step is inside.
    with meter.step(), meter.data_wait():
        clock.advance(1.0)
    assert meter.snapshot().loop_seconds_total == pytest.approx(3.0)


def test_threads_timing_at_once_lose_no_updates() -> None:
    """A loader thread timing its own waits while the loop times steps: every update counted."""
    clock = FakeClock()
    meter = StepMetrics(clock)

    def loader() -> None:
        for _ in range(2000):
            with meter.data_wait():
                pass

    def loop() -> None:
        for _ in range(2000):
            with meter.step():
                pass

    threads = [threading.Thread(target=f) for f in (loader, loop, loader, loop)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert meter.snapshot().steps == 4000


def test_the_default_meter_is_made_on_first_use_only() -> None:
    code = (
        "import trainspec.stages.metrics as m; assert m._default is None; "
        "from trainspec.stages import data_wait, train_step, default_metrics\n"
        "with train_step():\n    with data_wait(): pass\n"
        "assert m._default is default_metrics() and default_metrics().snapshot().steps == 1"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
    with train_step(), data_wait():
        pass
    assert default_metrics().snapshot().steps >= 1


@pytest.mark.parametrize(
    ("env", "zero"),
    [
        ({}, True),
        ({"RANK": "0", "WORLD_SIZE": "4"}, True),
        ({"RANK": "3", "WORLD_SIZE": "4"}, False),
        ({"PET_NODE_RANK": "1", "PET_NPROC_PER_NODE": "2", "PET_NNODES": "2", "LOCAL_RANK": "0"}, False),
        ({"PET_NODE_RANK": "0", "PET_NPROC_PER_NODE": "2", "PET_NNODES": "2", "LOCAL_RANK": "1"}, False),
        ({"PET_NODE_RANK": "0", "PET_NPROC_PER_NODE": "2", "PET_NNODES": "2", "LOCAL_RANK": "0"}, True),
        ({"JAX_PROCESS_ID": "1", "JAX_NUM_PROCESSES": "2"}, False),
        ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}, True),
    ],
)
def test_is_rank_zero_reads_the_same_rank_as_process_info(env: dict[str, str], zero: bool) -> None:
    assert is_rank_zero(env) is zero


RANK_VARS = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "PET_NODE_RANK",
    "PET_NPROC_PER_NODE",
    "PET_NNODES",
    "JAX_PROCESS_ID",
    "JAX_NUM_PROCESSES",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
)


def _clean_rank_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in RANK_VARS:
        monkeypatch.delenv(name, raising=False)


def test_rank_zero_only_runs_on_rank_zero_and_reads_the_rank_at_call_time(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _clean_rank_env(monkeypatch)
    calls = []

    @rank_zero_only
    def log(value: int) -> int:
        """Logs."""
        calls.append(value)
        return value * 2

    assert log.__doc__ == "Logs." and log.__name__ == "log"
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")  # decorated before, called after the launcher set the rank
    assert log(1) is None
    rank_zero_print("from rank 1")
    monkeypatch.setenv("RANK", "0")
    assert log(2) == 4
    rank_zero_print("from rank 0")
    assert calls == [2]
    assert capsys.readouterr().out == "from rank 0\n"


def test_rank_zero_only_in_simulated_ranks() -> None:
    """Four processes with RANK 0..3: only rank 0's guarded function runs."""
    code = "from trainspec.stages import rank_zero_only\n@rank_zero_only\ndef hello():\n    print('hello')\nhello()\n"
    outs = []
    for rank in range(4):
        env = {k: v for k, v in __import__("os").environ.items() if k not in RANK_VARS}
        env.update(RANK=str(rank), WORLD_SIZE="4")
        outs.append(
            subprocess.run(
                [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
            ).stdout
        )
    assert outs == ["hello\n", "", "", ""]


def test_prometheus_text_has_the_names_the_podmonitor_scrapes() -> None:
    clock = FakeClock()
    meter = StepMetrics(clock)
    with meter.step():
        with meter.data_wait():
            clock.advance(0.5)
        clock.advance(1.5)
    text = prometheus_text(meter.snapshot())
    samples = {line.split()[0]: float(line.split()[1]) for line in text.splitlines() if not line.startswith("#")}
    assert samples == {
        "trainspec_step_seconds_total": 2.0,
        "trainspec_data_wait_seconds_total": 0.5,
        "trainspec_data_wait_fraction": 0.25,
        "trainspec_steps_total": 1.0,
        "trainspec_steps_per_second": 0.0,
    }  # unknown until two steps ended
    for name, (kind, _help, _attr) in METRIC_NAMES.items():
        assert f"# TYPE {name} {kind}\n" in text
        assert kind != "counter" or name.endswith("_total")  # Prometheus naming: counters end in _total


def test_serve_metrics_only_when_asked_and_on_rank_zero() -> None:
    assert serve_metrics(env={}) is None  # no port given, none set: nothing served
    assert serve_metrics(0, env={"RANK": "1", "WORLD_SIZE": "2"}) is None
    clock = FakeClock()
    meter = StepMetrics(clock)
    server = serve_metrics(0, metrics=meter, host="127.0.0.1", env={})
    assert server is not None
    try:
        with meter.step():
            clock.advance(3.0)
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=10) as resp:
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            body = resp.read().decode()
        assert "trainspec_step_seconds_total 3.0\n" in body
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/other", timeout=10)
        assert missing.value.code == 404
    finally:
        server.close()


def test_serve_metrics_reads_the_port_variable_and_never_raises_on_a_busy_port(
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = serve_metrics(0, metrics=StepMetrics(), host="127.0.0.1", env={})
    assert first is not None
    try:
        again = serve_metrics(metrics=StepMetrics(), host="127.0.0.1", env={"TRAINSPEC_METRICS_PORT": str(first.port)})
        assert again is None
        assert f"cannot serve metrics on port {first.port}" in capsys.readouterr().err
        assert serve_metrics(env={"TRAINSPEC_METRICS_PORT": "http"}) is None
        assert "is not a port" in capsys.readouterr().err
    finally:
        first.close()
