"""Run the real ``launch_trainjob`` component with kfp.local against the loopback API stand-in.

``SubprocessRunner(use_venv=False)`` runs the exact compiled command (the shipped function
source, the KFP executor) in this interpreter, so the real kubernetes client talks HTTP to the
stand-in (``TRAINSPEC_KUBE_API``, inherited by the subprocess). Outcomes never depend on timing:
statuses are scripted per request, intervals are tiny.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kfp", reason="the kfp extra is not installed: pip install 'trainspec[kfp]'")

from kfp import local
from kfp_testing import COMPLETE, EXAMPLES, FAILED, LAUNCHER_POD, NAMESPACE, RUN_ID, RUNNING
from kube_standin import StandIn

from trainspec.kfp import launcher_names as N, make_launcher
from trainspec.kfp.job_pipeline import compile_trainjob

JOB = compile_trainjob(EXAMPLES / "ddp-cpu.yaml")
NAME = f"ddp-cpu-{RUN_ID[:8]}"
TRAINJOB_PATH = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NAMESPACE}/trainjobs/{NAME}"
FAST = {"poll_seconds": 0.01, "backoff_seconds": 0.01}
#: The launcher: nothing is installed at start-up (the image "has" trainspec: locally, this venv).
PREINSTALLED = make_launcher("registry.example.com/platform/trainspec-launcher:0.1.0")
#: kfp.local warns that a non-Python image's task runs here in this interpreter: that is the point.
pytestmark = pytest.mark.filterwarnings("ignore:You may be attemping to run a task:RuntimeWarning")


@pytest.fixture
def kfp_local(tmp_path: Path) -> Path:
    root = tmp_path / "pipeline-root"
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(root), raise_on_error=True)
    return root


def _ready(api: StandIn, *statuses: dict, lines: list[str] | None = None) -> None:
    api.add_cluster_runtime("trainspec-torch")
    api.status_script = list(statuses)
    api.add_pod(
        NAMESPACE,
        f"{NAME}-node-0-0-abcde",
        NAME,
        phase="Succeeded",
        lines=lines
        if lines is not None
        else ["2026-01-01T00:00:01.5Z epoch 1 loss 0.9", "2026-01-01T00:00:02Z epoch 2 loss 0.4"],
    )


def _launch(component: Any = PREINSTALLED, **overrides: Any) -> Any:
    args = {"trainjob": JOB.manifest, "run_id": RUN_ID, **FAST, **overrides}
    return component(**args)


def _applies(api: StandIn, manager: str = N.FIELD_MANAGER) -> list:
    return [r for r in api.sent("PATCH", "/trainjobs/") if r.query.get("fieldManager") == manager]


def test_apply_running_complete(kube_env: StandIn, kfp_local: Path, capfd: pytest.CaptureFixture) -> None:
    _ready(kube_env, RUNNING, RUNNING, COMPLETE)
    task = _launch()
    assert task.outputs["name"] == NAME
    assert task.outputs["phase"] == "Complete"
    status = json.loads(Path(task.outputs["status"].path).read_text(encoding="utf-8"))
    assert status["phase"] == "Complete" and status["reason"] == "JobsCompleted" and status["name"] == NAME
    assert status["run_id"] == RUN_ID and status["attached"] is False
    assert task.outputs["status"].metadata["phase"] == "Complete"

    # Lookup first, then the runtime, the launcher pod (owner), then one server-side apply.
    first = [(r.method, r.path) for r in kube_env.requests[:3]]
    assert first == [
        ("GET", TRAINJOB_PATH),
        ("GET", "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/trainspec-torch"),
        ("GET", f"/api/v1/namespaces/{NAMESPACE}/pods/{LAUNCHER_POD}"),
    ]
    (apply,) = kube_env.sent("PATCH")
    assert apply.path == TRAINJOB_PATH
    assert apply.query == {"fieldManager": "trainspec", "force": "true", "fieldValidation": "Strict"}
    assert apply.headers["Content-Type"] == "application/apply-patch+yaml"
    body = apply.body
    assert body["metadata"]["name"] == NAME and body["metadata"]["namespace"] == NAMESPACE
    assert body["metadata"]["labels"]["trainspec.dev/kfp-run-id"] == RUN_ID
    assert body["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": LAUNCHER_POD, "uid": "launcher-uid-1"}
    ]
    assert body["spec"] == JOB.trainjob["spec"]  # no TaskConfig locally: the compiled spec as is
    assert type(body["spec"]["trainer"]["numNodes"]) is int
    assert not kube_env.sent("DELETE")

    logs = capfd.readouterr().out
    assert "node-0 | epoch 1 loss 0.9" in logs and "node-0 | epoch 2 loss 0.4" in logs
    pod_lists = kube_env.sent("GET", f"/namespaces/{NAMESPACE}/pods$")
    assert pod_lists and pod_lists[0].query["labelSelector"] == (
        f"jobset.sigs.k8s.io/jobset-name={NAME},jobset.sigs.k8s.io/replicatedjob-name=node,"
        "batch.kubernetes.io/job-completion-index=0"
    )
    assert kube_env.sent("GET", "/log$")[0].query["container"] == "node"


def test_failed_reports_reason_and_message(kube_env: StandIn, kfp_local: Path, capfd: pytest.CaptureFixture) -> None:
    _ready(kube_env, RUNNING, FAILED)
    with pytest.raises(RuntimeError):
        _launch()
    out = capfd.readouterr().out
    assert f"TrainJob {NAMESPACE}/{NAME} failed: DeadlineExceeded: ran past 1800s" in out
    assert not kube_env.sent("DELETE")  # a failed job stays for inspection (the owner ref cleans up)


def test_timeout_deletes_with_foreground(kube_env: StandIn, kfp_local: Path, capfd: pytest.CaptureFixture) -> None:
    _ready(kube_env, RUNNING)  # never finishes
    with pytest.raises(RuntimeError):
        _launch(timeout_seconds=1)
    (delete,) = kube_env.sent("DELETE")
    assert delete.path == TRAINJOB_PATH
    assert delete.body["propagationPolicy"] == "Foreground"
    assert "did not finish within 1s" in capfd.readouterr().out
    assert (NAMESPACE, NAME) not in kube_env.trainjobs


def test_transient_errors_are_retried(kube_env: StandIn, kfp_local: Path, capfd: pytest.CaptureFixture) -> None:
    _ready(kube_env, RUNNING, COMPLETE)
    kube_env.fail("PATCH", "/trainjobs/", 429, "reset", 500)  # PATCH is not retried inside urllib3
    task = _launch()
    assert task.outputs["phase"] == "Complete"
    applies = kube_env.sent("PATCH")
    assert len(applies) == 4 and all(r.body == applies[0].body for r in applies)
    out = capfd.readouterr().out
    assert "HTTP 429; retrying" in out and "HTTP 500; retrying" in out


def test_polls_resume_after_server_errors_and_resets(kube_env: StandIn, kfp_local: Path) -> None:
    _ready(kube_env, RUNNING, COMPLETE)
    kube_env.fail("GET", f"{TRAINJOB_PATH}$", 404)  # the lookup: not there yet
    kube_env.fail("GET", f"{TRAINJOB_PATH}$", 503, "reset", 502)
    task = _launch()
    assert task.outputs["phase"] == "Complete"
    assert len(kube_env.sent("PATCH")) == 1


def test_missing_runtime_fails_clearly_and_applies_nothing(
    kube_env: StandIn, kfp_local: Path, capfd: pytest.CaptureFixture
) -> None:
    kube_env.status_script = [COMPLETE]  # no runtime registered
    with pytest.raises(RuntimeError):
        _launch()
    out = capfd.readouterr().out
    assert "ClusterTrainingRuntime 'trainspec-torch' does not exist" in out
    assert "never creates runtimes" in out
    assert not kube_env.sent("PATCH") and not kube_env.sent("DELETE")


def test_retried_launcher_reattaches(
    kube_env: StandIn, kfp_local: Path, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ready(kube_env, RUNNING, COMPLETE)
    first = _launch()
    assert first.outputs["phase"] == "Complete"
    # The retry: same run id, a new launcher pod; the TrainJob is still there.
    kube_env.pods[(NAMESPACE, "launcher-pod-2")] = {
        "metadata": {
            "name": "launcher-pod-2",
            "uid": "launcher-uid-2",
            "labels": {"jobset.sigs.k8s.io/jobset-name": "-"},
        }
    }
    kube_env.status_script = [COMPLETE]
    monkeypatch.setenv("KFP_POD_NAME", "launcher-pod-2")
    second = _launch()
    assert second.outputs["name"] == first.outputs["name"] == NAME
    status = json.loads(Path(second.outputs["status"].path).read_text(encoding="utf-8"))
    assert status["attached"] is True
    assert len(_applies(kube_env)) == 1  # created once, never re-applied
    (owner,) = _applies(kube_env, N.OWNER_FIELD_MANAGER)  # only the new owner reference is added
    assert owner.query == {"fieldManager": N.OWNER_FIELD_MANAGER, "fieldValidation": "Strict"}
    assert owner.body["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "launcher-pod-2", "uid": "launcher-uid-2"}
    ]
    assert "spec" not in owner.body
    refs = kube_env.trainjobs[(NAMESPACE, NAME)]["metadata"]["ownerReferences"]
    assert {r["uid"] for r in refs} == {"launcher-uid-1", "launcher-uid-2"}
    assert "re-attaching" in capfd.readouterr().out
