"""status, list, logs and cancel against the stand-in; the test plays Trainer's and Kueue's controllers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

from helpers import PVC, TJ, cli, controller_patch, write_job
from kube_standin import StandIn

from trainspec.kube.state import view

SUSPENDED = {"conditions": [{"type": "Suspended", "status": "True", "reason": "Suspended", "message": "by Kueue"}]}
RESUMED = {
    "type": "Suspended",
    "status": "False",
    "reason": "Resumed",
    "message": "resumed",
    "lastTransitionTime": "2026-01-01T00:00:00Z",
}
PENDING = [
    {
        "type": "QuotaReserved",
        "status": "False",
        "reason": "Pending",
        "message": "couldn't assign flavors to pod set node: insufficient unused quota for cpu in flavor "
        "default, 4 more needed",
    }
]
ADMITTED = [
    {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved"},
    {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted"},
]


def _submitted(api: StandIn, tmp_path: Path) -> dict:
    api.add_cluster_runtime("trainspec-torch")
    assert cli("submit", write_job(tmp_path), "--no-project")[0] == 0
    return api.trainjobs[("ml-dev", "ddp-ckpt")]


def test_phase_comes_from_condition_status_not_the_last_conditions_type() -> None:
    job = {
        "metadata": {"name": "j", "namespace": "n"},
        "status": {"conditions": [RESUMED], "jobsStatus": [{"name": "node", "active": 2, "ready": 2}]},
    }
    assert view(job).phase == "Running"  # the last condition's type says "Suspended"
    job["status"]["conditions"].append({"type": "Complete", "status": "True", "reason": "JobsCompleted"})
    assert view(job).phase == "Complete"


def _play_controller(api: StandIn, steps: list) -> None:
    """On each watch request, the test plays the controller's next step."""

    def step(_: StandIn) -> None:
        if steps:
            # The controller's own HTTP calls go through the stand-in's lock on other threads: run them there.
            import threading

            t = threading.Thread(target=steps.pop(0))
            api.lock.release()
            try:
                t.start()
                t.join(30)
            finally:
                api.lock.acquire()

    api.on_watch = step


def test_status_follows_suspended_queued_admitted_running_complete(api: StandIn, tmp_path: Path) -> None:
    job = _submitted(api, tmp_path)
    controller_patch(api.url, TJ, SUSPENDED)
    workload = api.add_workload(job, queue="ml-dev", conditions=PENDING)
    code, out, _ = cli("status", "ddp-ckpt", "-n", "ml-dev")
    assert code == 0
    assert out.splitlines()[:2] == [
        "TrainJob ml-dev/ddp-ckpt: Queued",
        (
            "  kueue: workload trainjob-ddp-ckpt-3f2a9 in queue ml-dev: Pending (Pending: couldn't assign flavors to pod "
            "set node: insufficient unused quota for cpu in flavor default, 4 more needed)"
        ),
    ]
    assert "deadline 30m of running" in out
    steps = [
        lambda: workload["status"].update(conditions=ADMITTED),
        lambda: controller_patch(
            api.url, TJ, {"conditions": [RESUMED], "jobsStatus": [{"name": "node", "active": 2, "ready": 2}]}
        ),
        lambda: (
            api.add_pod("ml-dev", "ddp-ckpt-node-0-0-a", "ddp-ckpt", phase="Running", ready=True),
            api.add_pod("ml-dev", "ddp-ckpt-node-0-1-b", "ddp-ckpt", phase="Running", ready=True, index=1, restarts=1),
            controller_patch(
                api.url,
                TJ,
                {
                    "trainerStatus": {
                        "progressPercentage": 40,
                        "estimatedRemainingSeconds": 600,
                        "lastUpdatedTime": "x",
                        "metrics": [{"name": "loss", "value": "0.42"}],
                    }
                },
            ),
        ),
        lambda: controller_patch(
            api.url,
            TJ,
            {
                "conditions": [
                    RESUMED,
                    {"type": "Complete", "status": "True", "reason": "JobsCompleted", "message": "done"},
                ]
            },
        ),
    ]

    _play_controller(api, steps)
    code, out, err = cli("status", "ddp-ckpt", "-n", "ml-dev", "--watch", "--interval", "1")
    assert code == 0, err
    assert "waiting for admission" not in err and "\r" not in err  # not a terminal: no progress line
    # The whole status once, then a line per transition (pods and progress as they change).
    assert [line for line in out.splitlines() if not line.startswith("  ")] == [
        "TrainJob ml-dev/ddp-ckpt: Queued",
        "ml-dev/ddp-ckpt: Queued (WaitingForQuota) -> Admitted",
        "ml-dev/ddp-ckpt: Admitted -> Running",
        "ml-dev/ddp-ckpt: Running -> Complete (JobsCompleted)",
    ]
    assert "  node: 2 pods: 2 ready, 2 running, 0 pending, 0 succeeded, 0 failed; 1 restarts" in out
    assert "  progress: 40%, about 10m left, loss=0.42" in out
    # (submit lists the job's earlier runs by label: those GETs are not watches)
    watches = [w for w in api.sent("GET", "/trainjobs$") if "labelSelector" not in w.query]
    assert watches and all(
        w.query["watch"] == "true" and w.query["fieldSelector"] == "metadata.name=ddp-ckpt" for w in watches
    )
    status_patches = api.sent("PATCH", "/status$")
    assert status_patches and all(p.headers["Content-Type"] == "application/merge-patch+json" for p in status_patches)


