"""The Argo CD health scripts, run in a real Lua 5.1 the way Argo CD runs them, on status samples.

The samples in ``samples/<kind>/`` are written as each controller writes its objects (kubectl's YAML:
quoted timestamps and condition statuses), from reading the controllers' code: Kubeflow Trainer
(pkg/controller/trainjob_controller.go, the JobSet plugin's status), KubeRay
(controllers/ray/rayjob_controller.go), the Training Operator (pkg/controller.v1/common/job.go, the
PyTorchJob and JAXJob controllers), mpi-operator (pkg/controller/mpi_job_controller.go), and Kueue
(which queues and admits a job through its suspend field and reads the queue-name label). The
shape of each sample is checked against the real CRD where ``../shared/crds`` is present.

A sample is judged by the script Argo CD would pick for it: the one ``argocd-cm`` holds under the
sample's own API group and kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from lupa import lua51

from tests.gitops.argo_lua import run_health
from trainspec.gitops.argocd import HEALTH_SCRIPTS, health_script

SAMPLES = Path(__file__).parent / "samples"
Q = "gpu-queue"


def _kubeflow(kind: str, failed: str, restarting: str | None) -> dict[str, tuple[str, str]]:
    """The expectations shared by the three Kubeflow kinds, in each kind's own words."""
    cases = {
        "no-status": ("Progressing", f"{kind} has no status yet"),
        "empty-status": ("Progressing", f"{kind} has no status yet"),
        "queued": ("Suspended", f"{kind} is suspended: waiting for Kueue admission in queue {Q}"),
        "suspended": ("Suspended", f"{kind} is suspended (spec.runPolicy.suspend is true)"),
        "admitted": ("Progressing", f"{kind} was admitted by Kueue from queue {Q}: waiting for its pods to run"),
        "running": ("Progressing", f"{kind} is running"),
        "running-without-kueue": ("Progressing", f"{kind} is running"),
        "succeeded": ("Healthy", f"{kind} succeeded"),
        "failed": ("Degraded", f"{kind} failed {failed}"),
    }
    if restarting is not None:
        cases["restarting"] = ("Progressing", f"{kind} is restarting: {restarting}")
    return cases


#: samples/<folder>/<name>.yaml -> (status, message) Argo CD shows.
EXPECTED: dict[str, dict[str, tuple[str, str]]] = {
    "trainjob": {
        "no-status": ("Progressing", "TrainJob has no status yet"),
        "empty-status": ("Progressing", "TrainJob has no status yet"),
        "queued": ("Suspended", f"TrainJob is suspended: waiting for Kueue admission in queue {Q}"),
        "suspended": ("Suspended", "TrainJob is suspended (spec.suspend is true)"),
        "admitted": ("Progressing", f"TrainJob was admitted by Kueue from queue {Q}: waiting for its pods to be ready"),
        "starting-without-kueue": ("Progressing", "TrainJob is starting: waiting for its pods to be ready"),
        "running": ("Progressing", "TrainJob is running"),
        "running-without-kueue": ("Progressing", "TrainJob is running"),
        "succeeded": ("Healthy", "TrainJob succeeded"),
        "failed": (
            "Degraded",
            (
                "TrainJob failed (FailedJobs): jobset failed due to one or more job failures "
                "(first failed job: llama-ft-node-0)"
            ),
        ),
        "deadline-exceeded": ("Degraded", "TrainJob failed (DeadlineExceeded): TrainJob exceeded its active deadline"),
    },
    "rayjob": {
        "no-status": ("Progressing", "RayJob has no status yet"),
        "empty-status": ("Progressing", "RayJob has no status yet"),
        "queued": ("Suspended", f"RayJob is suspended: waiting for Kueue admission in queue {Q}"),
        "suspended": ("Suspended", "RayJob is suspended (spec.suspend is true)"),
        "resuming": ("Progressing", f"RayJob was admitted by Kueue from queue {Q}: waiting for its RayCluster"),
        "admitted": ("Progressing", f"RayJob was admitted by Kueue from queue {Q}: waiting for its RayCluster"),
        "starting-without-kueue": ("Progressing", "RayJob is starting: waiting for the Ray job to run"),
        "waiting": ("Progressing", "RayJob is starting: waiting for a Ray job to be submitted (interactive mode)"),
        "running": ("Progressing", "RayJob is running"),
        "retrying": ("Progressing", "RayJob is restarting after a failed attempt"),
        "succeeded": ("Healthy", "RayJob succeeded"),
        "failed": ("Degraded", "RayJob failed (AppFailed): Job entrypoint command failed with exit code 1"),
        "deadline-exceeded": (
            "Degraded",
            (
                "RayJob failed (DeadlineExceeded): The RayJob has passed the activeDeadlineSeconds. "
                "StartTime: 2025-06-02 09:05:00 +0000 UTC. ActiveDeadlineSeconds: 3600"
            ),
        ),
        "stopped": ("Degraded", "RayJob was stopped before its Ray job finished"),
        "validation-failed": (
            "Degraded",
            (
                "RayJob failed (ValidationFailed): The RayJob spec is invalid: a RayJob with "
                "shutdownAfterJobFinishes set to false is not allowed to be suspended"
            ),
        ),
    },
    "pytorchjob": _kubeflow(
        "PyTorchJob",
        "(PyTorchJobFailed): PyTorchJob llama-ft is failed because 1 Worker replica(s) failed.",
        "PyTorchJob llama-ft is restarting because 1 Worker replica(s) failed.",
    ),
    "jaxjob": _kubeflow(
        "JAXJob",
        "(JAXJobFailed): JAXJob llama-ft is failed because 1 Worker replica(s) failed.",
        "JAXJob llama-ft is restarting because 1 Worker replica(s) failed.",
    ),
    # mpi-operator v2beta1 never writes Restarting: its launcher is a batch Job that retries by itself.
    "mpijob": {
        **_kubeflow("MPIJob", "(MPIJobEvicted): 1/2 workers are evicted", None),
        "failed-launcher": (
            "Degraded",
            "MPIJob failed (BackoffLimitExceeded/): Job has reached the specified backoff limit: ",
        ),
    },
}

