"""A TrainJob's state as people read it: phase, queueing, pods, progress, age and deadline.

Pure functions of the objects the API returns (TrainJob, Kueue Workloads, pods), so they are
tested without a cluster and need no client. The phase comes from condition *status*, never
from "the last condition's type": after a resume the last condition is ``Suspended=False``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from trainspec.k8s import wellknown as W
from trainspec.kube.kueue_state import Queueing, kueue_lines, queueing, requeue_note, workload_of
from trainspec.kube.times import human_duration, parse_time

JOB_INDEX_LABEL = W.JOB_INDEX_LABEL
TERMINAL = frozenset({"Complete", "Failed"})
#: Phases whose message says why the job is not running (a transition line repeats it).
EXPLAINED = frozenset({"Queued", "Evicted", "Preempted", "Deactivated", "Suspended", "Failed"})

__all__ = [
    "JobView",
    "PodGroup",
    "Queueing",
    "human_duration",
    "job_state",
    "newest_per_index",
    "parse_time",
    "transition",
    "view",
    "workload_of",
]


def job_state(trainjob: dict[str, Any]) -> tuple[str, str, str]:
    """``(phase, reason, message)`` from condition *status*, never from the last condition's type.

    Phases: Complete, Failed, Suspended, Running, Created.
    """
    from trainspec.compiler.lower.dialects import dialect_for_kind

    # The one reading of a TrainJob's state: the Trainer dialect's (the KFP launcher reads it too).
    dialect = dialect_for_kind("TrainJob")
    assert dialect is not None  # the Trainer dialect's kind
    facts = dialect.launch_facts(trainjob)
    return facts.phase, facts.reason, facts.message


@dataclass
class PodGroup:
    """The newest pod of each index of one replicated job, counted."""

    name: str
    pods: int = 0
    ready: int = 0
    running: int = 0
    pending: int = 0
    succeeded: int = 0
    failed: int = 0
    restarts: int = 0
    #: Pod names by node index (the completion index), newest pod only.
    newest: dict[int, str] = field(default_factory=dict)
    #: The Kubernetes node each of those pods was scheduled to (``spec.nodeName``), by node index.
    nodes: dict[int, str] = field(default_factory=dict)


@dataclass
class JobView:
    """Everything ``trainspec status`` prints for one TrainJob (``--format json`` is ``asdict``)."""

    name: str
    namespace: str
    phase: str
    reason: str = ""
    message: str = ""
    queue: Queueing | None = None
    groups: list[PodGroup] = field(default_factory=list)
    progress: int | None = None
    remaining_seconds: int | None = None
    metrics: dict[str, str] = field(default_factory=dict)
    #: ``trainerStatus.lastUpdatedTime`` as the API gives it, and how old it was when read.
    last_updated: str | None = None
    last_updated_seconds: int | None = None
    age_seconds: int | None = None
    deadline_seconds: int | None = None
    deadline_left_seconds: int | None = None
    #: Who the TrainJob is (``-o wide``): the trainspec job it is a run of (``trainspec.dev/job``),
    #: the run id (``trainspec.dev/run``), its runtime (``Kind/name``) and the Kueue LocalQueue
    #: it was submitted to (``kueue.x-k8s.io/queue-name``); "" when the TrainJob does not say.
    job: str = ""
    run: str = ""
    runtime: str = ""
    queue_name: str = ""
    #: The experiment tracker's run the pods reported (``spec.tracking``): its URL, or its id and
    #: store where the tracker has no pages; "" when none was reported (docs/tracking.md).
    tracking: str = ""

    @property
    def done(self) -> bool:
        return self.phase in TERMINAL

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``trainspec status --format json``)."""
        data = asdict(self)
        for group in data["groups"]:
            group["newest"] = {str(k): v for k, v in group["newest"].items()}
            group["nodes"] = {str(k): v for k, v in group["nodes"].items()}
        return data

    def headline(self) -> str:
        """``ns/name  Phase  detail`` on one line (``trainspec list`` and ``status --watch``)."""
        detail = self.detail()
        return f"{self.namespace}/{self.name}  {self.phase}" + (f"  {detail}" if detail else "")

    def detail(self) -> str:
        if self.phase == "Queued" and self.queue is not None:
            return f"({self.queue.reason}: {self.queue.message})" if self.queue.message else ""
        if self.reason or self.message:
            return f"({': '.join(p for p in (self.reason, self.message) if p)})"
        return ""

    def lines(self) -> list[str]:
        """The human form of ``trainspec status JOB``."""
        # A phase Kueue decided (Queued, Evicted...) has its why on the kueue line below.
        detail = (
            ""
            if self.queue is not None and (self.reason, self.message) == (self.queue.reason, self.queue.message)
            else self.detail()
        )
        out = [f"TrainJob {self.namespace}/{self.name}: {self.phase}" + (f" {detail}" if detail else "")]
        if self.queue is not None:
            out.extend(kueue_lines(self.queue))
        out.extend(group_line(g) for g in self.groups)
        if self.progress is not None or self.remaining_seconds is not None or self.metrics or self.last_updated:
            out.append("  progress: " + self._progress())
        if self.tracking:
            out.append("  tracking: " + self.tracking)
        timing = []
        if self.age_seconds is not None:
            timing.append(f"age {human_duration(self.age_seconds)}")
        if self.deadline_seconds is not None:
            left = (
                f", {human_duration(self.deadline_left_seconds)} left"
                if self.deadline_left_seconds is not None and not self.done
                else ""
            )
            timing.append(f"deadline {human_duration(self.deadline_seconds)} of running{left}")
        if timing:
            out.append("  " + "; ".join(timing))
        return out

    def label(self) -> str:
        """``Queued (WaitingForQuota)``, ``Evicted (PodsReadyTimeout)``, ``Running``: the phase and
        its reason, as ``status --watch`` names the two ends of a transition. A queued job is named
        by the cause of its wait (:attr:`Waiting.cause`) when Kueue's reason is the legacy ``Pending``."""
        reason = self.reason
        waiting = self.queue.waiting if self.queue is not None else None
        if self.phase == "Queued" and waiting is not None and waiting.cause:
            reason = waiting.cause
        return self.phase + (f" ({reason})" if reason and reason != self.phase else "")

    def _progress(self) -> str:
        """``45%, about 60m left, loss=0.23; updated 30s ago``: Trainer's ``trainerStatus``."""
        parts = []
        if self.progress is not None:
            parts.append(f"{self.progress}%")
        if self.remaining_seconds is not None:
            parts.append(f"about {human_duration(self.remaining_seconds)} left")
        shown = self.metrics
        if self.tracking:  # the tracker run's ids are on the tracking line, as its URL
            from trainspec.stages.tracking_link import LINK_METRICS

            shown = {k: v for k, v in shown.items() if k not in LINK_METRICS}
        parts.extend(f"{k}={v}" for k, v in shown.items())
        text = ", ".join(parts) or "none reported yet"
        if self.last_updated_seconds is not None:
            text += f"; updated {human_duration(self.last_updated_seconds)} ago"
        return text


