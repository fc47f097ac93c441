"""The launcher runs every engine's job, not only TrainJobs: a KubeRay RayJob and a Training
Operator PyTorchJob applied, watched, logged, failed and deleted against the API stand-in (which
validates the applied objects against the CRDs trainspec ships), and ``trainspec kfp`` of them.

What is kind-specific (plural, state, log pod, name limit) is the dialect's ``launch_facts``;
these tests drive the launcher through the same real HTTP client as the TrainJob tests.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the kfp extra is not installed: pip install 'trainspec[kfp]'")

from kfp_testing import EXAMPLES, NAMESPACE, ROOT, RUN_ID
from kube_standin import NOW, StandIn

from trainspec.kfp.job_pipeline import compile_trainjob
from trainspec.kfp.launcher import TrainJobFailed, TrainJobTimeout, main, run_launcher

RAY_JOB = compile_trainjob(EXAMPLES / "ray-train", project=None)
TORCH_JOB = compile_trainjob(EXAMPLES / "elastic-pytorchjob.yaml", project=None)
RAY_NAME = f"ray-finetune-{RUN_ID[:8]}"
TORCH_NAME = f"llama-elastic-{RUN_ID[:8]}"
FAST = {"poll_seconds": 0.01, "backoff_seconds": 0.01}

RAY_RUNNING = {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}
RAY_SUCCEEDED = {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"}
RAY_FAILED = {
    "jobDeploymentStatus": "Failed",
    "jobStatus": "FAILED",
    "reason": "AppFailed",
    "message": "the Ray job failed: exit code 1",
}
TORCH_SUCCEEDED = {
    "conditions": [
        {"type": "Created", "status": "True", "reason": "PyTorchJobCreated"},
        {"type": "Running", "status": "False", "reason": "PyTorchJobRunning"},
        {"type": "Succeeded", "status": "True", "reason": "PyTorchJobSucceeded", "message": "succeeded"},
    ]
}


def _run(job: str, **kwargs: object):
    out = io.StringIO()
    try:
        return run_launcher(job, run_id=RUN_ID, out=out, **{**FAST, **kwargs}), out.getvalue()
    except BaseException as exc:
        exc.output = out.getvalue()  # type: ignore[attr-defined]
        raise


def _pod(standin: StandIn, name: str, labels: dict[str, str], container: str, lines: list[str]) -> None:
    """A started pod with these labels whose ``container`` logged ``lines`` (the controller's pod)."""
    standin.pods[(NAMESPACE, name)] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
            "creationTimestamp": NOW,
            "labels": labels,
        },
        "spec": {"containers": [{"name": container}]},
        "status": {"phase": "Succeeded"},
    }
    standin.logs[(NAMESPACE, name)] = [f"2026-01-01T00:00:0{i}Z {line}" for i, line in enumerate(lines)]


def test_a_rayjob_is_applied_watched_and_its_driver_log_followed(kube_env: StandIn) -> None:
    kube_env.status_script = [RAY_RUNNING, RAY_SUCCEEDED]
    _pod(
        kube_env,
        f"{RAY_NAME}-x7k2p",
        {"batch.kubernetes.io/job-name": RAY_NAME},
        "ray-job-submitter",
        ["epoch 1 loss 0.5"],
    )
    # Another run's submitter of the same trainspec job: not this run's log.
    _pod(
        kube_env,
        "ray-finetune-other-q",
        {"batch.kubernetes.io/job-name": "ray-finetune-other"},
        "ray-job-submitter",
        ["no"],
    )
    result, out = _run(RAY_JOB.manifest)
    assert (result.name, result.phase) == (RAY_NAME, "Complete")
    (apply,) = kube_env.sent("PATCH")
    assert apply.path == f"/apis/ray.io/v1/namespaces/{NAMESPACE}/rayjobs/{RAY_NAME}"
    assert apply.query["fieldValidation"] == "Strict" and apply.query["fieldManager"] == "trainspec"
    assert apply.body["metadata"]["labels"]["trainspec.dev/kfp-run-id"] == RUN_ID
    assert apply.body["metadata"]["ownerReferences"][0]["uid"] == "launcher-uid-1"
    assert not kube_env.sent("GET", "trainingruntimes")  # a RayJob carries its runtime: nothing to check
    assert (NAMESPACE, RAY_NAME) in kube_env.objects["rayjobs"]  # the stand-in accepted it (CRD schema)
    assert "driver | epoch 1 loss 0.5" in out and "driver | no" not in out
    assert f"RayJob {NAMESPACE}/{RAY_NAME} completed" in out
    assert not kube_env.sent("DELETE")


