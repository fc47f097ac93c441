"""flavorFungibility through ``trainspec check --cluster``: locations, severities, target versions.

The mechanics are tested in tests/kueue/test_flavor_fungibility.py; here the command's view.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.checkcmd.conftest import check, line_of

CLUSTER = """
apiVersion: v1
kind: Namespace
metadata: {{name: ml}}
---
apiVersion: kueue.x-k8s.io/{api}
kind: ResourceFlavor
metadata: {{name: big}}
---
apiVersion: kueue.x-k8s.io/{api}
kind: ResourceFlavor
metadata: {{name: small}}
---
apiVersion: kueue.x-k8s.io/{api}
kind: ClusterQueue
metadata: {{name: team}}
spec:
  namespaceSelector: {{}}
  {cohort}: pool
  flavorFungibility: {{whenCanBorrow: {borrow}, whenCanPreempt: {preempt}}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: big
      resources: [{{name: cpu, nominalQuota: 0}}]
    - name: small
      resources: [{{name: cpu, nominalQuota: 0}}]
---
apiVersion: kueue.x-k8s.io/{api}
kind: ClusterQueue
metadata: {{name: lender}}
spec:
  namespaceSelector: {{}}
  {cohort}: pool
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: big
      resources: [{{name: cpu, nominalQuota: 8}}]
    - name: small
      resources: [{{name: cpu, nominalQuota: 4}}]
---
apiVersion: kueue.x-k8s.io/{api}
kind: LocalQueue
metadata: {{namespace: ml, name: q}}
spec: {{clusterQueue: team}}
"""

# A runtime whose JobSet has two replicatedJobs: launcher (one 4-cpu pod), node (one 6-cpu pod).
MANIFESTS = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: two-step, labels: {trainer.kubeflow.org/framework: torch}}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: launcher
        template:
          spec:
            template:
              spec:
                containers:
                - {name: launcher, image: example.com/x:1, resources: {requests: {cpu: 4}}}
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers:
                - {name: node, image: example.com/x:1, resources: {requests: {cpu: 6}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: j
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: q}
spec:
  runtimeRef: {name: two-step}
  suspend: true
"""


def _run(
    write: Callable[[str, str], Path], borrow: str, preempt: str = "TryNextFlavor", api: str = "v1beta2", *args: str
) -> tuple[int, list[dict], Path, Path]:
    cohort = "cohortName" if api == "v1beta2" else "cohort"
    cluster = write("cluster/kueue.yaml", CLUSTER.format(api=api, cohort=cohort, borrow=borrow, preempt=preempt))
    manifests = write("m/job.yaml", MANIFESTS)
    status, found = check(str(manifests), "--cluster", str(cluster.parent), *args)
    return status, found, manifests, cluster


def test_a_job_the_assigner_never_places_is_a_warning_at_the_podset(write) -> None:
    status, found, manifests, cluster = _run(write, "TryNextFlavor")
    assert status == 0
    [d] = [d for d in found if d["code"] == "TS514"]
    assert d["severity"] == "warning"
    assert (d["file"], d["line"]) == (str(manifests), line_of(manifests, "runtimeRef: {name: two-step}")[0])
    assert d["message"].endswith("The quota can hold the job (launcher on small, node on big)")
    assert next((r["file"], r["line"]) for r in d["related"]) == (
        str(cluster),
        line_of(cluster, "flavorFungibility")[0],
    )


def test_the_default_policy_admits_it_on_the_second_try(write) -> None:
    status, found, _, _ = _run(write, "MayStopSearch", "MayStopSearch")
    assert status == 0 and [d for d in found if d["code"] == "TS514"] == []


def test_v1beta2_refuses_the_old_words_the_crd_check_says_so(write, crds) -> None:
    _status, found, _, cluster = _run(write, "Borrow", "Preempt")
    line = line_of(cluster, "flavorFungibility")[0]
    assert sorted((d["code"], d["file"], d["line"], d["path"]) for d in found if d["severity"] == "error") == [
        ("TS500", str(cluster), line, "spec.flavorFungibility.whenCanBorrow"),
        ("TS500", str(cluster), line, "spec.flavorFungibility.whenCanPreempt"),
    ]
    assert [d for d in found if d["code"] == "TS514"] == []  # read as MayStopSearch: admitted on the retry


def test_v1beta1_old_words_are_accepted(write, crds) -> None:
    _status, found, _, _ = _run(write, "Borrow", "Preempt", "v1beta1")
    assert [d for d in found if d["severity"] == "error"] == []


def test_kueue_0_14_refuses_may_stop_search(write) -> None:
    _status, found, manifests, _cluster = _run(
        write, "MayStopSearch", "TryNextFlavor", "v1beta1", "--target", "trainer=2.1,kueue=0.14"
    )
    [d] = [d for d in found if d["code"] == "TS510"]
    assert d["severity"] == "error" and "Kueue 0.14's API server rejects ClusterQueue team" in d["message"]
    assert (d["file"], d["line"]) == (str(manifests), line_of(manifests, "kueue.x-k8s.io/queue-name")[0])
    _status, found, _, _ = _run(write, "Borrow", "TryNextFlavor", "v1beta1", "--target", "trainer=2.1,kueue=0.14")
    assert [d for d in found if d["code"] == "TS510"] == []
