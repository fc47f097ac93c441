"""Admission-webhook rules (TS503): TrainJob, runtimes, JobSet, and trainspec runtime policy."""

from __future__ import annotations

from trainspec.check import check_webhooks
from trainspec.dsl.diagnostics import Severity

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
PATCH_RJOB = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
PATCH_POD = PATCH_RJOB + ".template.spec.template.spec"


def ts503(diagnostics):
    return [(d.file, d.path) for d in diagnostics if d.code == "TS503"]


def with_initializer_rjob(runtime, rjob, **kwargs):
    rt = runtime()
    rt["spec"]["template"]["spec"]["replicatedJobs"] = [
        rjob("dataset-initializer", "dataset-initializer", ancestor="dataset-initializer", **kwargs),
        rjob(
            "node",
            "node",
            ancestor="trainer",
            dependsOn=[{"name": "dataset-initializer", "status": "Complete"}],
        ),
    ]
    return rt


# -- TrainJob -------------------------------------------------------------------------------


def test_missing_runtime(check, trainjob):
    found = check(trainjob())
    assert ts503(found) == [("m0.yaml", "spec.runtimeRef.name")]
    assert "ClusterTrainingRuntime 'ts-torch' does not exist" in found[0].message
    assert check(trainjob(), known_runtimes=["ts-torch"]) == []


def test_training_runtime_must_be_in_the_same_namespace(check, runtime, trainjob):
    rt = runtime()
    rt["kind"] = "TrainingRuntime"
    rt["metadata"]["namespace"] = "team-b"
    tj = trainjob()
    tj["spec"]["runtimeRef"] = {"name": "ts-torch", "kind": "TrainingRuntime"}
    assert ts503(check(rt, tj)) == [("m1.yaml", "spec.runtimeRef.name")]
    rt["metadata"]["namespace"] = "team-a"
    assert check(rt, tj) == []
    assert check(tj, known_runtimes=["team-a/ts-torch"]) == []


