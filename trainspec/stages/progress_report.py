"""Progress reports from rank 0: to Trainer's TrainJob status when the cluster offers it, else stdout.

::

    from trainspec.stages import ProgressReporter

    with ProgressReporter() as progress:      # rank 0 reports; every other rank: no-op
        for step in range(start, total_steps):
            ...
            progress.report(step + 1, total_steps, metrics={"loss": loss})
    # leaving the block sends the latest values (the final flush)

Where it goes: with Trainer's ``TrainJobStatus`` variables present
(:mod:`trainspec.stages.trainer_status`) it posts to the TrainJob's status endpoint, so
``kubectl get trainjob`` and ``trainspec status`` show progress, ETA and metrics; otherwise it
prints one line to stdout (``format="json"`` for one JSON object per line instead).

Rate limit: at most one report per ``interval`` seconds (default 10 s to Trainer, whose SDK
throttles at 5 s; 60 s to stdout); between them only the latest values are kept, and
:meth:`ProgressReporter.flush` / :meth:`~ProgressReporter.close` send them regardless. The
first report goes out at once. Posts run on a daemon thread, so a slow or unreachable endpoint
never stalls a step; a failed post is logged once per kind of failure and the next window sends
the then-latest values.

Each report carries ``progressPercentage`` (``100 * step // total_steps`` unless given),
``estimatedRemainingSeconds`` (remaining steps at the recent step rate of the
:class:`~trainspec.stages.StepMetrics`, unless given) and the metrics: the caller's, then the
meter's ``data_wait_fraction`` once it has timed a step and ``steps_per_second`` once its rate is
known (two steps ended), and with it the recent figures a measurement reads back
(:mod:`trainspec.stages.reported_rates`: rank 0's samples/s and tokens/s, the recent data-wait
share, how many steps they are over and how steady; left out of the human stdout line).
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from trainspec.stages.metrics import StepMetrics, default_metrics
from trainspec.stages.rank_zero import is_rank_zero

if TYPE_CHECKING:  # the Trainer client loads on first use: most imports of trainspec.stages never report
    from trainspec.stages.tracking_run import Tracker
    from trainspec.stages.trainer_status import Update

__all__ = ["ProgressReporter", "StdoutSink", "report_progress"]

#: Default seconds between reports, by destination.
TRAINER_INTERVAL = 10.0
STDOUT_INTERVAL = 60.0


class Sink(Protocol):
    """Where updates go; ``send`` returns True when the update was delivered and never raises."""

    blocking: bool

    def send(self, update: Update) -> bool: ...


class StdoutSink:
    """One line per update on stdout: a compact human line, or ``format="json"``."""

    blocking = False

    def __init__(self, stream: TextIO | None = None, *, format: str = "text") -> None:
        if format not in ("text", "json"):
            raise ValueError(f"format must be 'text' or 'json', got {format!r}")
        self._stream = stream
        self.format = format

    def send(self, update: Update) -> bool:
        """Write the update's line; False (never an exception) when stdout is gone."""
        stream = self._stream or sys.stdout
        try:
            print(self.line(update), file=stream, flush=True)
        except (OSError, ValueError):  # a closed or broken stdout must not stop training
            return False
        return True

    def line(self, update: Update) -> str:
        """``trainspec progress: step 20/57 (35%), about 1m2s left, loss=0.42, ...``."""
        if self.format == "json":
            from trainspec.stages.trainer_status import status_payload

            status = status_payload(update)["trainerStatus"]
            if update.step is not None:
                status = {"step": update.step, "totalSteps": update.total_steps, **status}
            return json.dumps({"trainspecProgress": status}, separators=(",", ":"))
        parts = []
        if update.step is not None:
            where = f"step {update.step}" + (f"/{update.total_steps}" if update.total_steps else "")
            parts.append(where + (f" ({update.progress}%)" if update.progress is not None else ""))
        elif update.progress is not None:
            parts.append(f"{update.progress}%")
        if update.remaining_seconds is not None:
            parts.append(f"about {_duration(update.remaining_seconds)} left")
        parts.extend(f"{name}={value}" for name, value in update.metrics)
        return "trainspec progress: " + ", ".join(parts)


