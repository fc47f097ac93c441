"""Unit tests of the launcher's pure parts: names, the TaskConfig merge, state, retries, logs."""

from __future__ import annotations

import io
import json

import pytest

pytest.importorskip("kubernetes", reason="the kfp extra is not installed: pip install 'trainspec[kfp]'")

from kfp_testing import COMPLETE, EXAMPLES, FAILED, RUNNING

from trainspec.kfp import launcher_names as N, merge
from trainspec.kfp.job_pipeline import compile_trainjob
from trainspec.kfp.launcher import job_state
from trainspec.kfp.step_logs import LogFollower
from trainspec.kube import retry
from trainspec.kube.follow import stamp_key as _stamp_key


def _job(nodes: int = 2, dataset: bool = False, name: str = "ddp-cpu") -> dict:
    spec: dict = {
        "runtimeRef": {"name": "trainspec-torch", "kind": "ClusterTrainingRuntime"},
        "trainer": {"numNodes": nodes},
    }
    if dataset:
        spec["initializer"] = {"dataset": {"storageUri": "s3://b/d"}}
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": spec,
    }


# --- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "dataset", "budget"),
    [(2, False, 48), (10, False, 48), (11, False, 47), (100, False, 47), (101, False, 46), (8, True, 33)],
)
def test_name_budget_matches_the_jobset_pod_name_rule(nodes: int, dataset: bool, budget: int) -> None:
    from trainspec.compiler.lower.trainer.name_budget import LIMIT, pod_suffix

    assert N.name_budget(_job(nodes, dataset)) == budget
    # The same rule as the compiler's (which knows every rjob): node with `nodes` pods.
    assert N.name_budget(_job(nodes)) == LIMIT - len(pod_suffix("node", 1, nodes))


def test_trainjob_name_is_deterministic_and_fits() -> None:
    job = _job(8, dataset=True)
    base = "a-very-long-training-job-name-that-the-compiler-allowed"
    name = N.trainjob_name(base, "3F2A9C1E-7b4d-4e2a", job)
    assert name == N.trainjob_name(base, "3F2A9C1E-7b4d-4e2a", job)
    assert name.endswith("-3f2a9c1e")
    assert len(name) <= 33 and name[0].isalpha() and not name.endswith("-")
    assert N.trainjob_name("llama-sft", "3f2a9c1e-0000", job) == "llama-sft-3f2a9c1e"
    assert N.trainjob_name("9lives", "abc", _job()) == "j9lives-abc"
    with pytest.raises(ValueError, match="has no letters or digits"):
        N.trainjob_name("x", "---", job)


def test_checkpoint_volume_name_is_the_compilers() -> None:
    from trainspec.compiler.lower import checkpoint, labels

    assert N.CHECKPOINT_VOLUME == checkpoint.VOLUME
    assert N.COMPILER_PATCH_MANAGER == labels.PATCH_MANAGER


def test_label_value_is_valid() -> None:
    assert N.label_value("3f2a9c1e-7b4d-4e2a-9c1e-000000000001") == "3f2a9c1e-7b4d-4e2a-9c1e-000000000001"
    assert N.label_value("-run/id:1-") == "runid1"
    assert len(N.label_value("x" * 100)) == 63


# --- merge ----------------------------------------------------------------------------------


