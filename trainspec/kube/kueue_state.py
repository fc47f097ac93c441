"""What Kueue says of a TrainJob's Workload, in its own words: pending and why, admitted,
evicted and requeued, preempted and by whom.

Pure functions of the Workload object (``kueue.x-k8s.io/v1beta2``), tested without a cluster.
The facts come from Kueue's API and controllers (0.19):

* ``QuotaReserved=False`` says why the Workload waits. Its reason is either the legacy ``Pending``
  (``Inadmissible`` for a missing or stopped queue, ``Waiting`` while ``waitForPodsReady.
  blockAdmission`` holds admission) or, with the unadmitted-workloads observability of KEP-10852,
  a granular one: ``WaitingForQuota``, ``ExceedsMaxQuota``, ``NoMatchingFlavor``,
  ``TopologyPlacementFailed``, ``WaitingForPreemptedWorkloads``, ... The message is the
  scheduler's (``couldn't assign flavors to pod set node: insufficient unused quota for cpu in
  flavor default, 4 more needed``) either way. :attr:`Waiting.cause` is the granular reason:
  Kueue's own when it gives one, else read from the legacy message (the scheduler's wording for
  each case), so scripts see the same word whichever way the cluster's Kueue is configured.
* ``Evicted=True`` (reasons ``PodsReadyTimeout``, ``Preempted``, ``Deactivated``,
  ``AdmissionCheck``, ``ClusterQueueStopped``, ``NodeFailures``, ...) stays True until quota is
  reserved again, when Kueue turns it False with the message ``Previously: ...``; ``Preempted``
  says who preempted (``Preempted to accommodate a workload (UID: ..., JobUID: ...) due to ...;
  preemptor path: ...; preemptee path: ...``) with a reason ``InClusterQueue``,
  ``InCohortReclamation``, ``InCohortFairSharing`` or ``InCohortReclaimWhileBorrowing``.
* After a ``PodsReadyTimeout`` eviction (waitForPodsReady is on by default from Kueue 0.19)
  ``status.requeueState`` counts the requeues and says when the next one is (``requeueAt``,
  exponential backoff); ``Requeued`` turns True (``BackoffFinished``) when the Workload is back
  in its queue. ``status.schedulingStats.evictions`` counts evictions by reason and underlying
  cause; ``accumulatedPastExecutionTimeSeconds`` is the time admitted in earlier admissions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from trainspec.kube.times import human_duration

__all__ = [
    "EvictionCount",
    "KueueCondition",
    "PodsReady",
    "Preemption",
    "Queueing",
    "Requeue",
    "Waiting",
    "kueue_lines",
    "ordinal",
    "queueing",
    "waiting_cause",
    "workload_of",
]

QUOTA_RESERVED = "QuotaReserved"
ADMITTED = "Admitted"
FINISHED = "Finished"
EVICTED = "Evicted"
PREEMPTED = "Preempted"
PODS_READY = "PodsReady"
REQUEUED = "Requeued"
#: Evicted reasons meaning "spec.active is false" (v1beta2, and the name older releases used).
DEACTIVATED_REASONS = ("Deactivated", "InactiveWorkload")

#: The granular QuotaReserved=False reasons (KEP-10852), with what each means for the job.
CAUSES = {
    "WaitingForQuota": "the ClusterQueue's unused quota is too small now: the job starts when "
    "running workloads finish or are preempted",
    "ExceedsMaxQuota": "the job asks for more than the ClusterQueue can ever give, borrowing "
    "included: it never starts as it is (make it smaller, or ask for more quota)",
    "NoMatchingFlavor": "no ResourceFlavor of the ClusterQueue fits the pods (node labels, taints "
    "or a resource the queue does not cover): it never starts as it is",
    "TopologyPlacementFailed": "the quota is there, but no topology domain has room for the pods "
    "together: the job starts when one frees up",
    "WaitingForPreemptedWorkloads": "Kueue preempted other workloads to make room and waits for them to stop",
    "WaitingForPodsReady": "Kueue admits nothing more until the admitted workloads have their pods "
    "ready (waitForPodsReady.blockAdmission)",
    "Misconfigured": "the LocalQueue or its ClusterQueue is missing or inactive",
    "Suspended": "the LocalQueue or its ClusterQueue is stopped (stopPolicy)",
    "PendingEvaluation": "Kueue's scheduler has not looked at it yet",
    "AdmissionGated": "an admission gate holds it",
    "OnHold": "its quota reservation was released on purpose",
    "Deactivated": "the Workload is deactivated (spec.active: false)",
}
#: Legacy messages -> the granular reason, least severe first: one pod set's message lists every
#: flavor Kueue tried, and the job can start as soon as the most hopeful of them fits.
_LEGACY_MESSAGES = (
    ("WaitingForPreemptedWorkloads", re.compile(r"Pending the preemption of \d+ workload")),
    ("TopologyPlacementFailed", re.compile(r"topology \S+ (doesn't allow to fit|allows to fit only)")),
    ("WaitingForQuota", re.compile(r"insufficient unused quota")),
    ("ExceedsMaxQuota", re.compile(r"> maximum capacity|insufficient quota for \S+ in flavor \S+ in ClusterQueue")),
    ("NoMatchingFlavor", re.compile(r"doesn't match node affinity|untolerated taint|unavailable in ClusterQueue")),
)
_PREEMPTOR = re.compile(
    r"\(UID: (?P<uid>[^,)]*)(?:, JobUID: (?P<job>[^)]*))?\)"
    r"(?:.*?; preemptor path: (?P<by>[^;]*); preemptee path: (?P<of>.*))?"
)


@dataclass
class KueueCondition:
    """One Workload condition as Kueue wrote it; ``since`` is its ``lastTransitionTime``."""

    reason: str
    message: str = ""
    active: bool = True  # False: Kueue reset it ("Previously: ...") when quota was reserved again
    since: str | None = None


@dataclass
class Waiting:
    """Why the Workload has no quota: its ``QuotaReserved=False`` condition, verbatim, and the cause."""

    reason: str
    message: str = ""
    #: The granular reason (``WaitingForQuota``...): Kueue's own, else read from its message; "" unknown.
    cause: str = ""
    since: str | None = None


@dataclass
class Preemption(KueueCondition):
    """The ``Preempted`` condition (reason ``InClusterQueue``, ``InCohortReclamation``...) and
    who preempted, as far as Kueue's message names it."""

    preemptor_workload_uid: str = ""
    preemptor_job_uid: str = ""
    preemptor_path: str = ""
    preemptee_path: str = ""


