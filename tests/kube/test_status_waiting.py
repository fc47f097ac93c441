"""``trainspec status`` explains waiting (issue 22, item 8): Kueue's pending reason and message,
WaitForPodsReady evictions and requeues, preemption and by whom, in the Workload's own words;
``status --watch`` prints transitions.

The Workloads are as Kueue 0.19 writes them (v1beta2): the conditions its scheduler and workload
controller set (``UnsetQuotaReservationWithCondition``, ``SetQuotaReservation``'s "Previously: ..."
reset, the preemptor's message), ``requeueState`` and ``schedulingStats``.
"""

from __future__ import annotations

import importlib.util
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from helpers import TJ, cli, controller_patch, write_job
from kube_standin import StandIn

from trainspec.kube.kueue_state import ordinal, queueing, waiting_cause
from trainspec.kube.state import transition, view

needs_kube = pytest.mark.skipif(
    importlib.util.find_spec("kubernetes") is None,
    reason="the kube extra is not installed: pip install 'trainspec[kube]'",
)

NOW = datetime(2026, 6, 12, 3, 0, 0, tzinfo=timezone.utc)
WL = "trainjob-llm-4f1c2"
TIMEOUT = f"Exceeded the PodsReady timeout team-nlp/{WL}"
PREEMPTED_BY = (
    "Preempted to accommodate a workload (UID: 5b2c07d4-4b1e-4a53-9d55-0c6f1ee2f0a1, JobUID: "
    "9a7e1c52-8d3f-4d8e-a4c1-3f2b6c0d9e17) due to prioritization in the ClusterQueue; preemptor path: "
    "/team-nlp-cq; preemptee path: /team-nlp-cq"
)
QUOTA = "couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"


def cond(type_: str, status: str, reason: str, message: str = "", at: str = "2026-06-12T02:00:00Z") -> dict:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": at,
        "observedGeneration": 1,
    }


def workload(*conditions: dict, active: bool = True, **status: object) -> dict:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": WL,
            "namespace": "team-nlp",
            "uid": "wl-uid-1",
            "creationTimestamp": "2026-06-12T01:00:00Z",
            "labels": {"kueue.x-k8s.io/job-uid": "tj-uid-1"},
            "ownerReferences": [
                {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "llm", "uid": "tj-uid-1"}
            ],
        },
        "spec": {"queueName": "team-nlp", "active": active, "podSets": [{"name": "node", "count": 4}]},
        "status": {"conditions": list(conditions), **status},
    }


def trainjob(*conditions: dict, running: bool = False) -> dict:
    status: dict = {"conditions": list(conditions)}
    if running:
        status["jobsStatus"] = [{"name": "node", "active": 4, "ready": 4}]
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {
            "name": "llm",
            "namespace": "team-nlp",
            "uid": "tj-uid-1",
            "creationTimestamp": "2026-06-12T01:00:00Z",
        },
        "spec": {},
        "status": status,
    }


