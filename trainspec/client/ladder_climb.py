"""``trainspec ladder run`` (``submit --ladder``) on a cluster: a ladder's rungs, one after the other.

Each rung is the TrainJob ``compile --ladder`` writes for it, applied as ``trainspec submit``
applies a job (:func:`trainspec.kube.submit.submit`: its checkpoint claim, the TrainJob, its
earlier runs retired), then waited for until it is Complete or Failed (a watch on the TrainJob,
renewed every ``poll`` seconds; the phase as ``trainspec status`` reads it, Kueue's queueing
included) has ended. The next rung is submitted only after the previous one ended: Complete, or
out of its ``maxRunTime`` (Trainer's ``DeadlineExceeded``, Kueue's maximum execution time), which is
how a rung of a long job ends after measuring for its hour; a failed rung stops the climb and the
later rungs are not submitted.

**Resuming.** The climb keeps no state of its own: the cluster is the record. Before submitting a
rung it reads the TrainJob of the rung's current run (its name, with the run id that the rung's
content gives it, and the ``trainspec.dev/run`` label): one that has ended is not submitted
again, one that is queued or running is waited for, one that Failed stops the climb (deleting it,
``trainspec cancel``, lets the next climb measure the rung anew). So a climb interrupted by Ctrl-C
(the rung under way keeps running on the cluster) resumes where it was when run again; after a
change to the spec the rungs are new runs and are measured again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from trainspec.client.ladder_readback import COMPLETE, DEADLINE, FAILED, ClusterRung, read_trainjob, rung_end, why
from trainspec.kube import reading
from trainspec.kube.session import CommandError, api_diagnostic
from trainspec.kube.state import JobView
from trainspec.kube.submit import SubmitIncomplete, check_runtime, submit

__all__ = ["Climb", "ClimbOptions"]

#: Seconds between the reads of a rung while it runs (a watch of that long in between).
POLL_SECONDS = 10.0


@dataclass(frozen=True)
class ClimbOptions:
    """What ``submit`` options the climb applies the rungs with, and how often it reads a rung."""

    with_runtimes: bool = False
    force_conflicts: bool = False
    dry_run: bool = False
    poll: float = POLL_SECONDS


@dataclass
class Climb:
    """Climbs ``rungs`` in order; ``say`` gets the progress lines. After :meth:`run`: ``stopped``
    holds why each rung that was not submitted was not (by tag), ``failed`` the rung that failed."""

    kube: Any
    rungs: Sequence[ClusterRung]
    say: Callable[[str], None]
    options: ClimbOptions = field(default_factory=ClimbOptions)
    stopped: dict[str, str] = field(default_factory=dict)
    failed: str | None = None
    #: The rung being waited for (the one an interruption leaves running on the cluster).
    current: ClusterRung | None = None
    sleep: Callable[[float], None] = time.sleep

    def run(self) -> int:
        """Climb; 0 when every rung completed (or, under ``dry_run``, was accepted), 1 when one failed.

        Raises :class:`CommandError` for what the cluster refused (a missing runtime, RBAC ...).
        """
        opts = self.options
        if not opts.with_runtimes:  # a missing runtime stops the climb before its first rung, not at its fourth
            for rung in self.rungs:
                check_runtime(self.kube, rung.objects, with_runtimes=False, dry_run=opts.dry_run, force=False)
        for i, rung in enumerate(self.rungs):
            if not self._rung(rung):
                why = f"rung {rung.tag} failed"
                self.stopped.update({later.tag: why for later in self.rungs[i + 1 :]})
                return 1
        return 0

    def _line(self, text: str) -> None:
        self.say(text)

    def _rung(self, rung: ClusterRung) -> bool:
        """Submit the rung (unless its current run is there already) and wait for it; False when it failed."""
        where = f"TrainJob {rung.namespace}/{rung.trainjob}"
        found = None if self.options.dry_run else read_trainjob(self.kube, rung)
        if rung.current(found):
            assert found is not None
            view = reading.job_view(self.kube, rung.namespace, rung.trainjob, found)
            end = rung_end(view)
            if end in (COMPLETE, DEADLINE):
                self._line(f"  rung {rung.tag}: {where} ended already ({view.label()}): not submitted again")
                return True
            if end == FAILED:
                self.failed = rung.tag
                self._line(
                    f"  rung {rung.tag}: {where} ended {why(view)} in an earlier climb; the climb stops here. "
                    f"To measure it again: trainspec cancel {rung.trainjob} -n {rung.namespace} (its checkpoint "
                    "claim stays), then run the climb again"
                )
                return False
            self._line(f"  rung {rung.tag}: {where} is submitted already: waiting for it")
        else:
            self._submit(rung)
            if self.options.dry_run:
                return True
        self.current = rung
        view, end = self._wait(rung)
        self.current = None
        if end == DEADLINE:
            self._line(f"  rung {rung.tag}: ran out its maxRunTime, the time a rung measures for: it has ended")
        if end != FAILED:
            return True
        self.failed = rung.tag
        self._line(
            f"  rung {rung.tag}: {where} ended {why(view)}; the climb stops here "
            f"(trainspec logs {rung.trainjob} -n {rung.namespace} shows what it printed)"
        )
        return False

    def _submit(self, rung: ClusterRung) -> None:
        opts = self.options
        dry = " (server dry run)" if opts.dry_run else ""
        self._line(f"  rung {rung.tag}: submitting TrainJob {rung.namespace}/{rung.trainjob}{dry}")
        try:
            submit(
                self.kube,
                [rung.objects],
                with_runtimes=opts.with_runtimes,
                dry_run=opts.dry_run,
                force=opts.force_conflicts,
                say=lambda line: self._line(f"    {line}"),
            )
        except SubmitIncomplete as exc:  # an object after the TrainJob (its PodMonitor): the rung runs, and measures
            for diagnostic in exc.diagnostics:
                self._line(f"    not applied: {diagnostic.message} (the rung runs without it)")

    def _wait(self, rung: ClusterRung) -> tuple[JobView, str]:
        """Until the rung's TrainJob has ended (:func:`rung_end`), and how; a line each time its phase changes."""
        job = self._read(rung)
        said = ""
        while True:
            view = reading.job_view(self.kube, rung.namespace, rung.trainjob, job)
            if view.label() != said:
                said = view.label()
                self._line(f"  rung {rung.tag}: {said}")
            end = rung_end(view)
            if end is not None:
                return view, end
            started = time.monotonic()
            changed = self._next(rung, job)
            if changed is None:
                # A watch that ended early (a proxy, a server closing it) must not turn into a busy loop.
                left = self.options.poll - (time.monotonic() - started)
                if left > 0:
                    self.sleep(left)
            job = changed or self._read(rung)

    def _read(self, rung: ClusterRung) -> dict[str, Any]:
        found = read_trainjob(self.kube, rung)
        if not rung.current(found):
            from trainspec.dsl import codes
            from trainspec.dsl.diagnostics import Diagnostic
            from trainspec.kube.session import where

            raise CommandError(
                Diagnostic(
                    codes.NO_SUCH_CLUSTER_JOB,
                    f"TrainJob {rung.namespace}/{rung.trainjob} (rung {rung.tag}) was deleted while the climb "
                    "waited for it",
                    file=where(self.kube, rung.namespace, rung.trainjob),
                    line=1,
                    column=1,
                    hint="run the climb again to submit the rung anew",
                )
            )
        assert found is not None
        return found

    def _next(self, rung: ClusterRung, job: dict[str, Any]) -> dict[str, Any] | None:
        """The TrainJob once it changed (a watch of at most ``poll`` seconds), None when it did not
        (or was deleted: the read that follows says so)."""
        version = str((job.get("metadata") or {}).get("resourceVersion") or "0")
        try:
            _, changed = reading.watch_trainjob(self.kube, rung.namespace, rung.trainjob, version, self.options.poll)
        except Exception as exc:
            what = f"watch TrainJob {rung.namespace}/{rung.trainjob}"
            raise CommandError(api_diagnostic(exc, self.kube, what=what)) from None
        return changed
