"""``trainspec check`` on jobs that reference external runtimes (the cluster's, never emitted).

Without a definition the runtime is known to exist by name; with ``--cluster`` holding the
cluster's own runtime, the webhook rules are checked against that definition.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.checkcmd.conftest import check

JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {name: up, namespace: ml-dev}
spec:
  runtime: RUNTIME
  command: [torchrun, train.py]
  nodes: 2
  resourcesPerNode: {cpu: 2, memory: 4Gi}
  queue: ml-dev
  checkpoint: {claimName: ckpt, claimAccessMode: ReadWriteMany}
"""

TEAM_RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: vision-torch}
spec: {framework: torch, external: true, image: registry.example.com/vision/torch:2.13}
"""

# The cluster's torch-distributed, as another installation might have it: its trainer
# replicated job is called "trainer", so trainspec's checkpoint patch (on "node") cannot apply.
CLUSTER_RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: trainer
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                spec:
                  containers: [{name: node, image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime}]
"""


def test_upstream_runtime_without_a_definition_is_known_to_exist(write: Callable[[str, str], Path]) -> None:
    spec = write("up.yaml", JOB.replace("RUNTIME", "torch-distributed"))
    status, found = check(str(spec))
    assert (status, found) == (0, [])


def test_team_runtime_with_external_true_is_known_to_exist(write: Callable[[str, str], Path]) -> None:
    spec = write("up.yaml", TEAM_RUNTIME + "---\n" + JOB.replace("RUNTIME", "vision-torch"))
    status, found = check(str(spec))
    assert (status, found) == (0, [])


def test_an_unknown_runtime_is_still_missing(write: Callable[[str, str], Path]) -> None:
    spec = write("up.yaml", JOB.replace("RUNTIME", "torch-distributd"))
    status, found = check(str(spec))
    assert status == 1 and [d["code"] for d in found] == ["TS305"]


def test_cluster_definition_of_an_external_runtime_is_checked(write: Callable[[str, str], Path]) -> None:
    spec = write("up.yaml", JOB.replace("RUNTIME", "torch-distributed"))
    cluster = write("cluster/runtimes.yaml", CLUSTER_RUNTIME)
    status, found = check(str(spec), "--cluster", str(cluster.parent))
    assert status == 1
    messages = [d["message"] for d in found if d["code"] == "TS503"]
    assert any("replicatedJob 'node', which the runtime does not have" in m for m in messages), found