@dataclass
class Requeue:
    """``status.requeueState`` (requeues after ``PodsReadyTimeout`` evictions) and the ``Requeued`` condition."""

    count: int | None = None
    #: When Kueue puts the Workload back in its queue (RFC 3339), after the backoff.
    at: str | None = None
    #: The ``Requeued`` condition: True once back in the queue; its reason (``BackoffFinished``...).
    requeued: bool | None = None
    reason: str = ""
    message: str = ""


@dataclass
class PodsReady:
    """The ``PodsReady`` condition: whether every pod is ready (``WaitForStart``, ``WaitForRecovery``...)."""

    ready: bool
    reason: str = ""
    message: str = ""
    since: str | None = None


@dataclass
class EvictionCount:
    """One entry of ``status.schedulingStats.evictions``."""

    reason: str
    underlying_cause: str = ""
    count: int = 0


@dataclass
class Queueing:
    """What Kueue says of the job's Workload.

    ``state``: Pending, QuotaReserved, Admitted, Evicted, Preempted, Deactivated or Finished, with
    the ``reason`` and ``message`` of the condition that decided it (Kueue's words).
    """

    workload: str
    queue: str = ""
    state: str = "Pending"
    reason: str = ""
    message: str = ""
    #: The ClusterQueue holding the quota (``status.admission.clusterQueue``) once reserved.
    cluster_queue: str = ""
    since: str | None = None
    waiting: Waiting | None = None
    eviction: KueueCondition | None = None
    preemption: Preemption | None = None
    requeue: Requeue | None = None
    pods_ready: PodsReady | None = None
    evictions: list[EvictionCount] = field(default_factory=list)
    #: Seconds admitted in earlier admissions (``accumulatedPastExecutionTimeSeconds``).
    past_admitted_seconds: int | None = None


