"""Every framework x gang policy x scope x sharding combination compiles to manifests that the
real CRDs, CEL rules and webhook rules accept, with the shape each combination needs."""

from __future__ import annotations

import itertools

import pytest

from trainspec.check import check_manifests, default_crd_dirs
from trainspec.compiler.emit import manifest_dicts
from trainspec.compiler.pipeline import compile_specs
from trainspec.dsl.load.spec_sources import load_string

CRDS = default_crd_dirs()

FRAMEWORKS = ["torch", "deepspeed", "mpi", "jax"]
GANGS = ["kueue", "coscheduling", "volcano", "none"]
SCOPES = ["cluster", "namespace"]


def specs(framework: str, gang: str, scope: str, data: bool) -> str:
    namespace = "  namespace: team-a\n" if scope == "namespace" else ""
    mpi = "  mpi: {sshPort: 2222, runAsUser: 1000}\n" if framework in ("deepspeed", "mpi") else ""
    runtime = (
        f"apiVersion: trainspec.dev/v1alpha1\nkind: Runtime\nmetadata:\n  name: rt\n{namespace}spec:\n"
        f"  framework: {framework}\n  scope: {scope}\n  image: registry.example.com/train:1\n"
        f"  gang: {gang}\n  resourcesPerNode: {{gpu: 4}}\n  sharedMemory: 16Gi\n"
        f"  network: {{env: {{NCCL_DEBUG: WARN}}, resources: {{rdma/ib: 4}}}}\n  restarts: {{max: 2}}\n"
        f"  scheduling: {{nodeSelector: {{pool: gpu}}, gangTimeout: 5m, volcanoQueue: research}}\n"
        f"  dataSharding: {{image: ghcr.io/trainspec/trainspec:0.1.0, storageClass: rwx}}\n{mpi}"
    )
    job = (
        "apiVersion: trainspec.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: job, namespace: team-a}\n"
        "spec:\n  runtime: rt\n  nodes: 3\n  maxRunTime: 2h\n"
        "  checkpoint: {size: 100Gi, storageClass: rwx}\n  topology: {level: example.com/block}\n"
        + ("  data: {source: pvc://corpus/c4, format: text}\n" if data else "")
    )
    if gang == "kueue":
        job += "  queue: team-a\n"
    return runtime + "---\n" + job


CASES = list(itertools.product(FRAMEWORKS, GANGS, SCOPES, [False, True]))


def compile_case(framework, gang, scope, data):
    loaded, problems = load_string(specs(framework, gang, scope, data), "matrix.yaml")
    assert [d.message for d in problems if d.is_error] == []
    result = compile_specs(loaded)
    assert result.ok, [d.message for d in result.diagnostics if d.is_error]
    return [d for out in result.outputs for d in manifest_dicts(out.objects)]


@pytest.mark.skipif(not CRDS, reason="../shared/crds not found (set TRAINSPEC_CRDS_DIR)")
@pytest.mark.parametrize(("framework", "gang", "scope", "data"), CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_combination_passes_crds_and_webhooks(framework, gang, scope, data) -> None:
    manifests = compile_case(framework, gang, scope, data)
    found = check_manifests([(None, m) for m in manifests], CRDS)
    assert [f"{d.code} {d.path}: {d.message}" for d in found if d.is_error] == []


@pytest.mark.parametrize(("framework", "gang", "scope", "data"), CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_combination_shape(framework, gang, scope, data) -> None:
    manifests = compile_case(framework, gang, scope, data)
    kind = "TrainingRuntime" if scope == "namespace" else "ClusterTrainingRuntime"
    runtimes = {m["metadata"]["name"]: m for m in manifests if m["kind"] == kind}
    assert set(runtimes) == {"rt", "rt-sharded"}
    job = next(m for m in manifests if m["kind"] == "TrainJob")
    assert job["spec"]["runtimeRef"] == {
        "name": "rt-sharded" if data else "rt",
        "apiGroup": "trainer.kubeflow.org",
        "kind": kind,
    }
    runtime = runtimes[job["spec"]["runtimeRef"]["name"]]
    policy = runtime["spec"]["mlPolicy"]
    assert set(policy) == {"numNodes", {"torch": "torch", "jax": "jax"}.get(framework, "mpi")}
    rjobs = {r["name"]: r for r in runtime["spec"]["template"]["spec"]["replicatedJobs"]}
    expected = (["dataset-initializer"] if data else []) + (
        ["node", "launcher"] if framework in ("deepspeed", "mpi") else ["node"]
    )
    assert list(rjobs) == expected
    pod = rjobs["node"]["template"]["spec"]["template"]["spec"]
    if gang == "coscheduling":
        assert runtime["spec"]["podGroupPolicy"] == {"coscheduling": {"scheduleTimeoutSeconds": 300}}
        assert pod["schedulerName"] == "scheduler-plugins-scheduler"
    elif gang == "volcano":
        assert runtime["spec"]["podGroupPolicy"] == {"volcano": {}}
        assert runtime["spec"]["template"]["metadata"]["annotations"] == {
            "scheduling.volcano.sh/queue-name": "research"
        }
        assert pod["schedulerName"] == "volcano"
    else:
        assert "podGroupPolicy" not in runtime["spec"] and "schedulerName" not in pod
    if framework in ("deepspeed", "mpi"):
        assert rjobs["launcher"]["dependsOn"] == [{"name": "node", "status": "Ready"}]
        assert rjobs["launcher"]["template"]["metadata"]["labels"] == {
            "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
        }
        assert pod["containers"][0]["readinessProbe"]["tcpSocket"]["port"] == 2222
        assert job["spec"]["trainer"]["numProcPerNode"] == 4
    if data:
        patch_rjobs = [
            r["name"]
            for r in job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
        ]
        assert patch_rjobs[0] == "dataset-initializer"  # the pvc:// source is mounted into the stage
    if framework == "jax":
        assert "numProcPerNode" not in job["spec"]["trainer"]
