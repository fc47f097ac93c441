"""What :class:`trainspec.Client` returns: frozen dataclasses (its exceptions: ``errors.py``).

A :class:`JobState` is built from what ``trainspec status`` computes (``trainspec.kube.state``'s
``JobView``): the typed fields here are the ones people branch on, and :attr:`JobState.details`
is the whole of ``status -o json``, so a field ``status`` learns appears there without a change
here. Nothing in this module talks to a cluster or imports the ``kubernetes`` package.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from trainspec.k8s import wellknown as W

if TYPE_CHECKING:
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.kube.state import JobView

__all__ = [
    "Admission",
    "Applied",
    "Cancelled",
    "Event",
    "JobState",
    "LogLine",
    "Pods",
    "Progress",
    "RuntimeInfo",
    "SubmitResult",
]

#: The phases :attr:`JobState.phase` takes (docs/cluster.md); ``wait`` accepts these.
PHASES = frozenset(
    {
        "Created",
        "Queued",
        "Admitting",
        "Admitted",
        "Evicted",
        "Preempted",
        "Deactivated",
        "Suspended",
        "Running",
        "Complete",
        "Failed",
    }
)
TERMINAL = frozenset({"Complete", "Failed"})


def _frozen(mapping: Mapping[Any, Any] | None) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping or {}))


# -- a TrainJob's state -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Admission:
    """What Kueue says of the job's Workload."""

    workload: str
    queue: str
    #: ``Pending``, ``QuotaReserved``, ``Admitted``, ``Evicted``, ``Preempted``, ``Finished``, ``Deactivated``.
    state: str
    admitted: bool
    #: Kueue's own words: the condition's reason and message (why it waits, why it was evicted).
    reason: str
    message: str
    #: Why it waits, in Kueue 0.19's words (``WaitingForQuota``, ``ExceedsMaxQuota``,
    #: ``NoMatchingFlavor``, ``TopologyPlacementFailed``...), also when the cluster's Kueue says
    #: only ``Pending``; "" when it does not wait.
    cause: str
    #: The ClusterQueue that reserved quota ("" before).
    cluster_queue: str
    #: Everything ``status -o json`` shows of the Workload (``queue``), fields added there included.
    details: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Pods:
    """The newest pod of each index of one replicated job (``node``, ``launcher``, an initializer), counted."""

    replicated_job: str
    pods: int
    ready: int
    running: int
    pending: int
    succeeded: int
    failed: int
    restarts: int
    #: The newest pod's name per node index.
    by_index: Mapping[int, str] = field(default_factory=dict)
    #: The Kubernetes node each of those pods was scheduled to, per node index.
    hosts: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Progress:
    """Trainer's ``status.trainerStatus``: what the training code reports (docs/metrics.md)."""

    percent: int | None
    remaining_seconds: int | None
    metrics: Mapping[str, str]
    #: ``lastUpdatedTime`` as the API gives it, and how old it was when read.
    updated: str | None
    updated_seconds_ago: int | None