def waiting_cause(reason: str, message: str) -> str:
    """The granular reason of a ``QuotaReserved=False`` condition: Kueue's own, else read from a
    legacy ``Pending``/``Inadmissible``/``Waiting`` message; "" when the message does not say."""
    if reason in CAUSES:
        return reason
    if reason == "Inadmissible":
        return "Misconfigured" if "doesn't exist" in message else ""
    if reason == "Waiting" and "PodsReady" in message:
        return "WaitingForPodsReady"
    if reason != "Pending":
        return ""
    return next((cause for cause, pattern in _LEGACY_MESSAGES if pattern.search(message)), "")


def workload_of(trainjob: dict[str, Any], workloads: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The Kueue Workload owned by the TrainJob (ownerReference uid), the newest if several."""
    uid = (trainjob.get("metadata") or {}).get("uid")
    owned = [
        w
        for w in workloads
        if any(
            r.get("uid") == uid and r.get("kind") == "TrainJob"
            for r in (w.get("metadata") or {}).get("ownerReferences") or []
        )
    ]
    owned.sort(key=lambda w: (w.get("metadata") or {}).get("creationTimestamp") or "")
    return owned[-1] if owned else None


def _conditions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(c.get("type")): c for c in status.get("conditions") or [] if isinstance(c, dict)}


def _condition(c: dict[str, Any]) -> KueueCondition:
    return KueueCondition(
        str(c.get("reason") or ""),
        str(c.get("message") or ""),
        c.get("status") == "True",
        c.get("lastTransitionTime"),
    )


def _preemption(c: dict[str, Any]) -> Preemption:
    base = _condition(c)
    p = Preemption(base.reason, base.message, base.active, base.since)
    if m := _PREEMPTOR.search(base.message):
        p.preemptor_workload_uid = "" if m.group("uid") == "UNKNOWN" else m.group("uid") or ""
        p.preemptor_job_uid = "" if (m.group("job") or "UNKNOWN") == "UNKNOWN" else m.group("job")
        p.preemptor_path = "" if (m.group("by") or "UNKNOWN") == "UNKNOWN" else m.group("by").strip()
        p.preemptee_path = "" if (m.group("of") or "UNKNOWN") == "UNKNOWN" else m.group("of").strip()
    return p


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def queueing(workload: dict[str, Any]) -> Queueing:
    """Pending and why, admitted, evicted (and requeued), preempted: from the Workload's condition statuses."""
    meta = workload.get("metadata") or {}
    spec = workload.get("spec") or {}
    status = workload.get("status") or {}
    conds = _conditions(status)
    true = {t for t, c in conds.items() if c.get("status") == "True"}
    q = Queueing(str(meta.get("name") or ""), str(spec.get("queueName") or ""))
    q.cluster_queue = str((status.get("admission") or {}).get("clusterQueue") or "")
    reserved = conds.get(QUOTA_RESERVED)
    if reserved is not None and reserved.get("status") != "True":
        reason, message = str(reserved.get("reason") or ""), str(reserved.get("message") or "")
        q.waiting = Waiting(reason, message, waiting_cause(reason, message), reserved.get("lastTransitionTime"))
    if EVICTED in conds:
        q.eviction = _condition(conds[EVICTED])
    if PREEMPTED in conds:
        q.preemption = _preemption(conds[PREEMPTED])
    if PODS_READY in conds:
        ready = _condition(conds[PODS_READY])
        q.pods_ready = PodsReady(ready.active, ready.reason, ready.message, ready.since)
    requeue_state = status.get("requeueState") or {}
    requeued = conds.get(REQUEUED)
    if requeue_state or requeued is not None:
        q.requeue = Requeue(_int(requeue_state.get("count")), requeue_state.get("requeueAt"))
        if requeued is not None:
            q.requeue.requeued = requeued.get("status") == "True"
            q.requeue.reason = str(requeued.get("reason") or "")
            q.requeue.message = str(requeued.get("message") or "")
    q.evictions = [
        EvictionCount(str(e.get("reason") or ""), str(e.get("underlyingCause") or ""), _int(e.get("count")) or 0)
        for e in (status.get("schedulingStats") or {}).get("evictions") or []
        if isinstance(e, dict)
    ]
    q.past_admitted_seconds = _int(status.get("accumulatedPastExecutionTimeSeconds"))
    _decide(q, conds, true, active=spec.get("active", True) is not False)
    return q


def _decide(q: Queueing, conds: dict[str, dict[str, Any]], true: set[str], *, active: bool) -> None:
    """The state, and the condition whose reason and message explain it."""
    # Evicted stays True until quota is reserved again; once the quota is released and Kueue has
    # put the Workload back in its queue (Requeued=True), it waits like any other: Pending.
    evicted = EVICTED in true and not (QUOTA_RESERVED not in true and REQUEUED in true)
    state, deciding = "Pending", conds.get(QUOTA_RESERVED)
    if FINISHED in true:
        state, deciding = FINISHED, conds[FINISHED]
    elif evicted and (str(conds[EVICTED].get("reason") or "") in DEACTIVATED_REASONS or not active):
        state, deciding = "Deactivated", conds[EVICTED]
    elif evicted and PREEMPTED in true:
        state, deciding = PREEMPTED, conds[PREEMPTED]
    elif evicted:
        state, deciding = EVICTED, conds[EVICTED]
    elif PREEMPTED in true and QUOTA_RESERVED in true:
        state, deciding = PREEMPTED, conds[PREEMPTED]
    elif ADMITTED in true:
        state, deciding = ADMITTED, conds[ADMITTED]
    elif QUOTA_RESERVED in true:
        state, deciding = QUOTA_RESERVED, conds[QUOTA_RESERVED]
    q.state = state
    if deciding is not None:
        q.reason, q.message = str(deciding.get("reason") or ""), str(deciding.get("message") or "")
        q.since = deciding.get("lastTransitionTime")
    if state == "Pending" and not active:
        q.state, q.reason = "Deactivated", q.reason or "Inactive"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def requeue_note(q: Queueing) -> str:
    """``requeued at T (2nd time)`` while an evicted Workload waits for its backoff; "" otherwise."""
    r = q.requeue
    if r is None or r.requeued or (not r.at and not r.count):
        return ""
    times = f"{ordinal(r.count)} time" if r.count else ""
    if r.at:
        return f"requeued at {r.at}" + (f" ({times})" if times else "")
    return f"requeued the {times}" if times else ""


def _why(reason: str, message: str) -> str:
    return f" ({': '.join(p for p in (reason, message) if p)})" if reason or message else ""


def kueue_lines(q: Queueing) -> list[str]:
    """The ``kueue:`` lines of ``trainspec status``: Kueue's state in its words, then what explains
    the wait (the cause, requeue, preemption, pods not ready, earlier evictions). Times are the
    API's own (RFC 3339), so the lines of an unchanged Workload never change."""
    out = [f"  kueue: workload {q.workload} in queue {q.queue or '?'}: {q.state}{_why(q.reason, q.message)}"]
    w = q.waiting
    if w is not None and w.message and w.message != q.message and q.state != FINISHED:
        out.append(f"  kueue: waiting{_why(w.reason, w.message)}")
    if w is not None and w.cause in CAUSES and q.state in ("Pending", EVICTED, PREEMPTED):
        out.append(f"  waiting: {w.cause}; {CAUSES[w.cause]}")
    if note := requeue_note(q):
        out.append(f"  requeue: {note}")
    p = q.preemption
    if p is not None and p.active:
        who = [
            f"{label} {value}"
            for label, value in (
                ("workload uid", p.preemptor_workload_uid),
                ("job uid", p.preemptor_job_uid),
                ("preemptor path", p.preemptor_path),
                ("preemptee path", p.preemptee_path),
            )
            if value
        ]
        if who or q.state != PREEMPTED:
            out.append(f"  preempted ({p.reason}) by " + (", ".join(who) or f"Kueue: {p.message}"))
    r = q.pods_ready
    if r is not None and not r.ready and q.state in (ADMITTED, QUOTA_RESERVED):
        since = f" since {r.since}" if r.since else ""
        out.append(
            f"  pods ready: no{since}{_why(r.reason, r.message)}; Kueue evicts the job when they are "
            "not ready within waitForPodsReady.timeout"
        )
    if q.evictions:
        parts = [
            f"{e.reason}" + (f" ({e.underlying_cause})" if e.underlying_cause else "") + f" x{e.count}"
            for e in q.evictions
        ]
        out.append("  evictions: " + ", ".join(parts))
    if q.past_admitted_seconds:
        out.append(f"  admitted {human_duration(q.past_admitted_seconds)} in earlier admissions")
    return out