def group_line(g: PodGroup) -> str:
    """``  node: 2 pods: 2 ready, 2 running, ...``: one replicated job's newest pods, counted."""
    return (
        f"  {g.name}: {g.pods} pods: {g.ready} ready, {g.running} running, {g.pending} pending, "
        f"{g.succeeded} succeeded, {g.failed} failed; {g.restarts} restarts"
    )


def transition(before: JobView | None, after: JobView) -> list[str]:
    """What ``status --watch`` prints when the job changes: the whole status the first time, then
    one line per change, such as ``ml-dev/ddp: Queued (WaitingForQuota) -> Admitted`` or
    ``ml-dev/ddp: Running -> Evicted (PodsReadyTimeout): Exceeded the PodsReady timeout ...;
    requeued at T (2nd time)``, followed by what else changed (pods, progress, Kueue's details).
    [] when nothing people read has changed (ages and "updated ... ago" do not count)."""
    if before is None:
        return after.lines()
    out: list[str] = []
    name = f"{after.namespace}/{after.name}"
    moved = (before.phase, before.reason, before.message) != (after.phase, after.reason, after.message)
    if moved:
        head = f"{before.label()} -> {after.label()}" if before.label() != after.label() else after.label()
        note = requeue_note(after.queue) if after.queue is not None and after.phase == "Evicted" else ""
        said = after.message if after.phase in EXPLAINED else ""
        tail = "; ".join(p for p in (said, note) if p)
        out.append(f"{name}: {head}" + (f": {tail}" if tail else ""))
    old = kueue_lines(before.queue) if before.queue is not None else []
    new = kueue_lines(after.queue) if after.queue is not None else []
    # The first kueue line restates the state the transition line has just named.
    out.extend(line for i, line in enumerate(new) if line not in old and not (moved and i == 0))
    out.extend(group_line(g) for g in after.groups if g not in before.groups)
    if (before.progress, before.remaining_seconds, before.metrics) != (
        after.progress,
        after.remaining_seconds,
        after.metrics,
    ):
        out.append("  progress: " + after._progress())
    return out


def _tracking(spec: dict[str, Any], metrics: dict[str, str]) -> str:
    """The tracker run the pods reported in their progress metrics, from the trainer's plain env."""
    from trainspec.stages.tracking_link import run_link

    entries = (spec.get("trainer") or {}).get("env") or []
    env = {str(e.get("name")): str(e["value"]) for e in entries if isinstance(e, dict) and "value" in e}
    return run_link(env, metrics) or ""


def _identify(v: JobView, trainjob: dict[str, Any]) -> None:
    """The job, run, runtime and queue a TrainJob names in its labels and ``runtimeRef``."""
    meta = trainjob.get("metadata") or {}
    labels = meta.get("labels") or {}
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    v.job, v.run = str(labels.get(W.JOB_LABEL) or ""), str(labels.get(W.RUN_LABEL) or "")
    v.runtime = "/".join(str(part) for part in (ref.get("kind"), ref.get("name")) if part)
    v.queue_name = str(labels.get(W.QUEUE_NAME_LABEL) or "")


