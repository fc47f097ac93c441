"""Experiment tracking from global rank 0, as ``spec.tracking`` says (in-pod helper).

::

    from trainspec.stages import ProgressReporter, Tracker

    with Tracker(params={"lr": 3e-4, "batch_size": 32}) as tracker:   # rank 0: starts or resumes the run
        progress = ProgressReporter(tracker=tracker)   # every report's metrics go to the tracker too
        for step in range(start, total_steps):
            ...
            progress.report(step + 1, total_steps, metrics={"loss": loss})
            # or on its own: tracker.log_metrics(step + 1, {"loss": loss})
        progress.close()

What it does, on global rank 0 only (every other rank: each call does nothing):

* The tracker is the one ``TRAINSPEC_TRACKING`` names (``mlflow`` or ``wandb``, from the job's
  ``spec.tracking``); without it the Tracker is a no-op on every rank, so a script that uses it
  runs unchanged in a job that tracks nothing, and without the library installed.
* The run is named ``<job>-<run id>`` (``TRAINSPEC_JOB_NAME``, ``TRAINSPEC_RUN_ID``): a restarted
  pod of the same run (the same TrainJob, the same ``run --local``) resumes the same tracker
  run, and a new run of the job (a changed spec) starts a new one in the same experiment
  (MLflow) or group (W&B). How each backend finds its run again: :mod:`.tracking_backends`.
* One line on stdout names the run: ``trainspec tracking: mlflow run <name> (new|resumed): <URL>``
  (the URL where the tracker has pages, else the run's id and store).
* With Trainer's TrainJobStatus endpoint (:mod:`.trainer_status`) the run's ids are posted as
  progress metrics (``mlflow_run_id``, ``mlflow_experiment_id``; ``wandb_run_id``...), from which
  ``trainspec status`` shows the run's URL; a :class:`~trainspec.stages.ProgressReporter` given
  ``tracker=`` keeps them in every later report (each report replaces the status's metrics).

Failures: a tracker that cannot start (the library missing, the server unreachable, a deleted
experiment) raises :class:`TrackingError` at :meth:`Tracker.start`, before any step is spent,
unless ``required=False`` (then a warning, and no tracking). Once started, a failed
``log_metrics`` never stops training: it is named once on stderr per kind of failure.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from trainspec.dsl.kube_facts import JOB_NAME_ENV, RUN_ID_ENV, TRACKING_ENV
from trainspec.stages.rank_zero import is_rank_zero

# The backends module imports no tracker library itself (each loads when its backend starts).
from trainspec.stages.tracking_backends import BACKENDS, RunInfo, TrackingError
from trainspec.stages.tracking_link import run_name

if TYPE_CHECKING:
    from trainspec.stages.tracking_backends import Backend, Started

__all__ = ["TRACKERS", "Tracker", "TrackingError"]

#: The trackers ``TRAINSPEC_TRACKING`` may name.
TRACKERS = ("mlflow", "wandb")
#: Final statuses of a run (MLflow's words; W&B gets an exit code from them).
FINISHED, FAILED, KILLED = "FINISHED", "FAILED", "KILLED"


class Tracker:
    """The job's experiment tracker on global rank 0; a no-op elsewhere (see the module docstring).

    ``params`` are logged once the run is open (MLflow keeps a parameter's first value: one that
    changed on a resumed run is named on stderr). ``backend`` overrides ``TRAINSPEC_TRACKING``
    (for a script started by hand). ``env`` stands in for ``os.environ``; ``log`` for stderr
    (warnings) and ``out`` for stdout (the line naming the run).
    """

    def __init__(
        self,
        *,
        params: Mapping[str, Any] | None = None,
        backend: str | None = None,
        env: Mapping[str, str] | None = None,
        required: bool = True,
        out: TextIO | None = None,
        log: TextIO | None = None,
    ) -> None:
        self._env = os.environ if env is None else env
        kind = (backend or self._env.get(TRACKING_ENV, "")).strip().lower() or None
        if kind is not None and kind not in TRACKERS:
            raise TrackingError(f"unknown tracker {kind!r} (TRAINSPEC_TRACKING): trainspec knows {', '.join(TRACKERS)}")
        self.kind = kind
        #: Whether this process logs: a tracker is named and this is global rank 0.
        self.active = kind is not None and is_rank_zero(self._env)
        script = os.path.splitext(os.path.basename(sys.argv[0] if sys.argv else ""))[0]
        default_job = script if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", script) else "train"
        #: The job (the group of its runs), and this run's name: ``<job>-<run id>``.
        self.job = self._env.get(JOB_NAME_ENV, "").strip() or default_job
        self.run_name = run_name(self._env, default_job)
        self.required = required
        #: Set by :meth:`start`: whether an earlier process of this run had opened the run already,
        #: the run's page (None where the tracker has none) and the ids the progress status carries.
        self.resumed = False
        self.url: str | None = None
        self._link: dict[str, str] = {}
        self._params = dict(params or {})
        self._backend: Backend | None = None
        self._started = False
        self._closed = False
        self._warned: set[str] = set()
        self._out, self._log = out, log

    # -- the run's life ------------------------------------------------------------------------

    def start(self) -> Tracker:
        """Open or resume the run (rank 0; at most once). Raises :class:`TrackingError` if it cannot
        (with ``required=False``: warns, and the tracker stays off)."""
        if not self.active or self._started:
            return self
        self._started = True
        try:
            started = self._open()
        except TrackingError as exc:
            if self.required:
                raise
            self._warn("start", f"{exc}; training continues without tracking")
            self.active = False
            return self
        self.resumed, self.url, self._link = started.resumed, started.url, dict(started.link)
        self._say(started)
        if self._params:
            self.log_params(self._params)
        self._post_link()
        return self

    def _open(self) -> Started:
        assert self.kind is not None
        try:
            backend = BACKENDS[self.kind]()
        except ImportError as exc:
            raise TrackingError(
                f"the job logs to {self.kind} (spec.tracking), but this image cannot import it ({exc}): install "
                f"it in the training image (pip install {self.kind})"
            ) from None
        run = RunInfo(self.job, self._env.get(RUN_ID_ENV, "").strip(), self.run_name, self._env)
        try:
            started = backend.start(run)
        except TrackingError:
            raise
        except Exception as exc:  # the library's own errors: connection, auth, a refused request
            raise TrackingError(
                f"{self.kind} run {self.run_name} cannot be opened: {type(exc).__name__}: {exc}"
            ) from exc
        self._backend = backend
        return started

    def close(self, status: str = FINISHED) -> None:
        """End the run (rank 0; at most once): ``FINISHED``, ``FAILED`` or ``KILLED``.

        A run that is never closed (the process was killed) stays running in the tracker until a
        restart resumes it.
        """
        if self._closed or self._backend is None:
            return
        self._closed = True
        try:
            self._backend.finish(status)
        except Exception as exc:
            self._warn("finish", f"{type(exc).__name__}: {exc}")

    def __enter__(self) -> Tracker:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if kind is None or _clean_exit(exc):
            self.close(FINISHED)
        else:
            self.close(KILLED if issubclass(kind, KeyboardInterrupt) else FAILED)

    # -- logging -------------------------------------------------------------------------------

    def log_metrics(self, step: int, metrics: Mapping[str, object]) -> None:
        """Log numeric ``metrics`` at ``step`` (rank 0; starts the run on first use). Values that are
        not numbers are left out (named once); a failure is named once on stderr, never raised."""
        if not self.active:
            return
        if not self._started:
            self.start()
        if self._backend is None:
            return
        numbers: dict[str, float] = {}
        for name, value in metrics.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self._warn(f"metric {name}", f"{value!r} is not a number: not logged to {self.kind}")
                continue
            numbers[str(name)] = float(value)
        if not numbers:
            return
        try:
            self._backend.log_metrics(int(step), numbers)
        except Exception as exc:  # a tracker outage must not stop a training run
            self._warn(f"log {type(exc).__name__}", f"{exc}; training continues, later steps are logged when it can")

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Log parameters (rank 0). A value MLflow refuses (it changed on a resumed run) is named once."""
        if not self.active:
            return
        if not self._started:
            self._params.update(params)
            self.start()
            return
        if self._backend is None:
            return
        try:
            refused = self._backend.log_params(params)
        except Exception as exc:
            self._warn(f"params {type(exc).__name__}", str(exc))
            return
        for name in refused:
            self._warn(f"param {name}", "its value differs from the one the run logged first; the run keeps that one")

    def status_metrics(self) -> dict[str, str]:
        """The run's ids as progress metrics (``mlflow_run_id``...), for Trainer's TrainJob status."""
        return dict(self._link)

    # -- output --------------------------------------------------------------------------------

    def _say(self, started: Started) -> None:
        state = "resumed" if started.resumed else "new"
        print(
            f"trainspec tracking: {self.kind} run {self.run_name} ({state}): {started.url or started.where}",
            file=self._out or sys.stdout,
            flush=True,
        )

    def _post_link(self) -> None:
        """The run's ids to the TrainJob's status, when Trainer offers the endpoint (never raises)."""
        if not self._link:
            return
        from trainspec.stages.trainer_status import TrainerStatusSink, Update, trainer_endpoint

        endpoint = trainer_endpoint(self._env)
        if endpoint is None:
            return
        import time

        TrainerStatusSink(endpoint, log=self._log).send(Update(metrics=tuple(self._link.items()), time=time.time()))

    def _warn(self, what: str, why: str) -> None:
        if what in self._warned:
            return
        self._warned.add(what)
        print(f"trainspec: tracking: {what}: {why}", file=self._log or sys.stderr, flush=True)


def _clean_exit(exc: BaseException | None) -> bool:
    """``sys.exit(0)`` / ``sys.exit()`` inside the block: the run finished."""
    return isinstance(exc, SystemExit) and exc.code in (0, None)