def _duration(seconds: int) -> str:
    minutes, secs = divmod(max(0, int(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _text(value: object) -> str:
    """A metric value as the API wants it: a string (floats to 6 significant digits)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


class _Sender:
    """A daemon thread that delivers the latest submitted update; a newer one replaces a waiting one."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._cond = threading.Condition()
        self._slot: Update | None = None
        self._busy = False
        self._closed = False
        self.last_ok = True
        self._thread = threading.Thread(target=self._run, name="trainspec-progress", daemon=True)
        self._thread.start()

    def submit(self, update: Update) -> None:
        with self._cond:
            self._slot = update
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._slot is None and not self._closed:
                    self._cond.wait()
                if self._slot is None:
                    return
                update, self._slot, self._busy = self._slot, None, True
            ok = self._sink.send(update)
            with self._cond:
                self._busy, self.last_ok = False, ok
                self._cond.notify_all()

    def drain(self, timeout: float) -> bool:
        """Wait until nothing is waiting or being sent; False if that took longer than ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._slot is not None or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float) -> None:
        self.drain(timeout)
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class ProgressReporter:
    """Rate-limited progress reports from global rank 0 (see the module docstring).

    ``tracker``: a :class:`~trainspec.stages.Tracker`; each report's metrics are logged to it at
    their step, and its run's ids ride along in every status update (docs/tracking.md).
    """

    def __init__(
        self,
        sink: Sink | None = None,
        *,
        metrics: StepMetrics | None = None,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        wallclock: Callable[[], float] = time.time,
        env: Mapping[str, str] | None = None,
        log: TextIO | None = None,
        flush_timeout: float = 10.0,
        tracker: Tracker | None = None,
    ) -> None:
        from trainspec.stages.trainer_status import TrainerStatusSink, trainer_endpoint

        self.active = is_rank_zero(env)
        if sink is None and self.active:
            endpoint = trainer_endpoint(env)
            sink = TrainerStatusSink(endpoint, log=log) if endpoint is not None else StdoutSink()
        self.sink = sink
        if interval is None:
            interval = TRAINER_INTERVAL if isinstance(sink, TrainerStatusSink) else STDOUT_INTERVAL
        if interval < 0:
            raise ValueError(f"interval must be >= 0 seconds, got {interval}")
        self.interval = interval
        self._meter = metrics
        self._clock, self._wallclock = clock, wallclock
        self._log = log
        self._flush_timeout = flush_timeout
        self._lock = threading.Lock()
        #: The arguments of the latest report() and the wall-clock time they were given.
        self._latest: tuple[Any, ...] | None = None
        self._dirty = False  # the latest values have not been handed to the sink yet
        self._last_sent: float | None = None
        self._warned: set[str] = set()
        self._sender: _Sender | None = None
        self._last_ok = True  # the last synchronous send was delivered (a sender thread keeps its own)
        self.reports = 0  # updates handed to the sink
        #: Gets every report's metrics at its step (not rate-limited), and adds its run's ids to each update.
        self.tracker = tracker

    @property
    def metrics(self) -> StepMetrics:
        return self._meter if self._meter is not None else default_metrics()

    def report(
        self,
        step: int | None = None,
        total_steps: int | None = None,
        *,
        progress: float | None = None,
        remaining_seconds: float | None = None,
        metrics: Mapping[str, object] | None = None,
    ) -> None:
        """Record the latest values; send them if the last report is ``interval`` seconds old.

        ``step`` is the number of completed steps of ``total_steps``; ``progress`` (0-100) and
        ``remaining_seconds`` override what they imply. Never raises on a bad value: it is left
        out and named once on stderr.
        """
        if not self.active:
            return
        if self.tracker is not None and metrics and step is not None:
            self.tracker.log_metrics(step, metrics)
        # Only the arguments are kept here (the per-step cost); the update is built when it is sent.
        values = (step, total_steps, progress, remaining_seconds, dict(metrics) if metrics else None, self._wallclock())
        now = self._clock()
        with self._lock:
            self._latest, self._dirty = values, True
            due = self._last_sent is None or now - self._last_sent >= self.interval
            if due:
                self._last_sent = now
        if due:
            self._hand_over()

    def flush(self) -> None:
        """Send the latest values now, whatever the rate limit (also when the last send failed)."""
        if not self.active:
            return
        if self._sender is not None:  # let a post under way finish first: its outcome decides a resend
            self._sender.drain(self._flush_timeout)
        failed = not (self._sender.last_ok if self._sender is not None else self._last_ok)
        with self._lock:
            if self._latest is None or not (self._dirty or failed):
                return
            self._dirty = True
            self._last_sent = self._clock()
        self._hand_over()
        if self._sender is not None:
            self._sender.drain(self._flush_timeout)

    def close(self) -> None:
        """The final flush, then stop the sending thread (waits at most ``flush_timeout`` seconds)."""
        self.flush()
        if self._sender is not None:
            self._sender.close(self._flush_timeout)

    def __enter__(self) -> ProgressReporter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _hand_over(self) -> None:
        with self._lock:
            values, self._dirty = self._latest, False
        if values is None or self.sink is None:
            return
        update = self._update(*values)
        self.reports += 1
        if not self.sink.blocking:
            self._last_ok = self.sink.send(update)
            return
        if self._sender is None:
            self._sender = _Sender(self.sink)
        self._sender.submit(update)

    def _update(
        self,
        step: int | None,
        total: int | None,
        progress: float | None,
        remaining: float | None,
        extra: Mapping[str, object] | None,
        taken: float,
    ) -> Update:
        from trainspec.stages import reported_rates as R
        from trainspec.stages.trainer_status import METRIC_TEXT_MAX, METRICS_MAX, Update

        snap = self.metrics.snapshot()
        if progress is None and step is not None and total:
            progress = 100 * step // total
        if remaining is None and step is not None and total:
            remaining = snap.remaining_seconds(total, step)
        # The tracker run's ids first: each report replaces the status's metrics, and these must stay
        # (not on stdout, where the tracker has named its run once).
        linked = self.tracker is not None and not isinstance(self.sink, StdoutSink)
        named: dict[str, str] = self.tracker.status_metrics() if self.tracker is not None and linked else {}
        for name, value in (extra or {}).items():
            text = _text(value)
            if not (isinstance(name, str) and 0 < len(name) <= METRIC_TEXT_MAX and 0 < len(text) <= METRIC_TEXT_MAX):
                self._warn(f"metric {name!r}", "names and values must be 1 to 64 characters; left out")
                continue
            named[name] = text
        if snap.steps_per_second > 0:
            named.setdefault(R.STEPS_PER_SECOND, _text(R.rate_value(snap.steps_per_second)))
        if snap.steps:
            named.setdefault(R.DATA_WAIT_FRACTION, _text(round(snap.data_wait_fraction, 4)))
        # The figures a measurement reads back (trainspec ladder report): machine-read, so not on the
        # human stdout line; the JSON line and the Trainer status carry them.
        if not (isinstance(self.sink, StdoutSink) and self.sink.format == "text"):
            for name, value in R.measurement_metrics(snap).items():
                named.setdefault(name, value)
        if len(named) > METRICS_MAX:
            self._warn("metrics", f"at most {METRICS_MAX} metrics are kept")
        return Update(_whole(progress), _whole(remaining), tuple(named.items())[:METRICS_MAX], taken, step, total)

    def _warn(self, what: str, why: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            print(f"trainspec: progress report: {what}: {why}", file=self._log or sys.stderr, flush=True)


def _whole(value: float | None) -> int | None:
    """A finite number as an int (NaN and infinities: unknown)."""
    if value is None or not math.isfinite(value):
        return None
    return int(value)


_default: ProgressReporter | None = None
_default_lock = threading.Lock()


def report_progress(step: int | None = None, total_steps: int | None = None, **kwargs: Any) -> None:
    """:meth:`ProgressReporter.report` on a default reporter created on first use (rank 0 only).

    The default reporter reads the default :class:`~trainspec.stages.StepMetrics`, and its
    final flush runs when the interpreter exits.
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                import atexit

                _default = ProgressReporter()
                atexit.register(_default.close)
    _default.report(step, total_steps, **kwargs)
