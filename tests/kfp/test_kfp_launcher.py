"""The launcher through its Python API and its process entry point, against the API stand-in.

Here the TaskConfig is a real ``dsl.TaskConfig`` (kfp.local always passes an empty one), and
SIGTERM goes to a real launcher process.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the kfp extra is not installed: pip install 'trainspec[kfp]'")

from kfp_testing import COMPLETE, EXAMPLES, NAMESPACE, ROOT, RUN_ID, RUNNING
from kube_standin import StandIn

from trainspec.kfp import kube as kube_module
from trainspec.kfp.job_pipeline import compile_trainjob
from trainspec.kfp.launcher import LauncherError, TrainJobTimeout, run_launcher

CPU_JOB = compile_trainjob(EXAMPLES / "kfp" / "cpu-job.yaml")
NAME = f"kfp-ddp-cpu-{RUN_ID[:8]}"
FAST = {"poll_seconds": 0.01, "backoff_seconds": 0.01}


def _run(**kwargs: object):
    out = io.StringIO()
    args = {"run_id": RUN_ID, "out": out, **FAST, **kwargs}
    try:
        return run_launcher(CPU_JOB.manifest, **args), out.getvalue()
    except BaseException as exc:
        exc.output = out.getvalue()  # type: ignore[attr-defined]
        raise


def test_task_config_and_checkpoint_claim_reach_the_applied_trainjob(kube_env: StandIn) -> None:
    from kfp import dsl

    kube_env.add_cluster_runtime("trainspec-torch")
    kube_env.status_script = [COMPLETE]
    config = dsl.TaskConfig(
        resources={"limits": {"nvidia.com/gpu": "1"}},
        env=[{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}],
        tolerations=[
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 600.0}
        ],
        node_selector={"gpu": "a100"},
        volumes=[{"name": "kfp-workspace", "persistentVolumeClaim": {"claimName": "run-1-workspace"}}],
        volume_mounts=[{"name": "kfp-workspace", "mountPath": "/kfp-workspace"}],
    )
    result, _ = _run(task_config=config, checkpoint_claim="0b1c-kfp-ddp-cpu-checkpoints", namespace="team-a")
    assert result.namespace == "team-a" and result.phase == "Complete"
    (apply,) = kube_env.sent("PATCH")
    assert apply.path.endswith(f"/namespaces/team-a/trainjobs/{NAME}")
    spec = apply.body["spec"]
    assert spec["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] == "1"
    assert spec["trainer"]["resourcesPerNode"]["requests"] == {"cpu": 2, "memory": "4Gi"}
    hf_token = {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}
    assert hf_token in spec["trainer"]["env"]
    patches = {
        p["manager"]: p["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0] for p in spec["runtimePatches"]
    }
    pod = patches["trainspec.dev/kfp"]["template"]["spec"]["template"]["spec"]
    assert patches["trainspec.dev/kfp"]["name"] == "node"
    assert type(pod["tolerations"][0]["tolerationSeconds"]) is int and pod["tolerations"][0]["tolerationSeconds"] == 600
    assert pod["nodeSelector"] == {"gpu": "a100"}
    assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "run-1-workspace"
    assert pod["containers"] == [
        {"name": "node", "volumeMounts": [{"name": "kfp-workspace", "mountPath": "/kfp-workspace"}]}
    ]
    compiler_pod = patches["trainspec.dev/compiler"]["template"]["spec"]["template"]["spec"]
    assert compiler_pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "0b1c-kfp-ddp-cpu-checkpoints"
    # The launcher pod lives in "ml", the TrainJob in "team-a": no (invalid) cross-namespace owner.
    assert "ownerReferences" not in apply.body["metadata"]


def test_a_trainjob_of_another_run_is_left_alone(kube_env: StandIn) -> None:
    kube_env.add_cluster_runtime("trainspec-torch")
    kube_env.trainjobs[(NAMESPACE, NAME)] = {
        "metadata": {"name": NAME, "labels": {"trainspec.dev/kfp-run-id": "someone-else"}},
        "status": RUNNING,
    }
    with pytest.raises(LauncherError, match="belongs to another run"):
        _run()
    assert not kube_env.sent("PATCH") and not kube_env.sent("DELETE")


def test_strict_validation_errors_are_reported_not_retried(kube_env: StandIn) -> None:
    kube_env.add_cluster_runtime("trainspec-torch")
    kube_env.fail("PATCH", "/trainjobs/", 400)
    with pytest.raises(LauncherError, match=r"rejected TrainJob .*injected fault"):
        _run()
    assert len(kube_env.sent("PATCH")) == 1


def test_forbidden_runtime_read_points_at_rbac(kube_env: StandIn) -> None:
    kube_env.fail("GET", "/clustertrainingruntimes/", 403)
    with pytest.raises(LauncherError, match="trainspec kfp --rbac"):
        _run()
    assert not kube_env.sent("PATCH")


def test_namespaced_runtime_is_looked_up_in_the_job_namespace(kube_env: StandIn) -> None:
    job = json.loads(CPU_JOB.manifest)
    job["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    kube_env.status_script = [COMPLETE]
    missing = f"TrainingRuntime 'trainspec-torch' does not exist in namespace {NAMESPACE}"
    with pytest.raises(LauncherError, match=missing):
        run_launcher(json.dumps(job), run_id=RUN_ID, out=io.StringIO(), **FAST)
    kube_env.runtimes[("TrainingRuntime", NAMESPACE, "trainspec-torch")] = {"metadata": {}}
    assert run_launcher(json.dumps(job), run_id=RUN_ID, out=io.StringIO(), **FAST).phase == "Complete"


def test_retries_that_would_outlive_the_timeout_end_in_a_timeout(kube_env: StandIn) -> None:
    kube_env.add_cluster_runtime("trainspec-torch")
    kube_env.status_script = [RUNNING]
    kube_env.fail("GET", f"/trainjobs/{NAME}$", 404, *([503] * 50))
    with pytest.raises(TrainJobTimeout) as caught:
        _run(timeout_seconds=0.5, backoff_seconds=0.2)
    assert caught.value.result.phase == "Timeout"
    (delete,) = kube_env.sent("DELETE")
    assert delete.body == {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Foreground"}


def test_kubeconfig_and_its_namespace(standin: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "test",
                "clusters": [{"name": "stand-in", "cluster": {"server": standin.url}}],
                "users": [{"name": "nobody", "user": {}}],
                "contexts": [
                    {"name": "test", "context": {"cluster": "stand-in", "user": "nobody", "namespace": "from-kc"}}
                ],
            }
        ),
        encoding="utf-8",
    )
    for var in ("TRAINSPEC_KUBE_API", "TRAINSPEC_NAMESPACE", "KUBERNETES_SERVICE_HOST", "KFP_POD_NAME", "HOSTNAME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(config))
    monkeypatch.setattr(kube_module, "SA_NAMESPACE_FILE", tmp_path / "no-such-file")
    standin.add_cluster_runtime("trainspec-torch")
    standin.status_script = [COMPLETE]
    result, _ = _run()
    assert result.namespace == "from-kc"
    assert standin.sent("PATCH")[0].path.endswith(f"/namespaces/from-kc/trainjobs/{NAME}")


def test_sigterm_deletes_the_trainjob_and_exits_non_zero(kube_env: StandIn, tmp_path: Path) -> None:
    kube_env.add_cluster_runtime("trainspec-torch")
    kube_env.status_script = [RUNNING]  # runs until cancelled
    manifest = tmp_path / "trainjob.json"
    manifest.write_text(CPU_JOB.manifest, encoding="utf-8")
    status = tmp_path / "status.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trainspec.kfp.launcher",
            "--trainjob",
            str(manifest),
            "--run-id",
            RUN_ID,
            "--poll-seconds",
            "0.01",
            "--backoff-seconds",
            "0.01",
            "--status",
            str(status),
        ],
        cwd=ROOT,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert kube_env.applied.wait(60), "the launcher never applied the TrainJob"
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, out
    (delete,) = kube_env.sent("DELETE")
    assert delete.path.endswith(f"/namespaces/{NAMESPACE}/trainjobs/{NAME}")
    assert delete.body["propagationPolicy"] == "Foreground"
    assert "SIGTERM" in out and "deleting TrainJob" in out
    assert json.loads(status.read_text(encoding="utf-8"))["phase"] == "Terminated"
