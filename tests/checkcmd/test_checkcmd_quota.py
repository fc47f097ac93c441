"""The quota math: the worked example both ways, cohorts, flavor order, candidates, resources."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.checkcmd.conftest import MINIMAL_CLUSTER, RUNTIME_SPEC, check, codes, job_spec, line_of

# The reference's worked example: 8 nodes x {48 CPU, 384Gi, 8 GPU} = {384, 3Ti, 64 GPU}.
COHORT_CLUSTER = (
    MINIMAL_CLUSTER.replace(
        '  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n',
        '  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n  cohortName: pool\n',
    ).replace(
        "      - {name: nvidia.com/gpu, nominalQuota: 32}",
        "      - {name: nvidia.com/gpu, nominalQuota: 32, borrowingLimit: BORROW}",
    )
    + """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team-b
spec:
  cohortName: pool
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 0}
      - {name: memory, nominalQuota: 0}
      - {name: nvidia.com/gpu, nominalQuota: 32, lendingLimit: LEND}
"""
)


@pytest.fixture
def setup(write: Callable[[str, str], Path]) -> Callable[..., tuple[int, list[dict], Path, Path]]:
    """setup(cluster yaml, nodes=8, extra=..., runtime=...) -> (exit, diagnostics, job file, cluster file)."""

    def run(
        cluster: str, nodes: int = 8, extra: str = "", runtime: str = RUNTIME_SPEC, *args: str
    ) -> tuple[int, list[dict], Path, Path]:
        cluster_file = write("cluster/kueue.yaml", cluster)
        write("specs/runtime.yaml", runtime)
        job = write("specs/job.yaml", job_spec(nodes, extra=extra))
        status, found = check(str(job.parent), "--cluster", str(cluster_file.parent), *args)
        return status, found, job, cluster_file

    return run


def test_worked_example_never_admissible_without_cohort(setup) -> None:
    status, found, job, cluster = setup(MINIMAL_CLUSTER)
    assert status == 1
    assert codes(found) == {("TS514", str(job), 9, 10)}  # at `nodes: 8`
    [d] = found
    assert (
        "needs 64 nvidia.com/gpu on flavor h100; ClusterQueue gpu-training can reach at most 32 (nominal 32, no cohort)"
    ) in d["message"]
    assert d["path"] == "spec.nodes"
    assert [(r["file"], r["line"], r["column"]) for r in d["related"]] == [
        (str(cluster), *line_of(cluster, "{name: nvidia.com/gpu, nominalQuota: 32}", "32"))
    ]


def test_worked_example_admissible_when_the_cohort_lends_32_more(setup) -> None:
    status, found, _, _ = setup(COHORT_CLUSTER.replace("BORROW", "32").replace("LEND", "32"))
    assert (status, found) == (0, [])


@pytest.mark.parametrize(
    ("borrow", "lend", "most", "why"),
    [
        ("16", "32", "48", "nominal 32 + 16 borrowable in cohort pool, borrowingLimit 16"),
        ("32", "8", "40", "nominal 32 + 8 borrowable in cohort pool, borrowingLimit 32"),
        ("0", "32", "32", "nominal 32, borrowingLimit 0; cohort pool has nothing more to lend"),
    ],
)
def test_borrowing_and_lending_limits_cap_the_cohort(setup, borrow: str, lend: str, most: str, why: str) -> None:
    _status, found, job, _ = setup(COHORT_CLUSTER.replace("BORROW", borrow).replace("LEND", lend))
    assert codes(found) == {("TS514", str(job), 9, 10)}
    assert f"can reach at most {most} ({why})" in found[0]["message"]


def test_nested_cohorts_and_cohort_quota(setup) -> None:
    """pool's parent cohort org owns 16 GPUs of its own; pool lends up to its borrowingLimit."""
    cluster = (
        COHORT_CLUSTER.replace("BORROW", "64").replace("LEND", "16")
        + """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: pool}
spec:
  parentName: org
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 16}
"""
    )
    status, found, _, _ = setup(cluster)  # 32 own + 16 lent by team-b + 16 from org = 64
    assert (status, found) == (0, [])
    capped = cluster.replace(
        "metadata: {name: pool}\nspec:\n",
        "metadata: {name: pool}\nspec:\n"
        "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
        "    - name: h100\n      resources:\n"
        "      - {name: nvidia.com/gpu, nominalQuota: 0, borrowingLimit: 8}\n",
    )
    status, found, _, _ = setup(capped)  # pool may take only 8 from org: 56
    assert "can reach at most 56" in found[0]["message"]