def test_watch_shows_a_spinner_while_queued_on_a_terminal(
    api: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAINSPEC_PROGRESS", "1")  # what a terminal gets
    job = _submitted(api, tmp_path)
    controller_patch(api.url, TJ, SUSPENDED)
    workload = api.add_workload(job, queue="ml-dev", conditions=PENDING)
    steps = [
        lambda: workload["status"].update(conditions=ADMITTED),
        lambda: controller_patch(
            api.url,
            TJ,
            {
                "conditions": [
                    RESUMED,
                    {"type": "Complete", "status": "True", "reason": "JobsCompleted", "message": "done"},
                ]
            },
        ),
    ]

    _play_controller(api, steps)
    code, out, err = cli("status", "ddp-ckpt", "-n", "ml-dev", "--watch", "--interval", "1")
    assert code == 0, err
    assert "waiting for admission" in err and "Pending" in err  # the spinner names Kueue's reason
    assert "\r" not in out  # status lines stay clean on stdout


def test_status_json_evicted_and_the_newest_pod_per_index(api: StandIn, tmp_path: Path) -> None:
    job = _submitted(api, tmp_path)
    controller_patch(api.url, TJ, SUSPENDED)
    api.add_workload(
        job,
        queue="ml-dev",
        conditions=[
            {
                "type": "Evicted",
                "status": "True",
                "reason": "Preempted",
                "message": "Preempted to accommodate a workload (UID: 1) due to prioritization in the ClusterQueue",
            }
        ],
    )
    api.add_pod("ml-dev", "old-0", "ddp-ckpt", phase="Failed", created="2026-01-01T00:00:00Z")
    api.add_pod("ml-dev", "new-0", "ddp-ckpt", phase="Pending", created="2026-01-01T00:05:00Z")
    code, out, _ = cli("status", "ddp-ckpt", "-n", "ml-dev", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["phase"] == "Evicted" and data["reason"] == "Preempted"
    assert data["groups"] == [
        {
            "name": "node",
            "pods": 1,
            "ready": 0,
            "running": 0,
            "pending": 1,
            "succeeded": 0,
            "failed": 0,
            "restarts": 0,
            "newest": {"0": "new-0"},
            "nodes": {},  # not scheduled: no spec.nodeName (-o wide shows it)
        }
    ]
    code, out, _ = cli("list", "-n", "ml-dev")
    assert code == 0 and out.splitlines()[1].split()[:4] == ["ml-dev", "ddp-ckpt", "Evicted", "0/1"]


def test_unknown_job_is_ts716(api: StandIn) -> None:
    code, _, err = cli("status", "nope", "-n", "ml-dev")
    assert code == 1 and "error[TS716]" in err and "cluster:" in err


def test_logs_prefix_node_and_rank_and_follow_the_replacement_pod(api: StandIn, tmp_path: Path) -> None:
    _submitted(api, tmp_path)
    api.add_pod(
        "ml-dev",
        "p0-old",
        "ddp-ckpt",
        phase="Failed",
        created="2026-01-01T00:00:00Z",
        lines=["2026-01-01T00:00:01.5Z old attempt"],
    )
    api.add_pod(
        "ml-dev",
        "p0-new",
        "ddp-ckpt",
        phase="Succeeded",
        created="2026-01-01T00:05:00Z",
        lines=[
            "2026-01-01T00:05:01.000000001Z [default1]:step 1 loss 2.0",
            "2026-01-01T00:05:01.000000001Z [default0]:step 1 loss 2.1",
            "2026-01-01T00:05:02Z plain",
        ],
    )
    api.add_pod("ml-dev", "p1", "ddp-ckpt", phase="Succeeded", index=1, lines=["2026-01-01T00:05:03Z [default0]:hi"])
    code, out, err = cli("logs", "ddp-ckpt", "-n", "ml-dev", "--all")
    assert code == 0, err
    # Two lines of one timestamp are both printed (dedup is for reconnects only).
    assert out.splitlines() == [
        "node-0 rank-1 | step 1 loss 2.0",
        "node-0 rank-0 | step 1 loss 2.1",
        "node-0 ranks-0..1 | plain",
        "node-1 rank-2 | hi",
    ]
    logs = api.sent("GET", "/log$")
    assert [r.path.split("/")[-2] for r in logs] == ["p0-new", "p1"]  # the newest pod per index only
    assert all(r.query["container"] == "node" and r.query["timestamps"] == "True" for r in logs)
    code, out, _ = cli("logs", "ddp-ckpt", "-n", "ml-dev", "--node", "1")
    assert out.splitlines() == ["node-1 rank-2 | hi"]


def test_logs_follow_survives_a_container_restart(api: StandIn, tmp_path: Path) -> None:
    _submitted(api, tmp_path)
    controller_patch(api.url, TJ, {"conditions": [RESUMED]})
    api.add_pod(
        "ml-dev",
        "p0",
        "ddp-ckpt",
        phase="Running",
        lines=["2026-01-01T00:00:01Z first", "2026-01-01T00:00:01Z same stamp"],
    )
    served = {"n": 0}
    original = api._route

    def route(method, path, query, headers, body):  # the stream ends (container restart), then more lines
        answer = original(method, path, query, headers, body)
        if path.endswith("/log"):
            served["n"] += 1
            if served["n"] == 1:
                api.logs[("ml-dev", "p0")] = [
                    "2026-01-01T00:00:01Z first",
                    "2026-01-01T00:00:01Z same stamp",
                    "2026-01-01T00:01:00Z after restart",
                ]
            if served["n"] == 2:
                api.pods[("ml-dev", "p0")]["status"]["phase"] = "Succeeded"
                api.trainjobs[("ml-dev", "ddp-ckpt")]["status"]["conditions"].append(
                    {"type": "Complete", "status": "True", "reason": "JobsCompleted"}
                )
        return answer

    api._route = route  # type: ignore[method-assign]
    code, out, err = cli("logs", "ddp-ckpt", "-n", "ml-dev", "--follow", "--poll-seconds", "0.01")
    assert code == 0, err
    assert out.splitlines() == [
        "node-0 ranks-0..1 | first",
        "node-0 ranks-0..1 | same stamp",
        "node-0 ranks-0..1 | after restart",
    ]  # the reconnect printed nothing twice
    assert (
        api.sent("GET", "/log$")[0].query["follow"] == "True"
    )  # the client spells booleans so; the server parses either


def test_cancel_deletes_in_the_foreground_and_keeps_the_checkpoint_pvc(api: StandIn, tmp_path: Path) -> None:
    job = _submitted(api, tmp_path)
    api.add_pod("ml-dev", "p0", "ddp-ckpt", phase="Running")
    api.add_workload(job, queue="ml-dev", conditions=ADMITTED)
    api.gc_immediately = False
    code, out, err = cli("cancel", "ddp-ckpt", "-n", "ml-dev", "--poll-seconds", "0")
    assert code == 0, err
    (delete,) = api.sent("DELETE")
    assert delete.path == TJ and delete.body == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "propagationPolicy": "Foreground",
    }
    assert out.splitlines() == [
        "trainjob.trainer.kubeflow.org/ml-dev/ddp-ckpt deleted (foreground: its JobSet and pods went first)",
        (
            "kept persistentvolumeclaim/ml-dev/ddp-ckpt-checkpoints (checkpoints): submitting the job again resumes "
            "from it; delete it with kubectl delete pvc ddp-ckpt-checkpoints -n ml-dev when it is no longer needed"
        ),
    ]
    assert not api.trainjobs and not api.pods and not api.workloads
    assert ("ml-dev", "ddp-ckpt-checkpoints") in api.claims
    assert api.sent("GET", PVC + "$")