CASES = [(folder, name) for folder, cases in EXPECTED.items() for name in cases]


def load(folder: str, name: str) -> dict[str, Any]:
    return yaml.safe_load((SAMPLES / folder / f"{name}.yaml").read_text(encoding="utf-8"))


def script_for(obj: dict[str, Any]) -> str:
    """The script Argo CD would run for ``obj``: chosen by the object's own API group and kind."""
    group = str(obj["apiVersion"]).rpartition("/")[0]
    return health_script(HEALTH_SCRIPTS[(group, obj["kind"])])


@pytest.mark.parametrize(("folder", "name"), CASES, ids=[f"{f}/{n}" for f, n in CASES])
def test_each_sample_gets_its_status_and_message(folder: str, name: str) -> None:
    obj = load(folder, name)
    assert run_health(script_for(obj), obj) == EXPECTED[folder][name]


def test_every_sample_has_an_expectation_and_every_kind_every_verdict() -> None:
    on_disk = {(p.parent.name, p.stem) for p in SAMPLES.glob("*/*.yaml")}
    assert on_disk == set(CASES)
    kinds = {load(folder, "no-status")["kind"] for folder in EXPECTED}
    assert kinds == {kind for _group, kind in HEALTH_SCRIPTS}
    for folder, cases in EXPECTED.items():
        assert {status for status, _ in cases.values()} == {"Healthy", "Progressing", "Suspended", "Degraded"}, folder
        # The nil-safety floor: no status at all, and an empty one.
        assert "status" not in load(folder, "no-status") and load(folder, "empty-status")["status"] == {}


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_a_finished_job_stays_finished_when_suspended_again(folder: str) -> None:
    """Terminal conditions are judged before the suspend field: Kueue may leave it either way."""
    for name in ("succeeded", "failed"):
        obj = load(folder, name)
        spec = obj["spec"].setdefault("runPolicy", {}) if obj["apiVersion"].startswith("kubeflow.org/") else obj["spec"]
        spec["suspend"] = True
        assert run_health(script_for(obj), obj) == EXPECTED[folder][name]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # KubeRay before 1.1 marked a job whose Ray job FAILED as Complete, with no reason.
        (
            {"jobStatus": "FAILED", "reason": None, "message": "Job failed due to an application error"},
            ("Degraded", "RayJob failed: Job failed due to an application error"),
        ),
        # New again after Retrying: the cluster and job fields are reset, the counters stay.
        ({"jobDeploymentStatus": None, "jobStatus": None, "endTime": None}, None),
        # A deployment status a later KubeRay may add is named, not judged.
        ({"jobDeploymentStatus": "Paused"}, ("Progressing", "RayJob is in deployment status Paused")),
    ],
    ids=["complete-but-failed", "new-after-retry", "unknown"],
)
def test_rayjob_states_without_a_sample(change: dict[str, Any], expected: tuple[str, str] | None) -> None:
    obj = load("rayjob", "succeeded")
    obj["status"].update(change)
    if expected is None:
        expected = ("Progressing", f"RayJob was admitted by Kueue from queue {Q}: waiting for its RayCluster")
    assert run_health(script_for(obj), obj) == expected