def test_flavors_are_tried_in_order(setup, write) -> None:
    two = MINIMAL_CLUSTER.replace(
        "    - name: h100\n",
        "    - name: small\n      resources:\n"
        "      - {name: cpu, nominalQuota: 384}\n      - {name: memory, nominalQuota: 3Ti}\n"
        "      - {name: nvidia.com/gpu, nominalQuota: 8}\n    - name: h100\n",
    )
    two = two.replace("{name: nvidia.com/gpu, nominalQuota: 32}", "{name: nvidia.com/gpu, nominalQuota: 64}")
    two += "\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: small}\nspec: {}\n"
    status, found, _, _ = setup(two)
    assert (status, found) == (0, [])  # small is too small, h100 holds it
    too_small = two.replace("nominalQuota: 64", "nominalQuota: 16")
    status, found, _, _cluster = setup(too_small)
    [d] = found
    assert d["code"] == "TS514" and "needs 64 nvidia.com/gpu on flavor small" in d["message"]
    assert {r["message"].split(":")[0] for r in d["related"]} == {"flavor small", "flavor h100"}


def test_init_pod_sets_take_quota_too(setup, write) -> None:
    """The sharding stage's PodSet is reserved at admission: with it, 8 nodes no longer fit."""
    runtime = RUNTIME_SPEC + "  dataSharding: {image: ghcr.io/trainspec/trainspec:0.1.0}\n"
    sharded = MINIMAL_CLUSTER.replace("nvidia.com/gpu, nominalQuota: 32}", "nvidia.com/gpu, nominalQuota: 64}")
    status, found, _, _ = setup(sharded, 8, "data: {source: 's3://bucket/data/'}", runtime)
    assert (status, found) == (0, [])  # the stage requests nothing
    manifests = write("m/stage.yaml", STAGE_MANIFESTS)
    cluster = write("m/cluster/kueue.yaml", sharded)
    status, found = check(str(manifests), "--cluster", str(cluster.parent))
    [d] = found
    assert d["code"] == "TS514"
    assert "PodSet node (8 pods) can never be admitted: needs 388 cpu on flavor h100" in d["message"]
    assert (d["file"], d["line"]) == (str(manifests), line_of(manifests, "numNodes: 8")[0])


STAGE_MANIFESTS = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: staged, labels: {trainer.kubeflow.org/framework: torch}}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
          spec:
            template:
              spec:
                nodeSelector: {nvidia.com/gpu.product: H100}
                containers:
                - name: dataset-initializer
                  image: example.com/stage:1
                  resources: {requests: {cpu: 4, memory: 8Gi}}
                  volumeMounts: [{name: initializer, mountPath: /workspace}]
      - name: node
        dependsOn: [{name: dataset-initializer, status: Complete}]
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                nodeSelector: {nvidia.com/gpu.product: H100}
                containers:
                - name: node
                  image: example.com/train:1
                  resources: {requests: {cpu: 48, memory: 384Gi, nvidia.com/gpu: 8}, limits: {nvidia.com/gpu: 8}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: staged-job
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: gpu}
spec:
  runtimeRef: {name: staged}
  suspend: true
  initializer: {dataset: {storageUri: 's3://bucket/data'}}
  trainer:
    numNodes: 8