def _index(pod: dict[str, Any]) -> tuple[int, int]:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    try:
        return int(labels.get(JOB_INDEX_LABEL) or 0), int(labels.get(W.COMPLETION_INDEX_LABEL) or 0)
    except ValueError:
        return 0, 0


def newest_per_index(pods: list[dict[str, Any]]) -> dict[tuple[str, int, int], dict[str, Any]]:
    """For each (replicated job, job index, completion index), the newest pod (a restarted
    job's replacement, never the dead pod it replaced)."""
    newest: dict[tuple[str, int, int], dict[str, Any]] = {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        rjob = str((meta.get("labels") or {}).get(W.REPLICATED_JOB_LABEL) or "?")
        key = (rjob, *_index(pod))
        stamp = (meta.get("creationTimestamp") or "", meta.get("name") or "")
        old = newest.get(key)
        if old is None or stamp > ((old["metadata"].get("creationTimestamp") or ""), old["metadata"].get("name") or ""):
            newest[key] = pod
    return newest


def pod_groups(pods: list[dict[str, Any]]) -> list[PodGroup]:
    """Per replicated job: the newest pods counted (ready, running, pending, done, failed, restarts)."""
    groups: dict[str, PodGroup] = {}
    for (rjob, job_index, completion), pod in sorted(newest_per_index(pods).items()):
        g = groups.setdefault(rjob, PodGroup(rjob))
        status = pod.get("status") or {}
        phase = status.get("phase") or "Pending"
        g.pods += 1
        g.running += phase == "Running"
        g.pending += phase == "Pending"
        g.succeeded += phase == "Succeeded"
        g.failed += phase == "Failed"
        g.ready += any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
        g.restarts += sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])
        index = job_index * 10_000 + completion if job_index else completion
        g.newest[index] = pod["metadata"]["name"]
        if (pod.get("spec") or {}).get("nodeName"):
            g.nodes[index] = str(pod["spec"]["nodeName"])
    return list(groups.values())


def view(
    trainjob: dict[str, Any],
    *,
    workloads: Sequence[dict[str, Any]] = (),
    pods: Sequence[dict[str, Any]] = (),
    now: datetime | None = None,
) -> JobView:
    """The :class:`JobView` of a TrainJob, its namespace's Workloads and its pods."""
    meta = trainjob.get("metadata") or {}
    spec = trainjob.get("spec") or {}
    status = trainjob.get("status") or {}
    phase, reason, message = job_state(trainjob)
    found = workload_of(trainjob, list(workloads))
    queue = queueing(found) if found is not None else None
    if phase in ("Running", "Created") and queue is not None and queue.state in ("Evicted", "Preempted"):
        # Kueue is stopping the job: the TrainJob says Running until Kueue has suspended it.
        phase, reason, message = queue.state, queue.reason, queue.message
    elif phase == "Suspended" and queue is not None:
        # Kueue suspends every job it queues: say what Kueue says rather than "Suspended".
        phase = {
            "Admitted": "Admitted",
            "QuotaReserved": "Admitting",
            "Evicted": "Evicted",
            "Preempted": "Preempted",
            "Deactivated": "Deactivated",
        }.get(queue.state, "Queued")
        reason, message = queue.reason, queue.message
    elif phase == "Created" and queue is not None and queue.state == "Pending":
        phase, reason, message = "Queued", queue.reason, queue.message
    v = JobView(
        str(meta.get("name") or ""),
        str(meta.get("namespace") or ""),
        phase,
        reason,
        message,
        queue,
        pod_groups(list(pods)),
    )
    _identify(v, trainjob)
    trainer = status.get("trainerStatus") or {}
    if trainer:
        v.progress = trainer.get("progressPercentage")
        v.remaining_seconds = trainer.get("estimatedRemainingSeconds")
        v.metrics = {str(m.get("name")): str(m.get("value")) for m in trainer.get("metrics") or []}
        v.tracking = _tracking(spec, v.metrics)
    now = now or datetime.now(timezone.utc)
    updated = parse_time(trainer.get("lastUpdatedTime")) if trainer else None
    if updated is not None:
        v.last_updated = str(trainer["lastUpdatedTime"])
        v.last_updated_seconds = max(0, int((now - updated).total_seconds()))
    created = parse_time(meta.get("creationTimestamp"))
    if created is not None:
        v.age_seconds = int((now - created).total_seconds())
    if spec.get("activeDeadlineSeconds"):
        v.deadline_seconds = int(spec["activeDeadlineSeconds"])
        # Trainer counts the deadline from the (last) resume: the Suspended=False transition.
        resumed = next(
            (
                parse_time(c.get("lastTransitionTime"))
                for c in status.get("conditions") or []
                if c.get("type") == "Suspended" and c.get("status") == "False"
            ),
            None,
        )
        if resumed is not None:
            v.deadline_left_seconds = max(0, v.deadline_seconds - int((now - resumed).total_seconds()))
    return v