# -- nil-safety: any shape of object, right or wrong, gets a verdict and never a Lua error ----------

#: Field names the scripts read, so that generated objects reach deep into every branch.
NAMES = st.sampled_from(
    [
        "status", "spec", "metadata", "labels", "kueue.x-k8s.io/queue-name", "kind", "conditions", "type",
        "reason", "message", "suspend", "runPolicy", "jobsStatus", "ready", "jobDeploymentStatus", "jobStatus",
    ]
)  # fmt: skip
VALUES = st.sampled_from(
    [
        "True", "False", "Failed", "Complete", "Succeeded", "Running", "Restarting", "Suspended", "Created",
        "Initializing", "Retrying", "Waiting", "Suspending", "ValidationFailed", "RUNNING", "SUCCEEDED",
        "FAILED", "STOPPED", "PENDING", "", "TrainJob", "PyTorchJob",
    ]
)  # fmt: skip
SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False) | VALUES
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES | st.text(max_size=3), inner, max_size=5),
    max_leaves=25,
)
SCRIPTS = sorted(set(HEALTH_SCRIPTS.values()))


@pytest.mark.parametrize("script", SCRIPTS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=st.dictionaries(NAMES, JSON, max_size=6))
def test_no_object_makes_a_script_raise(script: str, obj: dict[str, Any]) -> None:
    status, message = run_health(health_script(script), obj)
    assert status in {"Healthy", "Progressing", "Degraded", "Suspended"} and message


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"status": "odd", "spec": "odd", "metadata": "odd"},
        {"spec": {"suspend": "true", "runPolicy": {"suspend": "true"}}},
        {"status": {"conditions": {"type": "Failed"}, "jobsStatus": "x"}},
        {
            "status": {
                "conditions": [None, "Failed", {"type": "Failed", "status": True}],
                "jobsStatus": [{"ready": "1"}],
            }
        },
        {"status": {"jobDeploymentStatus": 3, "jobStatus": ["FAILED"], "reason": {}, "message": 1}},
    ],
    ids=["empty", "wrong-types", "string-suspend", "map-conditions", "odd-items", "odd-ray"],
)
def test_odd_objects_are_progressing(script: str, obj: dict[str, Any]) -> None:
    """Values of the wrong type are treated as absent: nothing is suspended, failed or done by accident."""
    status, _message = run_health(health_script(script), obj)
    assert status == "Progressing"


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_queue_label_that_is_no_string_is_not_named(script: str) -> None:
    obj = {
        "metadata": {"labels": {"kueue.x-k8s.io/queue-name": 7}},
        "spec": {"suspend": True, "runPolicy": {"suspend": True}},
    }
    status, message = run_health(health_script(script), obj)
    assert status == "Suspended" and "Kueue" not in message and message.endswith("suspend is true)")


def test_the_sandbox_is_as_bare_as_argo_cds() -> None:
    """A script that used the string library would pass in a plain Lua and fail in Argo CD."""
    for script in ('return {status = string.format("%s", "Healthy")}', 'return {status = ("Healthy"):lower()}'):
        with pytest.raises(lua51.LuaError):
            run_health(script, {})
    assert run_health('return {status = "Fine"}', {}) == ("Unknown", "Lua returned an invalid health status")
    conditions = {"status": {"conditions": [{"type": "Healthy"}]}}  # lists are arrays from 1, as in Argo CD
    assert run_health("return {status = obj.status.conditions[1].type}", conditions) == ("Healthy", "")