"""


def test_uncovered_resources(setup) -> None:
    runtime = RUNTIME_SPEC + "  network: {resources: {rdma/ib: 8}}\n"
    _status, found, job, _ = setup(MINIMAL_CLUSTER, 4, "resourcesPerNode: {ephemeralStorage: 100Gi}", runtime)
    [d] = found
    assert (d["code"], d["line"], d["column"]) == ("TS515", 11, 3)  # resourcesPerNode
    assert "100Gi ephemeral-storage, 8 rdma/ib per pod" in d["message"]
    _status, found, job, _ = setup(MINIMAL_CLUSTER, 4, "", runtime)
    assert codes(found) == {("TS515", str(job), 7, 12)}  # from the runtime: at `runtime: torch-h100`


def test_pods_resource_counts_pods(setup) -> None:
    cluster = MINIMAL_CLUSTER.replace("[cpu, memory, nvidia.com/gpu]", "[cpu, memory, nvidia.com/gpu, pods]").replace(
        "      - {name: nvidia.com/gpu, nominalQuota: 32}",
        "      - {name: nvidia.com/gpu, nominalQuota: 32}\n      - {name: pods, nominalQuota: 3}",
    )
    _status, found, _, _ = setup(cluster, 4)
    assert "needs 4 pods on flavor h100" in found[0]["message"]
    _status, found, _, _ = setup(cluster, 3)
    assert found == []


TAINTED = MINIMAL_CLUSTER.replace(
    "  nodeLabels: {nvidia.com/gpu.product: H100}\n",
    "  nodeLabels: {nvidia.com/gpu.product: H100}\n"
    "  nodeTaints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\n",
)


def test_flavor_taints_need_tolerations(setup) -> None:
    _status, found, _job, cluster = setup(TAINTED, 4)
    [d] = found
    assert (d["code"], d["line"], d["column"]) == ("TS516", 7, 12)
    assert "do not tolerate the flavor's taint nvidia.com/gpu=present:NoSchedule" in d["message"]
    assert (d["related"][0]["file"], d["related"][0]["line"]) == (str(cluster), line_of(cluster, "nodeTaints")[0])
    tolerant = RUNTIME_SPEC + "    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
    assert setup(TAINTED, 4, "", tolerant)[1] == []
    by_flavor = TAINTED.replace(
        "  nodeTaints:", "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n  nodeTaints:"
    )
    assert setup(by_flavor, 4)[1] == []


def test_topology_needs_a_tas_flavor_and_tas_flavors_need_topology(setup) -> None:
    _status, found, _, _ = setup(MINIMAL_CLUSTER, 4, "topology: {level: topology.example.com/rack}")
    assert [d["code"] for d in found] == ["TS516"] and "no topologyName" in found[0]["message"]
    tas = (
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
  levels: [{nodeLabel: topology.example.com/rack}, {nodeLabel: kubernetes.io/hostname}]
"""
    )
    assert setup(tas, 4, "topology: {level: topology.example.com/rack}")[1] == []
    assert setup(tas, 4)[1] == []  # every flavor is TAS: un-annotated PodSets use TAS implicitly
    _status, found, job, cluster = setup(tas, 4, "topology: {level: topology.example.com/zone}")
    assert codes(found) == {("TS518", str(job), 11, 21)}
    assert found[0]["related"][0]["line"] == line_of(cluster, "levels:")[0]
    _status, found, job, cluster = setup(
        tas.replace("name: fabric}", "name: other}"), 4, "topology: {level: topology.example.com/rack}"
    )
    assert [d["code"] for d in found] == ["TS518"] and "Topology 'fabric', which does not exist" in found[0]["message"]


def test_pod_larger_than_a_node(setup) -> None:
    shaped = MINIMAL_CLUSTER.replace(
        "  name: h100\n",
        "  name: h100\n  annotations:\n    trainspec.dev/node-allocatable: cpu=64,memory=512Gi,nvidia.com/gpu=8\n",
    )
    assert setup(shaped, 2)[1] == []
    _status, found, job, _cluster = setup(shaped, 1, "resourcesPerNode: {cpu: 96}")
    assert codes(found) == {("TS517", str(job), 11, 3)}
    assert "needs 96 cpu; a node of flavor h100 has 64" in found[0]["message"]


def test_pod_larger_than_the_nominal_quota_is_a_warning_without_node_shape(setup) -> None:
    cluster = (
        COHORT_CLUSTER.replace("BORROW", "32")
        .replace("LEND", "32")
        .replace(
            "{name: nvidia.com/gpu, nominalQuota: 32, borrowingLimit",
            "{name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit",
        )
    )
    status, found, job, _ = setup(cluster, 1)
    assert status == 0
    assert codes(found, errors_only=False) == {("TS517", str(job), 7, 12)}
    assert found[0]["severity"] == "warning" and "only runs on borrowed quota" in found[0]["message"]