def test_a_failed_rayjob_fails_the_step_with_its_reason(
    kube_env: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kube_env.status_script = [RAY_RUNNING, RAY_FAILED]
    manifest, status = tmp_path / "job.json", tmp_path / "status.json"
    manifest.write_text(RAY_JOB.manifest, encoding="utf-8")
    code = main(["--trainjob", str(manifest), "--run-id", RUN_ID, "--poll-seconds", "0.01", "--status", str(status)])
    assert code == 1
    err = capsys.readouterr().err
    assert f"RayJob {NAMESPACE}/{RAY_NAME} failed: AppFailed: the Ray job failed: exit code 1" in err
    written = json.loads(status.read_text(encoding="utf-8"))
    assert (written["phase"], written["reason"]) == ("Failed", "AppFailed")
    assert not kube_env.sent("DELETE")  # a failed job is kept for its logs


def test_a_ray_job_that_failed_under_a_complete_deployment_is_a_failure(kube_env: StandIn) -> None:
    kube_env.status_script = [{"jobDeploymentStatus": "Complete", "jobStatus": "STOPPED"}]
    with pytest.raises(TrainJobFailed, match="jobStatus STOPPED"):
        _run(RAY_JOB.manifest, follow_logs=False)


def test_a_pytorchjob_succeeds_and_its_worker_0_log_is_followed(kube_env: StandIn) -> None:
    kube_env.status_script = [{"conditions": [{"type": "Running", "status": "True"}]}, TORCH_SUCCEEDED]
    labels = {
        "training.kubeflow.org/job-name": TORCH_NAME,
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "0",
    }
    _pod(kube_env, f"{TORCH_NAME}-worker-0", labels, "pytorch", ["rank 0 step 10"])
    _pod(
        kube_env,
        f"{TORCH_NAME}-worker-1",
        {**labels, "training.kubeflow.org/replica-index": "1"},
        "pytorch",
        ["rank 1"],
    )
    result, out = _run(TORCH_JOB.manifest)
    assert (result.name, result.phase, result.reason) == (TORCH_NAME, "Complete", "PyTorchJobSucceeded")
    (apply,) = kube_env.sent("PATCH")
    assert apply.path == f"/apis/kubeflow.org/v1/namespaces/{NAMESPACE}/pytorchjobs/{TORCH_NAME}"
    assert "worker-0 | rank 0 step 10" in out and "rank 1" not in out


def test_a_timeout_deletes_the_rayjob(kube_env: StandIn) -> None:
    kube_env.status_script = [RAY_RUNNING]
    with pytest.raises(TrainJobTimeout) as caught:
        _run(RAY_JOB.manifest, timeout_seconds=0.3, follow_logs=False)
    assert caught.value.result.phase == "Timeout"
    (delete,) = kube_env.sent("DELETE")
    assert delete.path == f"/apis/ray.io/v1/namespaces/{NAMESPACE}/rayjobs/{RAY_NAME}"
    assert delete.body["propagationPolicy"] == "Foreground"
    assert (NAMESPACE, RAY_NAME) not in kube_env.objects["rayjobs"]


def test_a_taskconfig_for_another_engine_is_refused_before_anything_is_applied(kube_env: StandIn) -> None:
    from trainspec.kfp.launch_result import LauncherError

    with pytest.raises(LauncherError, match="TrainJobs only"):
        _run(RAY_JOB.manifest, task_config={"resources": {"limits": {"nvidia.com/gpu": "1"}}})
    assert not kube_env.sent("PATCH")


@pytest.mark.parametrize(("spec", "kind"), [("ray-train", "RayJob"), ("elastic-pytorchjob.yaml", "PyTorchJob")])
def test_trainspec_kfp_compiles_other_engines_jobs(
    spec: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    from trainspec.cli.main import main as cli

    monkeypatch.chdir(ROOT)
    out = tmp_path / "pipeline.yaml"
    code = cli(["kfp", f"examples/{spec}", "--no-project", "--image", "registry.example.com/l:1", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    assert f"(per-run PVC, {kind} " in capsys.readouterr().err
    ir = next(yaml.safe_load_all(out.read_text(encoding="utf-8")))
    constants = json.dumps(ir["root"])
    assert f'\\"kind\\":\\"{kind}\\"' in constants  # the launcher's input is the compiled job object
    assert "createpvc" in json.dumps(ir["root"]["dag"]["tasks"]).lower()


def test_rbac_grants_the_launcher_every_job_kind() -> None:
    from trainspec.kfp.rbac import rbac_objects

    role = rbac_objects()[0]
    granted = {(g, r): rule.verbs for rule in role.rules for g in rule.api_groups for r in rule.resources}
    for group, plural in (
        ("trainer.kubeflow.org", "trainjobs"),
        ("ray.io", "rayjobs"),
        ("kubeflow.org", "pytorchjobs"),
        ("kubeflow.org", "mpijobs"),
    ):
        assert {"get", "create", "patch", "delete"} <= set(granted[(group, plural)]), (group, plural)


MPI_JOB = compile_trainjob(EXAMPLES / "mpijob.yaml", project=None)
MPI_NAME = f"bert-zero3-mpi-{RUN_ID[:8]}"
MPI_SUCCEEDED = {
    "conditions": [
        {"type": "Created", "status": "True", "reason": "MPIJobCreated"},
        {"type": "Running", "status": "False", "reason": "MPIJobRunning"},
        {"type": "Succeeded", "status": "True", "reason": "MPIJobSucceeded", "message": "MPIJob succeeded"},
    ]
}
MPI_FAILED = {
    "conditions": [
        {"type": "Created", "status": "True", "reason": "MPIJobCreated"},
        {"type": "Running", "status": "False", "reason": "MPIJobRunning"},
        {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "launcher exited 137"},
    ]
}
JAX_SPEC = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata:
  name: jax-cpu
spec:
  engine: training-operator
  framework: jax
  image: registry.example.com/ml/jax:0.4
  resourcesPerNode: {cpu: 4, memory: 16Gi}
---
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata:
  name: jax-pretrain
  namespace: ml
spec:
  runtime: jax-cpu
  command: [python, -m, train]
  nodes: 2
"""
JAX_NAME = f"jax-pretrain-{RUN_ID[:8]}"


def _operator_labels(job: str, replica: str, index: str | None) -> dict[str, str]:
    labels = {"training.kubeflow.org/job-name": job, "training.kubeflow.org/replica-type": replica}
    if index is not None:
        labels["training.kubeflow.org/replica-index"] = index
    return labels


def test_a_jaxjob_succeeds_and_its_worker_0_log_is_followed(kube_env: StandIn, tmp_path: Path) -> None:
    spec = tmp_path / "jax.yaml"
    spec.write_text(JAX_SPEC, encoding="utf-8")
    job = compile_trainjob(spec, project=None)
    assert job.kind == "JAXJob"
    kube_env.status_script = [
        {"conditions": [{"type": "Running", "status": "True", "reason": "JAXJobRunning"}]},
        {"conditions": [{"type": "Succeeded", "status": "True", "reason": "JAXJobSucceeded", "message": "done"}]},
    ]
    _pod(kube_env, f"{JAX_NAME}-worker-0", _operator_labels(JAX_NAME, "worker", "0"), "jax", ["process 0 step 7"])
    _pod(kube_env, f"{JAX_NAME}-worker-1", _operator_labels(JAX_NAME, "worker", "1"), "jax", ["process 1 step 7"])
    result, out = _run(job.manifest)
    assert (result.name, result.phase, result.reason) == (JAX_NAME, "Complete", "JAXJobSucceeded")
    (apply,) = kube_env.sent("PATCH")
    assert apply.path == f"/apis/kubeflow.org/v1/namespaces/{NAMESPACE}/jaxjobs/{JAX_NAME}"
    assert apply.body["metadata"]["labels"]["trainspec.dev/kfp-run-id"] == RUN_ID
    assert apply.body["spec"]["jaxReplicaSpecs"]["Worker"]["replicas"] == 2
    assert (NAMESPACE, JAX_NAME) in kube_env.objects["jaxjobs"]  # the stand-in accepted it (CRD schema)
    assert "worker-0 | process 0 step 7" in out and "process 1" not in out
    assert not kube_env.sent("DELETE")


def test_an_mpijob_succeeds_and_its_launcher_log_is_followed(kube_env: StandIn) -> None:
    kube_env.status_script = [{"conditions": [{"type": "Running", "status": "True"}]}, MPI_SUCCEEDED]
    _pod(kube_env, f"{MPI_NAME}-launcher", _operator_labels(MPI_NAME, "launcher", None), "launcher", ["ds loss 0.25"])
    _pod(kube_env, f"{MPI_NAME}-worker-0", _operator_labels(MPI_NAME, "worker", "0"), "mpi-worker", ["sshd up"])
    result, out = _run(MPI_JOB.manifest)
    assert (result.name, result.phase, result.reason) == (MPI_NAME, "Complete", "MPIJobSucceeded")
    (apply,) = kube_env.sent("PATCH")
    assert apply.path == f"/apis/kubeflow.org/v2beta1/namespaces/{NAMESPACE}/mpijobs/{MPI_NAME}"
    assert apply.query["fieldValidation"] == "Strict"
    assert apply.body["metadata"]["ownerReferences"][0]["uid"] == "launcher-uid-1"
    assert (NAMESPACE, MPI_NAME) in kube_env.objects["mpijobs"]
    assert "launcher | ds loss 0.25" in out and "sshd up" not in out
    assert not kube_env.sent("DELETE")


def test_a_failed_mpijob_fails_the_step_with_its_reason(
    kube_env: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kube_env.status_script = [{"conditions": [{"type": "Running", "status": "True"}]}, MPI_FAILED]
    manifest, status = tmp_path / "job.json", tmp_path / "status.json"
    manifest.write_text(MPI_JOB.manifest, encoding="utf-8")
    code = main(["--trainjob", str(manifest), "--run-id", RUN_ID, "--poll-seconds", "0.01", "--status", str(status)])
    assert code == 1
    err = capsys.readouterr().err
    assert f"MPIJob {NAMESPACE}/{MPI_NAME} failed: BackoffLimitExceeded: launcher exited 137" in err
    written = json.loads(status.read_text(encoding="utf-8"))
    assert (written["phase"], written["reason"]) == ("Failed", "BackoffLimitExceeded")
    assert not kube_env.sent("DELETE")  # a failed job is kept for its logs
