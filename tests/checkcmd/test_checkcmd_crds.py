"""CRD validation for users: manifests read from files, compiled specs mapped back to their
lines, any kind with a CRD (Kueue objects too), and the Trainer-version mismatch warning."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.checkcmd.conftest import MINIMAL_CLUSTER, RUNTIME_SPEC, check, codes, job_spec, line_of

V21_TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: old-style
  namespace: team-a
spec:
  runtimeRef:
    name: torch-distributed
  labels:
    team: nlp
  trainer:
    numNodes: 2
    numProcPerNode: auto
  podTemplateOverrides:
  - targetJobs:
    - name: node
    spec:
      nodeSelector: {nvidia.com/gpu.product: H100}
"""


def test_v21_trainjob_fails_the_v23_crds_at_the_renamed_fields(write, crds: Path) -> None:
    manifest = write("tj.yaml", V21_TRAINJOB)
    status, found = check(str(manifest), "--crds", str(crds))
    assert status == 1
    schema = {(d["path"], d["line"], d["column"]) for d in found if d["code"] == "TS500"}
    assert schema == {
        ("spec.labels", 9, 3),
        ("spec.podTemplateOverrides", 14, 3),
        ("spec.trainer.numProcPerNode", 13, 21),
    }
    assert all(d["file"] == str(manifest) for d in found)


def test_without_crds_the_shipped_crds_are_used(write) -> None:
    """No --crds and no $TRAINSPEC_CRDS_DIR: the CRDs shipped for the default target judge it."""
    manifest = write("tj.yaml", V21_TRAINJOB)
    _, found = check(str(manifest))
    schema = {(d["path"], d["line"], d["column"]) for d in found if d["code"] == "TS500"}
    assert schema == {
        ("spec.labels", 9, 3),
        ("spec.podTemplateOverrides", 14, 3),
        ("spec.trainer.numProcPerNode", 13, 21),
    }


def test_crds_from_the_environment(write, crds: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSPEC_CRDS_DIR", str(crds))
    _, found = check(str(write("tj.yaml", V21_TRAINJOB)))
    assert "TS500" in {d["code"] for d in found}


def test_kueue_objects_are_checked_against_their_crds(write, crds: Path) -> None:
    cluster = write(
        "cluster/kueue.yaml",
        MINIMAL_CLUSTER.replace(
            '  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n',
            '  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}\n  cohort: pool\n',
        ).replace(
            "{name: nvidia.com/gpu, nominalQuota: 32}", "{name: nvidia.com/gpu, nominalQuota: 32, borrowingLimit: 8}"
        ),
    )
    write("specs/runtime.yaml", RUNTIME_SPEC)
    job = write("specs/job.yaml", job_spec(2))
    status, found = check(str(job.parent), "--cluster", str(cluster.parent), "--crds", str(crds))
    assert status == 1
    assert ("TS500", str(cluster), *line_of(cluster, "  cohort: pool", "cohort")) in codes(found)  # v1beta1 spelling
    [cel] = [d for d in found if d["code"] == "TS501"]  # borrowingLimit needs a cohortName
    assert (cel["file"], cel["path"]) == (str(cluster), "spec")
    assert cel["line"] == line_of(cluster, "kind: ClusterQueue")[0] + 3  # the `spec:` key


FAKE_TRAINJOB_CRD = r"""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: trainjobs.trainer.kubeflow.org}
spec:
  group: trainer.kubeflow.org
  names: {kind: TrainJob, plural: trainjobs}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - rule: "self.metadata.name.startsWith('team-')"
          message: TrainJob names start with the team
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            properties:
              runtimePatches: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
              trainer:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                x-kubernetes-validations:
                - rule: "!has(self.numNodes) || self.numNodes <= 4"
                  fieldPath: .numNodes
                  message: this cluster runs at most 4 nodes a job
                properties:
                  numNodes: {type: integer, maximum: 6}
                  image: {type: string, pattern: '^registry\.example\.com/'}
"""


def test_compiled_findings_point_at_the_job_spec(write: Callable[[str, str], Path]) -> None:
    """Any CRD given is used; findings on a compiled TrainJob land on the spec's lines."""
    crd_dir = write("crds/trainjob.yaml", FAKE_TRAINJOB_CRD).parent
    write("specs/runtime.yaml", RUNTIME_SPEC)
    job = write("specs/job.yaml", job_spec(8, extra="image: docker.io/library/train:1"))
    status, found = check(str(job.parent), "--crds", str(crd_dir))
    assert status == 1
    located = {(d["code"], d["file"], d["line"], d["column"], d["path"]) for d in found if d["severity"] == "error"}
    assert located == {
        ("TS500", str(job), 9, 10, "spec.nodes"),  # maximum 6
        ("TS501", str(job), 9, 10, "spec.nodes"),  # the CEL rule's fieldPath
        ("TS500", str(job), 11, 10, "spec.image"),  # the pattern
        ("TS501", str(job), 1, 1, ""),  # a rule on the whole object: the document start
    }
    for d in found:
        if d["severity"] == "error":
            assert re.search(
                r"\[compiled TrainJob team-a/llm-pretrain-[a-z2-7]{6} \(team-a/llm-pretrain\.yaml\)", d["message"]
            )
    assert any("field spec.trainer.numNodes]" in d["message"] for d in found)
    # The runtime has no CRD in that folder: a warning at the runtime spec.
    [warning] = [d for d in found if d["code"] == "TS504"]
    assert warning["file"].endswith("runtime.yaml") and warning["line"] == 1


def test_unknown_kinds_are_reported_once(write, crds: Path) -> None:
    manifest = write(
        "deploy.yaml",
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec: {}
        """,
    )
    status, found = check(str(manifest), "--crds", str(crds))
    assert status == 0
    assert [(d["code"], d["severity"], d["line"]) for d in found] == [("TS504", "warning", 1)]


def test_trainer_21_target_against_22_crds_warns_instead_of_failing(write, crds: Path) -> None:
    write("specs/runtime.yaml", RUNTIME_SPEC)
    job = write("specs/job.yaml", job_spec(2, extra="topology: {level: topology.example.com/rack}"))
    status, found = check(str(job.parent), "--crds", str(crds), "--target", "trainer=2.1,kueue=0.16")
    assert status == 0
    [d] = found
    assert (d["code"], d["severity"]) == ("TS524", "warning")
    assert d["file"].endswith("trainer.kubeflow.org_trainjobs.yaml")
    assert "for Trainer 2.2+ but the target is trainer=2.1,kueue=0.16" in d["message"]