@dataclass(frozen=True)
class JobState:
    """One TrainJob as ``trainspec status`` reads it: phase, Kueue admission, pods, progress, age.

    ``str(state)`` and :meth:`lines` are what ``trainspec status JOB`` prints; :meth:`to_dict` is
    ``trainspec status JOB -o json``.
    """

    name: str
    namespace: str
    #: ``Queued``, ``Admitting``, ``Admitted``, ``Evicted``, ``Preempted``, ``Deactivated``,
    #: ``Suspended``, ``Created``, ``Running``, ``Complete`` or ``Failed`` (docs/cluster.md).
    phase: str
    reason: str
    message: str
    #: The job's name (label ``trainspec.dev/job``; the TrainJob's own name for other TrainJobs).
    job: str
    #: The run id (label ``trainspec.dev/run``), None for a TrainJob trainspec did not compile.
    run_id: str | None
    #: The runtime it runs on (``spec.runtimeRef``).
    runtime: str
    runtime_kind: str
    admission: Admission | None
    pods: tuple[Pods, ...]
    #: Container restarts of the newest pods, all replicated jobs together.
    restarts: int
    #: None until the training code reports progress.
    progress: Progress | None
    #: ``metadata.creationTimestamp``, and seconds since then when read.
    created: str | None
    age_seconds: int | None
    deadline_seconds: int | None
    deadline_left_seconds: int | None
    #: Everything ``trainspec status JOB -o json`` prints (fields added there appear here first).
    details: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    _view: JobView | None = field(default=None, compare=False, repr=False)

    @property
    def done(self) -> bool:
        """Complete or Failed."""
        return self.phase in TERMINAL

    @property
    def succeeded(self) -> bool:
        return self.phase == "Complete"

    @property
    def nodes(self) -> Pods | None:
        """The trainer nodes' pods (replicated job ``node``), None before any exists."""
        return next((p for p in self.pods if p.replicated_job == W.NODE), None)

    def lines(self) -> list[str]:
        """The human form, line by line, as ``trainspec status JOB`` prints it."""
        return (
            self._view.lines() if self._view is not None else [f"TrainJob {self.namespace}/{self.name}: {self.phase}"]
        )

    def to_dict(self) -> dict[str, Any]:
        """``trainspec status JOB -o json``, plus ``job``, ``run_id`` and ``runtime``."""
        return {**dict(self.details), "job": self.job, "run_id": self.run_id, "runtime": self.runtime}

    def __str__(self) -> str:
        return "\n".join(self.lines())

    @classmethod
    def of(cls, trainjob: Mapping[str, Any], view: JobView) -> JobState:
        """The state of ``trainjob`` from its ``JobView`` (``trainspec.kube.state.view``)."""
        data = view.to_dict()
        meta = trainjob.get("metadata") or {}
        labels = meta.get("labels") or {}
        ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
        queue = data.get("queue")
        admission = None
        if isinstance(queue, dict):
            admission = Admission(
                workload=str(queue.get("workload") or ""),
                queue=str(queue.get("queue") or ""),
                state=str(queue.get("state") or ""),
                admitted=queue.get("state") in ("Admitted", "Finished"),
                reason=str(queue.get("reason") or ""),
                message=str(queue.get("message") or ""),
                cause=str((queue.get("waiting") or {}).get("cause") or ""),
                cluster_queue=str(queue.get("cluster_queue") or ""),
                details=_frozen(queue),
            )
        pods = tuple(
            Pods(
                replicated_job=str(g.get("name") or ""),
                pods=int(g.get("pods") or 0),
                ready=int(g.get("ready") or 0),
                running=int(g.get("running") or 0),
                pending=int(g.get("pending") or 0),
                succeeded=int(g.get("succeeded") or 0),
                failed=int(g.get("failed") or 0),
                restarts=int(g.get("restarts") or 0),
                by_index=_frozen({int(k): str(v) for k, v in (g.get("newest") or {}).items()}),
                hosts=_frozen({int(k): str(v) for k, v in (g.get("nodes") or {}).items()}),
            )
            for g in data.get("groups") or []
        )
        progress = None
        if any(data.get(k) not in (None, {}) for k in ("progress", "remaining_seconds", "metrics", "last_updated")):
            progress = Progress(
                percent=data.get("progress"),
                remaining_seconds=data.get("remaining_seconds"),
                metrics=_frozen(data.get("metrics")),
                updated=data.get("last_updated"),
                updated_seconds_ago=data.get("last_updated_seconds"),
            )
        name = str(meta.get("name") or data.get("name") or "")
        return cls(
            name=name,
            namespace=str(meta.get("namespace") or data.get("namespace") or ""),
            phase=str(data.get("phase") or ""),
            reason=str(data.get("reason") or ""),
            message=str(data.get("message") or ""),
            job=str(labels.get(W.JOB_LABEL) or name),
            run_id=labels.get(W.RUN_LABEL),
            runtime=str(ref.get("name") or ""),
            runtime_kind=str(ref.get("kind") or "ClusterTrainingRuntime"),
            admission=admission,
            pods=pods,
            restarts=sum(p.restarts for p in pods),
            progress=progress,
            created=meta.get("creationTimestamp"),
            age_seconds=data.get("age_seconds"),
            deadline_seconds=data.get("deadline_seconds"),
            deadline_left_seconds=data.get("deadline_left_seconds"),
            details=_frozen(data),
            _view=view,
        )


# -- logs, events, runtimes ---------------------------------------------------------------------------

_PREFIX = re.compile(r"^node-(?P<node>\d+) (?:rank-(?P<rank>\d+)|ranks-(?P<first>\d+)\.\.(?P<last>\d+)) \| ?")
_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z(?: |$)")


@dataclass(frozen=True)
class LogLine:
    """One line of a trainer pod's log. ``str(line)`` is how ``trainspec logs`` prints it."""

    node: int
    #: The global rank that wrote it, when known: one process per node, or torchrun's ``--tee``
    #: prefix naming the local rank. None when several ranks share the node's stream.
    rank: int | None
    text: str
    #: The node's ranks, first and last.
    ranks: tuple[int, int]
    #: When the kubelet read it from the container (the log API's timestamp), in UTC.
    time: datetime | None = None

    def __str__(self) -> str:
        who = f"rank-{self.rank}" if self.rank is not None else f"ranks-{self.ranks[0]}..{self.ranks[1]}"
        return f"node-{self.node} {who} | {self.text}"

    @classmethod
    def parse(cls, printed: str) -> LogLine | None:
        """A line as ``trainspec logs [--timestamps]`` prints it (``node-1 rank-5 | [TIME ]text``),
        typed; None for another line."""
        m = _PREFIX.match(printed)
        if m is None:
            return None
        node, text = int(m["node"]), printed[m.end() :]
        stamp = _STAMP.match(text)
        time = parse_api_time(stamp.group(0).strip()) if stamp else None
        if stamp:
            text = text[stamp.end() :]
        if m["rank"] is not None:
            rank = int(m["rank"])
            return cls(node, rank, text, (rank, rank), time)
        return cls(node, None, text, (int(m["first"]), int(m["last"])), time)