def test_task_config_goes_to_trainer_fields_and_one_runtime_patch() -> None:
    from kfp import dsl

    compiled = compile_trainjob(EXAMPLES / "kfp" / "cpu-job.yaml")
    config = dsl.TaskConfig(
        resources={"limits": {"nvidia.com/gpu": "1", "cpu": "3"}, "requests": {"cpu": "3"}},
        env=[{"name": "TRAINSPEC_CHECKPOINT_KEEP", "value": "5"}, {"name": "EXTRA", "value": "1"}],
        tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 300.0}],
        node_selector={"pool": "gpu"},
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                }
            }
        },
        volumes=[
            {"name": "ws", "persistentVolumeClaim": {"claimName": "run-ws"}},
            {"name": "cfg", "secret": {"secretName": "s", "defaultMode": 420.0}},
        ],
        volume_mounts=[{"name": "ws", "mountPath": "/kfp-workspace"}],
    )
    body = merge.prepare(
        compiled.trainjob,
        name="kfp-ddp-cpu-3f2a9c1e",
        namespace="ml",
        run_id="3f2a9c1e-x",
        task_config=config,
        checkpoint_claim="uuid-kfp-ddp-cpu-checkpoints",
    )
    assert body["metadata"]["name"] == "kfp-ddp-cpu-3f2a9c1e" and body["metadata"]["namespace"] == "ml"
    assert body["metadata"]["labels"][N.RUN_ID_LABEL] == "3f2a9c1e-x"
    trainer = body["spec"]["trainer"]
    assert trainer["resourcesPerNode"] == {
        "requests": {"cpu": "3", "memory": "4Gi"},
        "limits": {"cpu": "3", "memory": "4Gi", "nvidia.com/gpu": "1"},
    }
    env = {e["name"]: e["value"] for e in trainer["env"]}
    assert env["TRAINSPEC_CHECKPOINT_KEEP"] == "5" and env["EXTRA"] == "1"
    assert env["TRAINSPEC_CHECKPOINT_DIR"] == "/checkpoints"
    patches = {p["manager"]: p for p in body["spec"]["runtimePatches"]}
    assert list(patches) == ["trainspec.dev/compiler", "trainspec.dev/kfp"]
    rjob = patches["trainspec.dev/kfp"]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert [r["name"] for r in rjob] == ["node"]
    pod = rjob[0]["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "gpu"}
    assert pod["tolerations"][0]["tolerationSeconds"] == 300
    assert type(pod["tolerations"][0]["tolerationSeconds"]) is int  # KFP's Struct made it 300.0
    assert pod["volumes"][1]["secret"]["defaultMode"] == 420 and type(pod["volumes"][1]["secret"]["defaultMode"]) is int
    assert pod["containers"] == [{"name": "node", "volumeMounts": [{"name": "ws", "mountPath": "/kfp-workspace"}]}]
    assert "env" not in pod["containers"][0]  # env on node is forbidden in runtimePatches
    assert pod["affinity"]["nodeAffinity"]
    compiler_pod = patches["trainspec.dev/compiler"]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0][
        "template"
    ]["spec"]["template"]["spec"]
    assert compiler_pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "uuid-kfp-ddp-cpu-checkpoints"
    # The input is not modified.
    assert compiled.trainjob == json.loads(compiled.manifest)


def test_empty_task_config_changes_nothing_but_names() -> None:
    from kfp import dsl

    compiled = compile_trainjob(EXAMPLES / "ddp-cpu.yaml")
    body = merge.prepare(compiled.trainjob, name="n", namespace="ml", run_id="r", task_config=dsl.TaskConfig())
    assert body["spec"] == compiled.trainjob["spec"]


def test_trainer_22_copies_the_runtime_resources_first() -> None:
    runtime = {
        "spec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {"labels": {N.ANCESTOR_LABEL: "trainer"}},
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "containers": [
                                                {
                                                    "name": "node",
                                                    "resources": {
                                                        "requests": {"memory": "16Gi"},
                                                        "limits": {"memory": "16Gi"},
                                                    },
                                                }
                                            ]
                                        }
                                    }
                                },
                            },
                        }
                    ]
                }
            }
        }
    }
    config = {"resources": {"limits": {"nvidia.com/gpu": "2"}}}
    on22 = merge.prepare(
        _job(), name="n", namespace="ml", run_id="r", task_config=config, trainer_api="2.2", runtime=runtime
    )
    on23 = merge.prepare(
        _job(), name="n", namespace="ml", run_id="r", task_config=config, trainer_api="v2.3.0", runtime=runtime
    )
    # 2.2 replaces the runtime's resources with resourcesPerNode: keep the runtime's memory.
    assert on22["spec"]["trainer"]["resourcesPerNode"] == {
        "requests": {"memory": "16Gi"},
        "limits": {"memory": "16Gi", "nvidia.com/gpu": "2"},
    }
    # 2.3 merges them itself.
    assert on23["spec"]["trainer"]["resourcesPerNode"] == {"limits": {"nvidia.com/gpu": "2"}}


