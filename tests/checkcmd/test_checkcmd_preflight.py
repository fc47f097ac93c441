"""The pre-flight checklist, one check at a time: failing and passing, located in the job spec
and in the Kueue object."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.checkcmd.conftest import MINIMAL_CLUSTER, RUNTIME_SPEC, check, codes, job_spec, line_of


@pytest.fixture
def run(write: Callable[[str, str], Path]) -> Callable[..., tuple[list[dict], Path, Path]]:
    """run(cluster, nodes=2, ...) -> (diagnostics, job file, cluster file) for a 2-node job."""

    def go(
        cluster: str, nodes: int = 2, *, namespace: str = "team-a", queue: str = "gpu", extra: str = ""
    ) -> tuple[list[dict], Path, Path]:
        cluster_file = write("cluster/kueue.yaml", cluster)
        write("specs/runtime.yaml", RUNTIME_SPEC)
        job = write("specs/job.yaml", job_spec(nodes, namespace=namespace, queue=queue, extra=extra))
        _, found = check(str(job.parent), "--cluster", str(cluster_file.parent))
        return found, job, cluster_file

    return go


def notes(diagnostic: dict) -> list[tuple[str, int, int]]:
    return [(r["file"], r["line"], r["column"]) for r in diagnostic["related"]]


def test_the_minimal_setup_admits_a_small_job(run) -> None:
    assert run(MINIMAL_CLUSTER)[0] == []


def test_local_queue_must_exist_in_the_namespace(run) -> None:
    elsewhere = (
        MINIMAL_CLUSTER + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {namespace: team-b, name: batch}\nspec: {clusterQueue: gpu-training}\n"
    )
    found, job, cluster = run(elsewhere, queue="batch")
    assert codes(found) == {("TS510", str(job), 10, 10)}  # at `queue: batch`
    assert "no LocalQueue 'batch' in namespace team-a" in found[0]["message"]
    assert notes(found[0]) == [(str(cluster), *line_of(cluster, "namespace: team-b, name: batch", "batch"))]
    assert found[0]["hint"] == "LocalQueues in team-a: gpu"


def test_local_queue_must_point_to_a_cluster_queue(run) -> None:
    found, job, cluster = run(MINIMAL_CLUSTER.replace("{clusterQueue: gpu-training}", "{clusterQueue: gone}"))
    assert codes(found) == {("TS510", str(job), 10, 10)}
    assert notes(found[0]) == [(str(cluster), *line_of(cluster, "clusterQueue: gone", "gone"))]


def test_cluster_queue_flavors_must_exist(run) -> None:
    found, job, cluster = run(MINIMAL_CLUSTER.replace("    - name: h100\n", "    - name: h200\n"))
    assert codes(found) == {("TS510", str(job), 10, 10)}
    assert "ResourceFlavor 'h200', which does not exist" in found[0]["message"]
    assert notes(found[0]) == [(str(cluster), *line_of(cluster, "- name: h200", "h200"))]


def test_namespace_selector_must_select_the_namespace(run) -> None:
    cluster_text = MINIMAL_CLUSTER.replace('labels: {gpu-tenant: "true"}', 'labels: {gpu-tenant: "false"}')
    found, job, cluster = run(cluster_text)
    assert codes(found) == {("TS511", str(job), 5, 14)}  # at `namespace: team-a`
    assert notes(found[0]) == [
        (str(cluster), *line_of(cluster, "namespaceSelector:")),
        (str(cluster), *line_of(cluster, "labels: {gpu-tenant")),
    ]


TEAM_C_QUEUE = (
    "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {namespace: team-c, name: gpu}\n"
    "spec: {clusterQueue: gpu-training}\n"
)


def test_missing_namespace_object_is_a_warning(run) -> None:
    found, _job, cluster = run(MINIMAL_CLUSTER + TEAM_C_QUEUE, namespace="team-c")
    [d] = found
    assert (d["code"], d["severity"], d["line"], d["column"]) == ("TS511", "warning", 5, 14)
    assert "Namespace team-c is not among the cluster files" in d["message"]
    assert notes(d) == [(str(cluster), *line_of(cluster, "namespaceSelector:"))]
    # Selectors that need no Namespace labels are decided anyway.
    everyone = MINIMAL_CLUSTER.replace(
        'namespaceSelector: {matchLabels: {gpu-tenant: "true"}}', "namespaceSelector: {}"
    )
    assert run(everyone + TEAM_C_QUEUE, namespace="team-c")[0] == []
    by_name = MINIMAL_CLUSTER.replace(
        '{matchLabels: {gpu-tenant: "true"}}', "{matchLabels: {kubernetes.io/metadata.name: team-c}}"
    )
    assert run(by_name + TEAM_C_QUEUE, namespace="team-c")[0] == []


def test_no_namespace_selector_admits_nothing(run) -> None:
    found, job, _ = run(MINIMAL_CLUSTER.replace('  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n', ""))
    assert codes(found) == {("TS511", str(job), 5, 14)}
    assert "has no namespaceSelector, so it admits no namespace" in found[0]["message"]


@pytest.mark.parametrize("policy", ["Hold", "HoldAndDrain"])
def test_held_queues(run, policy: str) -> None:
    held_lq = MINIMAL_CLUSTER.replace(
        "spec: {clusterQueue: gpu-training}", f"spec: {{clusterQueue: gpu-training, stopPolicy: {policy}}}"
    )
    found, job, cluster = run(held_lq)
    assert codes(found) == {("TS512", str(job), 10, 10)}
    assert notes(found[0]) == [(str(cluster), *line_of(cluster, f"stopPolicy: {policy}", policy))]
    held_cq = MINIMAL_CLUSTER.replace("  resourceGroups:\n", f"  stopPolicy: {policy}\n  resourceGroups:\n", 1)
    found, job, cluster = run(held_cq)
    assert codes(found) == {("TS512", str(job), 10, 10)}
    assert f"ClusterQueue gpu-training is held (stopPolicy: {policy})" in found[0]["message"]
    assert (
        run(
            MINIMAL_CLUSTER.replace(
                "spec: {clusterQueue: gpu-training}", "spec: {clusterQueue: gpu-training, stopPolicy: None}"
            )
        )[0]
        == []
    )


def test_priority_class_must_exist(run) -> None:
    found, job, _ = run(MINIMAL_CLUSTER, extra="priority: urgent")
    assert codes(found) == {("TS513", str(job), 11, 13)}
    assert found[0]["hint"] == "WorkloadPriorityClasses in the cluster files: normal"
    assert run(MINIMAL_CLUSTER, extra="priority: normal")[0] == []


def test_default_local_queue_and_unmanaged_jobs(write) -> None:
    """No queue label: Kueue uses a LocalQueue named `default` if there is one, else ignores the job."""
    cluster = write("cluster/kueue.yaml", MINIMAL_CLUSTER.replace("name: gpu}", "name: default}"))
    write("specs/runtime.yaml", RUNTIME_SPEC)
    job = write("specs/job.yaml", job_spec(8).replace("  queue: gpu\n", ""))
    _, found = check(str(job.parent), "--cluster", str(cluster.parent))
    assert {d["code"] for d in found} == {"TS403", "TS514"}  # TS403: the compiler's own no-queue warning
    cluster.write_text(MINIMAL_CLUSTER)
    _, found = check(str(job.parent), "--cluster", str(cluster.parent))
    assert {d["code"] for d in found} == {"TS403"}


def test_v1beta1_objects_are_read(run) -> None:
    """v1beta1 spells the cohort `spec.cohort`; both versions are served."""
    old = (
        MINIMAL_CLUSTER.replace("kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1").replace(
            '  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n',
            '  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n  cohort: pool\n',
        )
        + """
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: lender}
spec:
  cohort: pool
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 1000}
      - {name: memory, nominalQuota: 10Ti}
      - {name: nvidia.com/gpu, nominalQuota: 32}
"""
    )
    assert run(old, 8)[0] == []
    found, _, _ = run(old, 9)
    assert (
        "needs 72 nvidia.com/gpu on flavor h100; ClusterQueue gpu-training can reach at most 64 "
        "(nominal 32 + 32 borrowable in cohort pool)" in found[0]["message"]
    )


def test_kueue_label_rules_on_manifests(write) -> None:
    """Kueue's webhook rules on the job's own labels, checked with or without a cluster."""
    manifest = write(
        "tj.yaml",
        """
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: TrainJob
        metadata:
          name: tj
          namespace: team-a
          labels:
            kueue.x-k8s.io/queue-name: Bad_Queue
            kueue.x-k8s.io/max-exec-time-seconds: "0"
          annotations:
            kueue.x-k8s.io/elastic-job: "true"
        spec:
          runtimeRef: {name: torch-distributed}
        """,
    )
    _, found = check(str(manifest))
    located = {(d["code"], d["line"], d["column"]) for d in found}
    assert {("TS503", 7, 32), ("TS503", 8, 43), ("TS503", 10, 33)} <= located