def parse_api_time(text: Any) -> datetime | None:
    """An API time (``2026-01-01T00:00:00Z``, or a MicroTime ``...00.123456Z``), in UTC; None if absent."""
    if not isinstance(text, str) or len(text) < 19:
        return None
    head, _, rest = text.partition(".")
    fraction = "".join(c for c in rest if c.isdigit())[:6] if rest else ""
    try:
        moment = datetime.strptime(head[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return moment.replace(microsecond=int(fraction.ljust(6, "0"))) if fraction else moment


@dataclass(frozen=True)
class Event:
    """A Kubernetes Event of the TrainJob, its JobSet, Jobs or pods, or its Kueue Workload."""

    #: When it was last seen (``lastTimestamp``, else ``eventTime``, else ``firstTimestamp``).
    time: datetime | None
    #: ``Normal`` or ``Warning``.
    type: str
    reason: str
    message: str
    #: The object it is about.
    kind: str
    name: str
    #: How many times it happened, and when first.
    count: int
    first_time: datetime | None
    #: Who reported it (``kueue-admission``, ``default-scheduler``, ``kubelet``, ...).
    source: str

    def __str__(self) -> str:
        when = self.time.strftime("%Y-%m-%dT%H:%M:%SZ") if self.time else "-"
        seen = f" (x{self.count})" if self.count > 1 else ""
        return f"{when}  {self.type:<7}  {self.reason:<16}  {self.kind.lower()}/{self.name}: {self.message}{seen}"


@dataclass(frozen=True)
class RuntimeInfo:
    """A ClusterTrainingRuntime or TrainingRuntime in the cluster."""

    name: str
    kind: str
    #: ``cluster`` (a ClusterTrainingRuntime) or ``namespace`` (a TrainingRuntime).
    scope: str
    namespace: str | None
    #: Label ``trainer.kubeflow.org/framework``: the Kubeflow SDK lists only runtimes that have it.
    framework: str | None
    #: Whether trainspec compiled it (label ``app.kubernetes.io/managed-by: trainspec``).
    compiled_by_trainspec: bool
    #: ``spec.mlPolicy`` in a few words: ``torch, 1 node``, ``mpi (OpenMPI), 2 nodes, 8 processes per node``.
    ml_policy: str
    num_nodes: int | None
    #: The trainer container's image (container ``node`` of the ``trainer`` ancestor step).
    image: str | None
    labels: Mapping[str, str] = field(default_factory=dict, repr=False)


# -- submit and cancel -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Applied:
    """One object ``submit`` applied (or an earlier run it deleted)."""

    kind: str
    #: None for cluster-scoped objects (ClusterTrainingRuntime).
    namespace: str | None
    name: str
    #: ``created``, ``configured``, ``unchanged``, ``skipped`` (not applied: ``why`` says why, and
    #: the result's ``diagnostics`` hold the warning), or ``deleted`` (an earlier run of the job,
    #: which the new one replaces).
    action: str
    dry_run: bool
    #: The line ``trainspec submit`` prints for it.
    message: str
    #: Why, for an object not applied (``skipped``) or an earlier run deleted.
    why: str = ""


@dataclass(frozen=True)
class SubmitResult:
    """What ``submit`` did: the objects in the order they were applied; iterating yields them."""

    objects: tuple[Applied, ...]
    #: The TrainJobs submitted (``<job>-<run id>`` names), one per job.
    jobs: tuple[str, ...]
    #: The compile's warnings and submit's (an object skipped: TS730, TS731); errors raise
    #: :class:`ClusterError` instead.
    diagnostics: tuple[Diagnostic, ...] = ()

    def __iter__(self) -> Iterator[Applied]:
        return iter(self.objects)

    def __len__(self) -> int:
        return len(self.objects)


@dataclass(frozen=True)
class Cancelled:
    """What ``cancel`` did."""

    name: str
    namespace: str
    #: False when the TrainJob was already gone when the deletion was sent.
    deleted: bool
    #: Whether it was seen gone (``wait=True``).
    gone: bool
    #: Checkpoint claims kept: submitting the job again resumes from them.
    kept_claims: tuple[str, ...] = ()
