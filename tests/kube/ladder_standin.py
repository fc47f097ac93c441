"""The controllers and rank 0 of a ladder's rungs, played for the cluster tests (test_ladder_cluster.py,
test_readme_ladder_cluster.py): each watch of the loopback stand-in moves every unfinished rung one
step (Running, then its scripted end), and an ended rung gets what its rank-0 ``ProgressReporter``
reported: a real reporter's last update, played on a clock of its own (no sleeps), posted as
Trainer's status, or printed as a JSON line into the rank-0 pod's log."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from kube_standin import StandIn

from trainspec.k8s.wellknown import LADDER_RUNG_LABEL
from trainspec.stages import ProgressReporter, StepMetrics
from trainspec.stages.progress_report import StdoutSink
from trainspec.stages.trainer_status import Update, status_payload

DONE = ("Complete", "Failed")


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Last:
    """A sink keeping the reporter's updates (not blocking: sent in the caller's thread)."""

    blocking = False

    def __init__(self) -> None:
        self.updates: list[Update] = []

    def send(self, update: Update) -> bool:
        self.updates.append(update)
        return True


def reported(step: float, wait: float, samples: int | None = 10, steps: int = 60) -> Update:
    """The last update a rank-0 ProgressReporter sends for ``steps`` steps of ``step`` + ``wait``
    seconds, each counting ``samples`` (its meter and clock real, the time played)."""
    clock, sink = _Clock(), _Last()
    meter = StepMetrics(clock)
    with ProgressReporter(sink, metrics=meter, clock=clock, wallclock=lambda: 1_767_225_600.0, env={}) as progress:
        for done in range(1, steps + 1):
            with meter.data_wait():
                clock.now += wait
            with meter.step(samples=samples):
                clock.now += step
            progress.report(done, steps, metrics={"loss": round(1 / done, 4)})
    return sink.updates[-1]


def trainer_status(update: Update) -> dict:
    return status_payload(update)["trainerStatus"]


def json_line(update: Update) -> str:
    return StdoutSink(io.StringIO(), format="json").line(update)


@dataclass
class Rung:
    """How the test's controller ends a rung: its phase, and what rank 0 reported where."""

    end: str = "Complete"
    status: Update | None = None
    log: list[str] = field(default_factory=list)
    #: The end condition's reason and message (Trainer's own for a rung past its deadline, say).
    reason: str = ""
    message: str = ""


@dataclass
class Controller:
    """Moves each unfinished rung one step per watch: Running, then its end (as Trainer and the
    TrainJobStatus endpoint would leave it). ``ended`` records (rung, requests served so far)."""

    rungs: dict[str, Rung]
    ended: list[tuple[str, int]] = field(default_factory=list)

    def __call__(self, api: StandIn) -> None:
        for (ns, name), job in list(api.trainjobs.items()):
            tag = job["metadata"]["labels"][LADDER_RUNG_LABEL]
            status = job.setdefault("status", {})
            if any(c["type"] in DONE and c["status"] == "True" for c in status.get("conditions") or []):
                continue
            rung = self.rungs[tag]
            if not status.get("jobsStatus"):
                status["jobsStatus"] = [{"name": "node", "active": 1, "ready": 1}]
            elif rung.end in DONE:
                status["jobsStatus"] = [{"name": "node", "active": 0, "ready": 0}]
                reason, message = rung.reason or f"Jobs{rung.end}", rung.message or f"rung {rung.end}"
                status["conditions"] = [{"type": rung.end, "status": "True", "reason": reason, "message": message}]
                if rung.status is not None:
                    status["trainerStatus"] = trainer_status(rung.status)
                api.add_pod(ns, f"{name}-node-0-0-abcde", name, phase="Succeeded", lines=rung.log)
                self.ended.append((tag, len(api.requests)))
            else:
                continue
            api._record("trainjobs", ns, "MODIFIED", job)