@pytest.mark.parametrize("version", ["2.1", "2.0.1", "1.8", "three"])
def test_trainer_releases_without_runtime_patches_are_refused(version: str) -> None:
    with pytest.raises(merge.MergeError):
        merge.prepare(_job(), name="n", namespace="ml", run_id="r", trainer_api=version)


def test_checkpoint_claim_without_a_checkpoint_volume_is_an_error() -> None:
    with pytest.raises(merge.MergeError, match="no checkpoint"):
        merge.prepare(_job(), name="n", namespace="ml", run_id="r", checkpoint_claim="pvc")


def test_not_a_trainjob_is_refused() -> None:
    with pytest.raises(merge.MergeError, match="TrainJob"):
        merge.prepare({"apiVersion": "v1", "kind": "Pod"}, name="n", namespace="ml", run_id="r")


# --- state ----------------------------------------------------------------------------------


def test_state_comes_from_condition_status_not_the_last_type() -> None:
    assert job_state({"status": RUNNING})[0] == "Running"  # last condition: Suspended=False
    assert job_state({"status": COMPLETE}) == ("Complete", "JobsCompleted", "all done")
    assert job_state({"status": FAILED}) == ("Failed", "DeadlineExceeded", "ran past 1800s")
    assert (
        job_state({"status": {"conditions": [{"type": "Suspended", "status": "True", "reason": "Suspended"}]}})[0]
        == "Suspended"
    )
    assert job_state({})[0] == "Created"


# --- retries --------------------------------------------------------------------------------


def test_transient_errors() -> None:
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import MaxRetryError, ProtocolError

    assert retry.is_transient(ApiException(status=429))
    assert retry.is_transient(ApiException(status=503))
    assert retry.is_transient(ConnectionResetError())
    assert retry.is_transient(ConnectionRefusedError())
    assert retry.is_transient(ProtocolError("Connection aborted."))
    assert retry.is_transient(MaxRetryError(None, "/x"))
    for status in (400, 403, 404, 409, 422):
        assert not retry.is_transient(ApiException(status=status))
    assert not retry.is_transient(ValueError())


def test_backoff_is_exponential_capped_and_honours_retry_after() -> None:
    policy = retry.RetryPolicy(base=1.0, cap=8.0)
    for attempt in range(10):
        assert 0.5 * min(8.0, 2**attempt) <= policy.delay(attempt) <= min(8.0, 2**attempt)
    assert policy.delay(0, retry_after=5) == 5
    assert policy.delay(0, retry_after=100) == 8.0


def test_retry_call_retries_then_gives_up() -> None:
    from kubernetes.client.exceptions import ApiException

    calls, sleeps = [], []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ApiException(status=500)
        return "ok"

    policy = retry.RetryPolicy(base=0.001, cap=0.01, attempts=5)
    assert retry.call(flaky, policy, what="x", log=lambda m: None, sleep=sleeps.append) == "ok"
    assert len(calls) == 3 and len(sleeps) == 2

    def broken() -> None:
        raise ApiException(status=500)

    with pytest.raises(ApiException):
        retry.call(broken, policy, what="x", log=lambda m: None, sleep=lambda s: None)
    with pytest.raises(retry.DeadlineExceeded):
        retry.call(broken, policy, what="x", log=lambda m: None, sleep=lambda s: None, deadline=0.0, clock=lambda: 0.0)

    def forbidden() -> None:
        raise ApiException(status=403)

    with pytest.raises(ApiException):  # an answer, not a hiccup: no retry
        retry.call(forbidden, policy, what="x", log=lambda m: None, sleep=lambda s: pytest.fail("slept"))


# --- logs -----------------------------------------------------------------------------------


class _FakeKube:
    """Two streams of the same running pod; the second overlaps the first (a reconnect)."""

    def __init__(self) -> None:
        self.streams = [
            ["2026-01-01T00:00:00.1Z one", "2026-01-01T00:00:00.12Z two"],
            ["2026-01-01T00:00:00.12Z two", "2026-01-01T00:00:01Z three"],
        ]
        self.calls: list[tuple[bool, int | None]] = []

    def list_pods(self, namespace: str, selector: str) -> list[dict]:
        return [{"metadata": {"name": "p0", "uid": "u0"}, "status": {"phase": "Running"}}]

    def stream_log(self, namespace: str, pod: str, container: str, *, follow: bool, since_seconds: int | None):
        self.calls.append((follow, since_seconds))
        return iter(self.streams.pop(0) if self.streams else [])


