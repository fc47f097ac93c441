"""PodSets as Kueue builds them from a TrainJob and its runtime: counts and per-pod requests."""

from __future__ import annotations

from fractions import Fraction

from tests.checkcmd.conftest import MINIMAL_CLUSTER, check, codes, line_of
from trainspec.compiler import emit
from trainspec.compiler.pipeline import compile_paths
from trainspec.kueue.podsets import pod_requests, trainjob_podsets

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"


def compiled(path: str) -> tuple[dict, dict]:
    """(TrainJob, its runtime) compiled from ``path``."""
    result = compile_paths([path])
    objects = [d for out in result.outputs for d in emit.manifest_dicts(out.objects)]
    job = next(o for o in objects if o["kind"] == "TrainJob")
    runtime = next(
        o
        for o in objects
        if o["kind"] == "ClusterTrainingRuntime" and o["metadata"]["name"] == job["spec"]["runtimeRef"]["name"]
    )
    return job, runtime


def test_torch_job_with_sharding_stage() -> None:
    job, runtime = compiled("examples/llama-sft")
    stage, node = trainjob_podsets(job, runtime)
    assert (stage.name, stage.count, stage.count_path) == ("dataset-initializer", 1, ("spec", "initializer", "dataset"))
    assert (node.name, node.count, node.count_path) == ("node", 8, ("spec", "trainer", "numNodes"))
    assert node.requests == {"cpu": 96, "memory": 1600 * 2**30, "nvidia.com/gpu": 8, "rdma/ib": 8}
    assert node.node_selector == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert node.annotations == {"kueue.x-k8s.io/podset-preferred-topology": "cloud.google.com/gce-topology-block"}
    assert node.total()["nvidia.com/gpu"] == 64


def test_mpi_launcher_and_workers() -> None:
    job, runtime = compiled("examples/deepspeed.yaml")
    counts = {p.name: p.count for p in trainjob_podsets(job, runtime)}
    assert counts == {"node": 3, "launcher": 1}  # runLauncherAsNode: the launcher is the 4th node
    runtime["spec"]["mlPolicy"]["mpi"]["runLauncherAsNode"] = False
    assert {p.name: p.count for p in trainjob_podsets(job, runtime)} == {"node": 4, "launcher": 1}


def test_pod_requests_follow_kueue() -> None:
    pod = {
        "initContainers": [
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
            {"name": "download", "resources": {"requests": {"cpu": "16", "memory": "1Gi"}}},
        ],
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "2"}, "limits": {"memory": "4Gi", "nvidia.com/gpu": 1}}},
            {"name": "b", "resources": {"requests": {"cpu": "500m"}}},
        ],
        "overhead": {"cpu": "250m"},
    }
    requests = pod_requests(pod)
    # cpu: max(2 + 0.5 + 1 sidecar, 16 + 1 sidecar) + 0.25 overhead; memory: max(4Gi limit, 1Gi)
    assert requests == {"cpu": Fraction(69, 4), "memory": 4 * 2**30, "nvidia.com/gpu": 1}
    assert pod_requests({**pod, "resources": {"requests": {"cpu": "32"}}})["cpu"] == Fraction(129, 4)


def test_inconsistent_tas_annotations(write) -> None:
    cluster = write(
        "cluster/kueue.yaml",
        MINIMAL_CLUSTER.replace(
            "  nodeLabels: {nvidia.com/gpu.product: H100}\n",
            "  nodeLabels: {nvidia.com/gpu.product: H100}\n  topologyName: fabric\n",
        )
        + """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: fabric}
spec:
  levels: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]
""",
    )
    manifests = write(
        "m.yaml",
        f"""
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: ClusterTrainingRuntime
        metadata: {{name: tas, labels: {{trainer.kubeflow.org/framework: torch}}}}
        spec:
          mlPolicy: {{numNodes: 1, torch: {{}}}}
          template:
            spec:
              replicatedJobs:
              - name: node
                template:
                  metadata: {{labels: {{{ANCESTOR}: trainer}}}}
                  spec:
                    template:
                      metadata:
                        annotations:
                          kueue.x-k8s.io/podset-required-topology: rack
                          kueue.x-k8s.io/podset-preferred-topology: rack
                          kueue.x-k8s.io/podset-slice-size: "8"
                      spec:
                        nodeSelector: {{nvidia.com/gpu.product: H100}}
                        containers:
                        - {{name: node, image: example.com/t:1, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}
        ---
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: TrainJob
        metadata:
          name: tas-job
          namespace: team-a
          labels: {{kueue.x-k8s.io/queue-name: gpu}}
        spec:
          runtimeRef: {{name: tas}}
          trainer: {{numNodes: 2}}
        """,
    )
    status, found = check(str(manifests), "--cluster", str(cluster.parent))
    messages = sorted(d["message"] for d in found if d["code"] == "TS518")
    assert status == 1 and len(messages) == 3, found
    assert "at most one is allowed" in messages[0]
    assert "need each other" in messages[1]
    assert "slice size '8' must be an integer from 1 to the PodSet's 2 pods" in messages[2]
    # The annotations come with the runtime: located at the TrainJob's runtimeRef.
    assert codes(found) == {("TS518", str(manifests), *line_of(manifests, "runtimeRef: {name: tas}", "tas"))}