SUSPENDED = cond("Suspended", "True", "Suspended", "TrainJob is suspended")
RESUMED = cond("Suspended", "False", "Resumed", "TrainJob is resumed")
ADMITTED = (
    cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue team-nlp-cq"),
    cond("Admitted", "True", "Admitted", "The workload is admitted"),
)
#: After a PodsReadyTimeout eviction, waiting for the backoff to end (the 2nd requeue).
EVICTED_BACKOFF = workload(
    cond("QuotaReserved", "False", "Pending", TIMEOUT),
    cond("Admitted", "False", "NoReservation", "The workload has no reservation"),
    cond("Evicted", "True", "PodsReadyTimeout", TIMEOUT, "2026-06-12T02:58:00Z"),
    cond("PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded"),
    cond("Requeued", "False", "PodsReadyTimeout", TIMEOUT),
    requeueState={"count": 2, "requeueAt": "2026-06-12T03:02:00Z"},
    schedulingStats={"evictions": [{"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 2}]},
    accumulatedPastExecutionTimeSeconds=3600,
)


@pytest.mark.parametrize(
    ("reason", "message", "cause"),
    [
        ("Pending", QUOTA, "WaitingForQuota"),
        (
            "Pending",
            (
                "couldn't assign flavors to pod set node: insufficient quota for nvidia.com/gpu in flavor h100, previously "
                "considered podsets requests (0) + current podset request (64) > maximum capacity (32)"
            ),
            "ExceedsMaxQuota",
        ),
        (
            "Pending",
            (
                "couldn't assign flavors to pod set node: topology \"gpu-topology\" doesn't allow to fit any of 16 pod(s). "
                'Total nodes: 8; excluded: resource "nvidia.com/gpu": 5'
            ),
            "TopologyPlacementFailed",
        ),
        (
            "Pending",
            (
                "couldn't assign flavors to pod set node: flavor a100 doesn't match node affinity, untolerated taint "
                "{nvidia.com/gpu: NoSchedule} in flavor h100"
            ),
            "NoMatchingFlavor",
        ),
        (
            "Pending",
            "couldn't assign flavors to pod set node: resource nvidia.com/gpu unavailable in ClusterQueue",
            "NoMatchingFlavor",
        ),
        # One pod set's message lists every flavor tried: the job starts when the most hopeful fits.
        (
            "Pending",
            (
                "couldn't assign flavors to pod set node: flavor a100 doesn't match node affinity, insufficient unused "
                "quota for nvidia.com/gpu in flavor h100, 8 more needed"
            ),
            "WaitingForQuota",
        ),
        ("Pending", QUOTA + ". Pending the preemption of 1 workload(s)", "WaitingForPreemptedWorkloads"),
        ("Pending", TIMEOUT, ""),  # the eviction's own message: the eviction explains it
        ("Inadmissible", "LocalQueue team-nlp doesn't exist", "Misconfigured"),
        ("Waiting", "waiting for all admitted workloads to be in PodsReady condition", "WaitingForPodsReady"),
        # Kueue's granular reasons (KEP-10852) are taken as they are, whatever the message.
        ("ExceedsMaxQuota", "anything", "ExceedsMaxQuota"),
        ("TopologyPlacementFailed", "anything", "TopologyPlacementFailed"),
        ("Somethingelse", QUOTA, ""),
    ],
)
def test_the_cause_of_a_wait_is_kueues_granular_reason_or_read_from_its_legacy_message(
    reason: str, message: str, cause: str
) -> None:
    assert waiting_cause(reason, message) == cause


def test_pending_shows_kueues_reason_and_message_verbatim_and_what_the_cause_means() -> None:
    granular = workload(cond("QuotaReserved", "False", "WaitingForQuota", QUOTA))
    v = view(trainjob(SUSPENDED), workloads=[granular], now=NOW)
    assert v.phase == "Queued" and (v.reason, v.message) == ("WaitingForQuota", QUOTA)
    assert v.lines()[1:3] == [
        f"  kueue: workload {WL} in queue team-nlp: Pending (WaitingForQuota: {QUOTA})",
        (
            "  waiting: WaitingForQuota; the ClusterQueue's unused quota is too small now: the job starts when running "
            "workloads finish or are preempted"
        ),
    ]
    assert v.label() == "Queued (WaitingForQuota)"
    legacy = view(trainjob(SUSPENDED), workloads=[workload(cond("QuotaReserved", "False", "Pending", QUOTA))], now=NOW)
    assert legacy.reason == "Pending" and legacy.label() == "Queued (WaitingForQuota)"
    data = legacy.to_dict()["queue"]
    assert data["waiting"] == {
        "reason": "Pending",
        "message": QUOTA,
        "cause": "WaitingForQuota",
        "since": "2026-06-12T02:00:00Z",
    }


def test_a_pods_ready_timeout_eviction_says_how_often_and_when_it_is_requeued() -> None:
    q = queueing(EVICTED_BACKOFF)
    assert (q.state, q.reason, q.message, q.since) == ("Evicted", "PodsReadyTimeout", TIMEOUT, "2026-06-12T02:58:00Z")
    assert q.requeue is not None and (q.requeue.count, q.requeue.at, q.requeue.requeued) == (
        2,
        "2026-06-12T03:02:00Z",
        False,
    )
    v = view(trainjob(SUSPENDED), workloads=[EVICTED_BACKOFF], now=NOW)
    assert v.phase == "Evicted" and v.reason == "PodsReadyTimeout"
    assert v.lines()[:5] == [
        "TrainJob team-nlp/llm: Evicted",
        f"  kueue: workload {WL} in queue team-nlp: Evicted (PodsReadyTimeout: {TIMEOUT})",
        "  requeue: requeued at 2026-06-12T03:02:00Z (2nd time)",
        "  evictions: PodsReadyTimeout (WaitForStart) x2",
        "  admitted 60m in earlier admissions",
    ]
    data = v.to_dict()["queue"]
    assert data["requeue"] == {
        "count": 2,
        "at": "2026-06-12T03:02:00Z",
        "requeued": False,
        "reason": "PodsReadyTimeout",
        "message": TIMEOUT,
    }
    assert data["evictions"] == [{"reason": "PodsReadyTimeout", "underlying_cause": "WaitForStart", "count": 2}]
    assert data["eviction"]["active"] is True and data["past_admitted_seconds"] == 3600


def test_back_in_the_queue_after_the_backoff_it_is_queued_again_with_its_history() -> None:
    requeued = workload(
        cond("QuotaReserved", "False", "Pending", QUOTA),
        cond("Evicted", "True", "PodsReadyTimeout", TIMEOUT),
        cond("Requeued", "True", "BackoffFinished", "The workload backoff was finished"),
        requeueState={"count": 2},
        schedulingStats={"evictions": [{"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 2}]},
    )
    v = view(trainjob(SUSPENDED), workloads=[requeued], now=NOW)
    assert v.phase == "Queued" and v.label() == "Queued (WaitingForQuota)"
    assert v.queue is not None and v.queue.eviction is not None and v.queue.eviction.reason == "PodsReadyTimeout"
    assert "  requeue:" not in "\n".join(v.lines())  # requeued already: no pending requeue to announce
    assert "  evictions: PodsReadyTimeout (WaitForStart) x2" in v.lines()


def test_preemption_names_the_preemptor_as_kueue_does_and_turns_to_history_on_readmission() -> None:
    preempting = workload(
        *ADMITTED,
        cond("Evicted", "True", "Preempted", PREEMPTED_BY),
        cond("Preempted", "True", "InClusterQueue", PREEMPTED_BY),
        cond("Requeued", "True", "Preempted", PREEMPTED_BY),
    )
    q = queueing(preempting)
    assert (q.state, q.reason) == ("Preempted", "InClusterQueue")
    assert q.preemption is not None
    assert (q.preemption.preemptor_workload_uid, q.preemption.preemptor_job_uid) == (
        "5b2c07d4-4b1e-4a53-9d55-0c6f1ee2f0a1",
        "9a7e1c52-8d3f-4d8e-a4c1-3f2b6c0d9e17",
    )
    assert (q.preemption.preemptor_path, q.preemption.preemptee_path) == ("/team-nlp-cq", "/team-nlp-cq")
    # The TrainJob still runs until Kueue has suspended it: the phase says what Kueue decided.
    v = view(trainjob(RESUMED, running=True), workloads=[preempting], now=NOW)
    assert (v.phase, v.reason, v.message) == ("Preempted", "InClusterQueue", PREEMPTED_BY)
    assert (
        "  preempted (InClusterQueue) by workload uid 5b2c07d4-4b1e-4a53-9d55-0c6f1ee2f0a1, job uid "
        "9a7e1c52-8d3f-4d8e-a4c1-3f2b6c0d9e17, preemptor path /team-nlp-cq, preemptee path /team-nlp-cq"
    ) in v.lines()
    readmitted = workload(
        *ADMITTED,
        cond("Evicted", "False", "QuotaReserved", "Previously: " + PREEMPTED_BY),
        cond("Preempted", "False", "QuotaReserved", "Previously: " + PREEMPTED_BY),
        schedulingStats={"evictions": [{"reason": "Preempted", "underlyingCause": "InClusterQueue", "count": 1}]},
    )
    again = queueing(readmitted)
    assert again.state == "Admitted" and again.preemption is not None and not again.preemption.active
    lines = view(trainjob(RESUMED, running=True), workloads=[readmitted], now=NOW).lines()
    assert not any(line.startswith("  preempted") for line in lines)
    assert "  evictions: Preempted (InClusterQueue) x1" in lines


def test_admitted_with_pods_not_ready_says_waitforpodsready_will_evict() -> None:
    admitted = workload(
        *ADMITTED,
        cond("PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded", "2026-06-12T02:50:00Z"),
    )
    lines = view(trainjob(RESUMED), workloads=[admitted], now=NOW).lines()
    assert (
        "  pods ready: no since 2026-06-12T02:50:00Z (WaitForStart: Not all pods are ready or succeeded); Kueue "
        "evicts the job when they are not ready within waitForPodsReady.timeout"
    ) in lines
    ready = workload(*ADMITTED, cond("PodsReady", "True", "Started", "All pods reached readiness"))
    assert not any("pods ready" in line for line in view(trainjob(RESUMED), workloads=[ready], now=NOW).lines())


def test_a_deactivated_workload_and_a_missing_queue() -> None:
    deactivated = workload(
        cond("Evicted", "True", "Deactivated", "The workload is deactivated"), active=False, requeueState={"count": 5}
    )
    assert queueing(deactivated).state == "Deactivated"
    v = view(trainjob(SUSPENDED), workloads=[deactivated], now=NOW)
    assert v.phase == "Deactivated" and v.reason == "Deactivated"
    missing = workload(cond("QuotaReserved", "False", "Inadmissible", "LocalQueue team-nlp doesn't exist"))
    lines = view(trainjob(SUSPENDED), workloads=[missing], now=NOW).lines()
    assert "  waiting: Misconfigured; the LocalQueue or its ClusterQueue is missing or inactive" in lines


def test_transitions_are_one_line_each_in_kueues_words() -> None:
    queued = view(trainjob(SUSPENDED), workloads=[workload(cond("QuotaReserved", "False", "Pending", QUOTA))], now=NOW)
    admitted = view(trainjob(SUSPENDED), workloads=[workload(*ADMITTED)], now=NOW)
    running = view(trainjob(RESUMED, running=True), workloads=[workload(*ADMITTED)], now=NOW)
    evicted = view(trainjob(SUSPENDED), workloads=[EVICTED_BACKOFF], now=NOW)
    assert transition(None, queued) == queued.lines()  # the whole status first
    assert transition(queued, admitted) == ["team-nlp/llm: Queued (WaitingForQuota) -> Admitted"]
    assert transition(admitted, running) == ["team-nlp/llm: Admitted -> Running"]
    assert transition(running, evicted) == [
        f"team-nlp/llm: Running -> Evicted (PodsReadyTimeout): {TIMEOUT}; requeued at 2026-06-12T03:02:00Z (2nd time)",
        "  requeue: requeued at 2026-06-12T03:02:00Z (2nd time)",
        "  evictions: PodsReadyTimeout (WaitForStart) x2",
        "  admitted 60m in earlier admissions",
    ]
    later = view(trainjob(SUSPENDED), workloads=[EVICTED_BACKOFF], now=datetime(2026, 6, 12, 4, tzinfo=timezone.utc))
    assert transition(evicted, later) == []  # only time passed
    assert ordinal(1) == "1st" and ordinal(2) == "2nd" and ordinal(3) == "3rd" and ordinal(11) == "11th"
    assert ordinal(22) == "22nd" and ordinal(113) == "113th"


# -- against the stand-in: the test plays Kueue and Trainer ------------------------------------------

KUEUE = "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml-dev/workloads/trainjob-ddp-ckpt-3f2a9"
TIMEOUT_ML = "Exceeded the PodsReady timeout ml-dev/trainjob-ddp-ckpt-3f2a9"


def _queued(api: StandIn, tmp_path: Path, reason: str = "WaitingForQuota") -> None:
    api.add_cluster_runtime("trainspec-torch")
    assert cli("submit", write_job(tmp_path), "--no-project")[0] == 0
    controller_patch(api.url, TJ, {"conditions": [SUSPENDED]})
    api.add_workload(
        api.trainjobs[("ml-dev", "ddp-ckpt")],
        queue="ml-dev",
        conditions=[cond("QuotaReserved", "False", reason, QUOTA)],
    )


def _steps(api: StandIn, steps: list) -> None:
    """Each watch request, the next controller step (the steps PATCH the API like controllers)."""
    import threading

    def step(_: StandIn) -> None:
        if steps:
            t = threading.Thread(target=steps.pop(0))
            api.lock.release()
            try:
                t.start()
                t.join(30)
            finally:
                api.lock.acquire()

    api.on_watch = step


EVICTION = {
    "conditions": [
        cond("QuotaReserved", "False", "Pending", TIMEOUT_ML),
        cond("Evicted", "True", "PodsReadyTimeout", TIMEOUT_ML),
        cond("Requeued", "False", "PodsReadyTimeout", TIMEOUT_ML),
    ],
    "requeueState": {"count": 1, "requeueAt": "2026-01-01T00:01:00Z"},
    "schedulingStats": {"evictions": [{"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 1}]},
}


def _lifecycle(api: StandIn) -> list:
    return [
        lambda: controller_patch(api.url, KUEUE, {"conditions": list(ADMITTED)}),
        lambda: controller_patch(
            api.url, TJ, {"conditions": [RESUMED], "jobsStatus": [{"name": "node", "active": 2, "ready": 0}]}
        ),
        lambda: (
            controller_patch(api.url, KUEUE, EVICTION),
            controller_patch(api.url, TJ, {"conditions": [SUSPENDED], "jobsStatus": []}),
        ),
        lambda: controller_patch(
            api.url,
            KUEUE,
            {
                "conditions": [
                    *ADMITTED,
                    cond("Evicted", "False", "QuotaReserved", "Previously: " + TIMEOUT_ML),
                    cond("Requeued", "True", "BackoffFinished", "The workload backoff was finished"),
                ],
                "requeueState": None,
            },
        ),
        lambda: controller_patch(
            api.url,
            TJ,
            {"conditions": [RESUMED, cond("Complete", "True", "JobsCompleted", "done")], "jobsStatus": []},
        ),
    ]


@needs_kube
def test_status_shows_kueues_reason_and_message(api: StandIn, tmp_path: Path) -> None:
    _queued(api, tmp_path)
    code, out, err = cli("status", "ddp-ckpt", "-n", "ml-dev")
    assert code == 0, err
    assert out.splitlines()[:3] == [
        "TrainJob ml-dev/ddp-ckpt: Queued",
        f"  kueue: workload trainjob-ddp-ckpt-3f2a9 in queue ml-dev: Pending (WaitingForQuota: {QUOTA})",
        (
            "  waiting: WaitingForQuota; the ClusterQueue's unused quota is too small now: the job starts when running "
            "workloads finish or are preempted"
        ),
    ]
    code, out, _ = cli("status", "ddp-ckpt", "-n", "ml-dev", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["phase"] == "Queued" and data["queue"]["waiting"]["cause"] == "WaitingForQuota"
    assert data["queue"]["waiting"]["message"] == QUOTA


@needs_kube
def test_watch_prints_transitions_including_an_eviction_and_its_requeue(api: StandIn, tmp_path: Path) -> None:
    _queued(api, tmp_path)
    _steps(api, _lifecycle(api))
    code, out, err = cli("status", "ddp-ckpt", "-n", "ml-dev", "--watch", "--interval", "1")
    assert code == 0, err
    heads = [line for line in out.splitlines() if not line.startswith("  ")]
    assert heads == [
        "TrainJob ml-dev/ddp-ckpt: Queued",
        "ml-dev/ddp-ckpt: Queued (WaitingForQuota) -> Admitted",
        "ml-dev/ddp-ckpt: Admitted -> Running",
        (
            f"ml-dev/ddp-ckpt: Running -> Evicted (PodsReadyTimeout): {TIMEOUT_ML}; requeued at 2026-01-01T00:01:00Z "
            "(1st time)"
        ),
        "ml-dev/ddp-ckpt: Evicted (PodsReadyTimeout) -> Admitted",
        "ml-dev/ddp-ckpt: Admitted -> Complete (JobsCompleted)",
    ]
    assert "  evictions: PodsReadyTimeout (WaitForStart) x1" in out.splitlines()


@needs_kube
def test_watch_json_is_one_object_per_change_with_the_new_fields(api: StandIn, tmp_path: Path) -> None:
    _queued(api, tmp_path)
    _steps(api, _lifecycle(api))
    code, out, err = cli("status", "ddp-ckpt", "-n", "ml-dev", "--watch", "--interval", "1", "--format", "json")
    assert code == 0, err
    changes = [json.loads(line) for line in out.splitlines()]
    assert [c["phase"] for c in changes] == ["Queued", "Admitted", "Running", "Evicted", "Admitted", "Complete"]
    evicted = changes[3]["queue"]
    assert evicted["state"] == "Evicted" and evicted["reason"] == "PodsReadyTimeout"
    assert evicted["requeue"]["count"] == 1 and evicted["requeue"]["at"] == "2026-01-01T00:01:00Z"
    assert changes[0]["queue"]["waiting"]["cause"] == "WaitingForQuota"