def test_log_reconnect_skips_lines_already_printed() -> None:
    out = io.StringIO()
    kube = _FakeKube()
    follower = LogFollower(kube, "ml", "job", out=out, poll_seconds=0)
    follower._pass(follow=True)
    follower._pass(follow=True)
    assert [line for line in out.getvalue().splitlines() if line.startswith("node-0")] == [
        "node-0 | one",
        "node-0 | two",
        "node-0 | three",
    ]
    assert kube.calls[0] == (True, None) and kube.calls[1][1] is not None  # reconnect reads from where it was


def test_timestamps_sort_although_kubelet_trims_zeros() -> None:
    assert _stamp_key("2026-01-01T00:00:00.1Z") > _stamp_key("2026-01-01T00:00:00.09Z")
    assert _stamp_key("2026-01-01T00:00:00.12Z") > _stamp_key("2026-01-01T00:00:00.1Z")
    assert _stamp_key("not-a-time") is None


# --- compiling the job for a pipeline -------------------------------------------------------


def test_compile_trainjob_from_python_objects_and_paths() -> None:
    from trainspec import Resources, TrainingJob
    from trainspec.kfp.job_pipeline import KfpSpecError

    job = TrainingJob(
        name="smoke",
        runtime="trainspec-torch",
        image="pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
        command=["torchrun", "t.py"],
        nodes=2,
        resources_per_node=Resources(cpu=1, memory="1Gi"),
    )
    compiled = compile_trainjob(job)
    assert compiled.name == "smoke" and compiled.claim is None
    assert json.loads(compiled.manifest) == compiled.trainjob
    assert [r["metadata"]["name"] for r in compiled.runtimes] == ["trainspec-torch"]
    upstream = compile_trainjob(TrainingJob(name="smoke", runtime="torch-distributed", command=["torchrun", "t.py"]))
    assert upstream.runtimes == []  # Kubeflow Trainer's own runtime: the cluster has it, trainspec ships none
    assert upstream.trainjob["spec"]["runtimeRef"]["name"] == "torch-distributed"

    both = [EXAMPLES / "ddp-cpu.yaml", job]
    with pytest.raises(KfpSpecError, match=r"expected one job.*ddp-cpu, smoke"):
        compile_trainjob(both)
    assert compile_trainjob(both, job="ddp-cpu").name == "ddp-cpu"

    llama = compile_trainjob(EXAMPLES / "llama-sft")
    assert llama.storage_class == "lustre" and llama.claim_size == "3286Gi"
    assert llama.claim_access_modes == ["ReadWriteMany"]
    with pytest.raises(KfpSpecError, match="does not compile"):
        compile_trainjob(EXAMPLES / "invalid" / "TS103-syntax-error.yaml")


def test_lines_with_the_same_timestamp_are_all_printed_and_not_repeated_on_reconnect() -> None:
    """Several lines in one timestamp (a burst of output): every line after the first was dropped."""
    out = io.StringIO()
    kube = _FakeKube()
    kube.streams = [
        ["2026-01-01T00:00:00.5Z a", "2026-01-01T00:00:00.5Z b", "2026-01-01T00:00:00.5Z c"],
        [
            "2026-01-01T00:00:00.5Z a",
            "2026-01-01T00:00:00.5Z b",
            "2026-01-01T00:00:00.5Z c",
            "2026-01-01T00:00:00.5Z d",
            "2026-01-01T00:00:01Z e",
        ],
    ]
    follower = LogFollower(kube, "ml", "job", out=out, poll_seconds=0)
    follower._pass(follow=True)
    follower._pass(follow=True)
    assert [line for line in out.getvalue().splitlines() if line.startswith("node-0")] == [
        "node-0 | a",
        "node-0 | b",
        "node-0 | c",
        "node-0 | d",
        "node-0 | e",
    ]