def test_unsupported_runtime_ref(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["runtimeRef"]["apiGroup"] = "example.com"
    assert ts503(check(runtime(), tj)) == [("m1.yaml", "spec.runtimeRef")]


def test_reserved_env(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["trainer"]["env"] = [
        {"name": "PET_NNODES", "value": "2"},
        {"name": "OK", "value": "1"},
        {"name": "DMLC_TASK_ID", "value": "0"},
        {"name": "OMPI_MCA_plm_rsh_args", "value": "-x"},
    ]
    found = check(runtime(), tj)
    # Only the torch runtime's names: DMLC_*/OMPI_* are reserved under xgboost/mpi runtimes only
    # (more in test_trainer_rules.py).
    assert ts503(found) == [("m1.yaml", "spec.trainer.env[0].name")]
    assert "'PET_NNODES' is reserved by Kubeflow Trainer (Torch)" in found[0].message


def test_initializer_needs_the_rjob(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["initializer"] = {"dataset": {"storageUri": "hf://org/ds"}}
    found = check(runtime(), tj)
    assert ts503(found) == [("m1.yaml", "spec.initializer.dataset")]
    assert "no replicatedJob named 'dataset-initializer'" in found[0].message
    assert found[0].related and found[0].related[0].file == "m0.yaml"


def test_initializer_needs_the_volume_mount(check, runtime, trainjob, rjob):
    tj = trainjob()
    tj["spec"]["initializer"] = {"dataset": {"storageUri": "hf://org/ds"}}
    found = check(with_initializer_rjob(runtime, rjob, mounts=False), tj)
    assert ts503(found) == [("m1.yaml", "spec.initializer.dataset")]
    assert "no volumeMount named 'initializer'" in found[0].message
    assert check(with_initializer_rjob(runtime, rjob, mounts=True), tj) == []


def test_initializer_needs_the_container(check, runtime, trainjob, rjob):
    rt = runtime()
    rt["spec"]["template"]["spec"]["replicatedJobs"].insert(0, rjob("model-initializer", "fetch", mounts=True))
    tj = trainjob()
    tj["spec"]["initializer"] = {"model": {"storageUri": "hf://org/model"}}
    found = check(rt, tj)
    assert ts503(found) == [("m1.yaml", "spec.initializer.model")]
    assert "no container named 'model-initializer'" in found[0].message


def test_patch_env_on_node(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"
    ]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    found = check(runtime(), tj)
    assert ts503(found) == [("m1.yaml", PATCH_POD + ".containers[0].env")]
    assert "spec.trainer.env" in found[0].message


def test_patch_unknown_container_and_rjob(check, runtime, trainjob):
    tj = trainjob()
    rjobs = tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    rjobs[0]["template"]["spec"]["template"]["spec"]["containers"][0]["name"] = "trainer"
    rjobs[0]["template"]["spec"]["template"]["spec"]["initContainers"] = [{"name": "preflight"}]
    rjobs.append({"name": "launcher"})
    found = check(runtime(), tj)
    assert ts503(found) == [
        ("m1.yaml", PATCH_POD + ".containers[0].name"),
        ("m1.yaml", PATCH_POD + ".initContainers[0].name"),
        ("m1.yaml", "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[1].name"),
    ]


def test_patch_manager_must_be_domain_prefixed(check, runtime, trainjob):
    tj = trainjob()
    tj["spec"]["runtimePatches"][0]["manager"] = "trainspec"
    assert ts503(check(runtime(), tj)) == [("m1.yaml", "spec.runtimePatches[0].manager")]
    tj["spec"]["runtimePatches"][0]["manager"] = "Not_A_Domain/x"
    assert ts503(check(runtime(), tj)) == [("m1.yaml", "spec.runtimePatches[0].manager")]


def test_pod_name_budget(check, runtime, trainjob, rjob):
    rt = with_initializer_rjob(runtime, rjob, mounts=True)
    tj = trainjob()
    tj["metadata"]["name"] = "a" * 40
    found = check(rt, tj)
    assert ts503(found) == [("m1.yaml", "metadata.name")]
    message = found[0].message
    assert "'dataset-initializer'" in message and "70 characters" in message and "maximum is 63" in message
    assert "at most 33 characters" in message
    tj["metadata"]["name"] = "a" * 33
    assert check(rt, tj) == []


def test_pod_name_budget_counts_nodes(check, runtime, trainjob):
    tj = trainjob()
    # "-node-0-<n-1>-abcde": 10 nodes leave 48 characters, 11 nodes leave 47.
    tj["metadata"]["name"] = "a" * 48
    tj["spec"]["trainer"]["numNodes"] = 10
    assert check(runtime(), tj) == []
    tj["spec"]["trainer"]["numNodes"] = 11
    assert ts503(check(runtime(), tj)) == [("m1.yaml", "metadata.name")]


def _mpi_runtime(runtime, rjob, *names):
    rt = runtime()
    rt["spec"]["mlPolicy"] = {"numNodes": 1, "mpi": {"runLauncherAsNode": True}}
    rt["spec"]["template"]["spec"]["replicatedJobs"] = [
        rjob(n, "node", ancestor="trainer" if n == "launcher" else None) for n in names
    ]
    rt["spec"]["template"]["spec"]["successPolicy"]["targetReplicatedJobs"] = [names[-1]]
    return rt


def test_mpi_launcher_missing(check, runtime, trainjob, rjob):
    tj = trainjob()
    tj["spec"]["runtimePatches"] = []
    found = check(_mpi_runtime(runtime, rjob, "node"), tj)
    assert ts503(found) == [("m1.yaml", "spec.trainer.numNodes")]
    assert "missing ['launcher']" in found[0].message
    assert check(_mpi_runtime(runtime, rjob, "node", "launcher"), tj) == []


# -- runtimes ---------------------------------------------------------------------------------


def test_ancestor_rjob_with_two_replicas(check, runtime):
    rt = runtime()
    rt["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = 2
    found = check(rt)
    assert ts503(found) == [("m0.yaml", "spec.template.spec.replicatedJobs[0].replicas")]
    assert "got 2 (maximum 1)" in found[0].message


def test_ancestor_rjob_needs_its_container(check, runtime, rjob):
    rt = runtime()
    rt["spec"]["template"]["spec"]["replicatedJobs"] = [rjob("node", "trainer", ancestor="trainer")]
    assert ts503(check(rt)) == [
        ("m0.yaml", "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers")
    ]


def test_ancestor_label_on_pod_template(check, runtime, rjob):
    rt = runtime()
    job = rjob("node", "node")
    job["template"]["spec"]["template"]["metadata"] = {"labels": {ANCESTOR: "trainer"}}
    rt["spec"]["template"]["spec"]["replicatedJobs"] = [job]
    assert ts503(check(rt)) == [
        (
            "m0.yaml",
            f"spec.template.spec.replicatedJobs[0].template.spec.template.metadata.labels['{ANCESTOR}']",
        )
    ]


def test_depends_on_forward_reference_and_first_rjob(check, runtime, rjob):
    rt = runtime()
    rt["spec"]["template"]["spec"]["replicatedJobs"] = [
        rjob("prep", "prep", dependsOn=[{"name": "node", "status": "Ready"}]),
        rjob("node", "node", ancestor="trainer", dependsOn=[{"name": "post", "status": "Complete"}]),
        rjob("post", "post"),
    ]
    found = check(rt)
    assert ts503(found) == [
        ("m0.yaml", "spec.template.spec.replicatedJobs[0].dependsOn"),
        ("m0.yaml", "spec.template.spec.replicatedJobs[1].dependsOn[0].name"),
    ]
    assert "earlier replicatedJob: 'post' is not before 'node'" in found[1].message


def test_success_policy_target_must_exist(check, runtime):
    rt = runtime()
    rt["spec"]["template"]["spec"]["successPolicy"]["targetReplicatedJobs"] = ["trainer"]
    assert ts503(check(rt)) == [("m0.yaml", "spec.template.spec.successPolicy.targetReplicatedJobs[0]")]


def test_claim_policies_must_be_mounted(check, runtime):
    rt = runtime()
    rt["spec"]["template"]["spec"]["volumeClaimPolicies"] = [
        {
            "templates": [
                {
                    "metadata": {"name": "ckpt"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                }
            ]
        }
    ]
    assert ts503(check(rt)) == [("m0.yaml", "spec.template.spec.volumeClaimPolicies[0].templates[0].metadata.name")]


def test_trainspec_policy_for_runtimes(check, runtime):
    rt = runtime()
    del rt["metadata"]["labels"]["trainer.kubeflow.org/framework"]
    rt["metadata"]["labels"]["trainer.kubeflow.org/webhook-validation"] = "disabled"
    del rt["spec"]["mlPolicy"]
    found = check(rt)
    assert sorted(ts503(found)) == [
        ("m0.yaml", "metadata.labels"),
        ("m0.yaml", "metadata.labels['trainer.kubeflow.org/webhook-validation']"),
        ("m0.yaml", "spec.mlPolicy"),
    ]
    assert all(d.message.startswith("trainspec policy") for d in found)
    assert check(rt, policy=False) == []


# -- plain JobSets ----------------------------------------------------------------------------


def test_jobset_rules():
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "j" * 45},
        "spec": {
            "replicatedJobs": [
                {"name": "workers", "replicas": 2, "template": {"spec": {"parallelism": 12, "completions": 12}}},
                {"name": "driver", "dependsOn": [{"name": "driver", "status": "Ready"}]},
            ]
        },
    }
    found = check_webhooks([("js.yaml", jobset)])
    # As the JobSet webhook: a self-dependency passes it (the controller then never starts the
    # job: a warning); pod names count completions and the error names the replicatedJob.
    assert [(d.path, d.severity) for d in found] == [
        ("spec.replicatedJobs[0].name", Severity.ERROR),
        ("spec.replicatedJobs[1].dependsOn[0].name", Severity.WARNING),
    ]
    assert "'j" in found[0].message and "-workers-1-11-abcde'" in found[0].message
    # More rules of the JobSet webhook: tests/check/test_jobset_rules.py.
