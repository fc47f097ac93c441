"""Nothing vanishes: a document that looks like a spec but is not read as one is an error.

Issue 10 item 4a: a spec whose ``apiVersion`` key was misspelled, missing, or of another group
used to be skipped without a word. Documents that really are someone else's (Kubernetes
manifests, values files, kustomizations) are still left alone, but they are counted and
returned (``foreign=``) so ``--verbose`` can list them.
"""

from __future__ import annotations

import textwrap

import pytest

from trainspec.dsl.diagnostics import CODES
from trainspec.dsl.load.loaded import ForeignDoc
from trainspec.dsl.load.spec_sources import load_string

JOB_BODY = """\
metadata: {name: smoke}
spec:
  runtime: trainspec-torch
  image: example.com/train:1
  nodes: 1
"""


def load(text: str) -> tuple[list, list, list[ForeignDoc]]:
    foreign: list[ForeignDoc] = []
    specs, problems = load_string(textwrap.dedent(text), "t.yaml", foreign=foreign)
    return specs, problems, foreign


def errors(problems: list) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.column, d.path) for d in problems if d.is_error]


def only_error(problems: list):
    found = [d for d in problems if d.is_error]
    assert len(found) == 1, found
    assert found[0].code in CODES and found[0].hint
    return found[0]


def test_misspelled_api_version_key_is_an_error_at_the_key() -> None:
    specs, problems, foreign = load("apiVesion: trainspec.dev/v1alpha1\nkind: TrainingJob\n" + JOB_BODY)
    diag = only_error(problems)
    assert (diag.code, diag.line, diag.column, diag.path) == ("TS114", 1, 1, "apiVesion")
    assert "did you mean apiVersion" in diag.hint
    assert specs == [] and foreign == []


@pytest.mark.parametrize("key", ["apiversion", "ApiVersion", "api_version", "apiVerison"])
def test_other_spellings_of_the_api_version_key(key: str) -> None:
    _, problems, _ = load(f"{key}: trainspec.dev/v1alpha1\nkind: TrainingJob\n" + JOB_BODY)
    diag = only_error(problems)
    assert (diag.code, diag.path) == ("TS114", key)


def test_missing_api_version_with_a_trainspec_kind() -> None:
    _, problems, foreign = load("kind: TrainingJob\n" + JOB_BODY)
    diag = only_error(problems)
    assert (diag.code, diag.line, diag.column) == ("TS114", 1, 1)
    assert "apiVersion: trainspec.dev/v1alpha1" in diag.hint
    assert foreign == []


def test_missing_api_version_and_kind_but_a_spec_of_trainspec_fields() -> None:
    _, problems, _ = load(JOB_BODY)
    diag = only_error(problems)
    assert diag.code == "TS114"
    assert "runtime" in diag.message


@pytest.mark.parametrize(
    "api_version",
    ["trainspec.dv/v1alpha1", "trainspec.dev", "Trainspec.dev/v1alpha1", "trainspec.io/v1alpha1", "trainspec/v1alpha1"],
)
def test_api_version_close_to_trainspec_dev_is_a_did_you_mean(api_version: str) -> None:
    _, problems, _ = load(f"apiVersion: {api_version}\nkind: TrainingJob\n" + JOB_BODY)
    diag = only_error(problems)
    assert (diag.code, diag.line, diag.column, diag.path) == ("TS111", 1, 13, "apiVersion")
    assert "trainspec.dev/v1alpha1" in diag.hint


def test_trainspec_kind_under_another_group_is_an_error_at_the_api_version() -> None:
    _, problems, _ = load("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingJob\n" + JOB_BODY)
    diag = only_error(problems)
    assert (diag.code, diag.line, diag.column, diag.path) == ("TS114", 1, 13, "apiVersion")
    assert "trainspec.dev/v1alpha1" in diag.hint


@pytest.mark.parametrize(
    ("kind", "suggested"), [("TrainingJobs", "TrainingJob"), ("Runtim", "Runtime"), ("trainingjob", "TrainingJob")]
)
def test_close_misspellings_of_trainspec_kinds_under_another_group(kind: str, suggested: str) -> None:
    _, problems, _ = load(f"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: {kind}\n" + JOB_BODY)
    diag = only_error(problems)
    assert diag.code == "TS114"
    assert f"kind: {suggested}" in diag.hint


def test_foreign_kind_and_group_with_trainspec_fields_is_still_an_error() -> None:
    _, problems, _ = load("apiVersion: apps/v1\nkind: Deployment\n" + JOB_BODY + "  procsPerNode: 2\n")
    assert only_error(problems).code == "TS114"


FOREIGN = {
    "kubeflow trainjob": """\
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: TrainJob
        metadata: {name: llama}
        spec:
          runtimeRef: {name: torch-distributed}
          trainer: {numNodes: 2, image: x}
        """,
    "pvc": """\
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: ckpt}
        spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 10Gi}}}
        """,
    "kustomization": """\
        resources: [runtimes/a.yaml, ns/job.yaml]
        """,
    "values file": """\
        registry: example.com
        tag: "1.2"
        image: {pullPolicy: Always}
        resources: {limits: {cpu: 1}}
        """,
    "openshift project": """\
        apiVersion: project.openshift.io/v1
        kind: Project
        metadata: {name: team}
        spec: {finalizers: [kubernetes]}
        """,
    "sagemaker trainingjob": """\
        apiVersion: sagemaker.services.k8s.aws/v1alpha1
        kind: TrainingJob
        metadata: {name: xgb}
        spec: {trainingJobName: xgb, roleARN: arn, algorithmSpecification: {trainingImage: x}}
        """,
    "argo appproject": """\
        apiVersion: argoproj.io/v1alpha1
        kind: AppProject
        metadata: {name: team}
        spec: {sourceRepos: ['*']}
        """,
    "deployment with a misspelled key": """\
        apiVesion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec: {replicas: 2}
        """,
}


@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_foreign_documents_are_counted_not_reported(name: str) -> None:
    specs, problems, foreign = load(FOREIGN[name])
    assert specs == [] and problems == []
    assert len(foreign) == 1
    doc = foreign[0]
    assert (doc.file, doc.line, doc.column) == ("t.yaml", 1, 1)


def test_foreign_doc_records_api_version_and_kind() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n" + FOREIGN["kustomization"].strip()
    _, problems, foreign = load(text)
    assert problems == []
    assert foreign == [ForeignDoc("t.yaml", 1, 1, "v1", "ConfigMap"), ForeignDoc("t.yaml", 5, 1, None, None)]
    with pytest.raises(AttributeError):
        foreign[0].kind = "x"  # frozen


def test_one_bad_document_does_not_hide_the_others() -> None:
    text = "kind: TrainingJob\n" + JOB_BODY + "---\napiVersion: trainspec.dev/v1alpha1\nkind: TrainingJob\n" + JOB_BODY
    specs, problems, _ = load(text)
    assert [s.name for s in specs] == ["smoke"]
    assert [d.code for d in problems if d.is_error] == ["TS114"]


def test_misspelled_kind_key_under_trainspec_api_version() -> None:
    _, problems, _ = load("apiVersion: trainspec.dev/v1alpha1\nkimd: TrainingJob\n" + JOB_BODY)
    diag = only_error(problems)
    assert (diag.code, diag.line, diag.column, diag.path) == ("TS110", 2, 1, "kimd")
    assert "did you mean kind" in diag.hint


def test_valid_documents_are_unchanged() -> None:
    specs, problems, foreign = load("apiVersion: trainspec.dev/v1alpha1\nkind: TrainingJob\n" + JOB_BODY)
    assert [s.kind for s in specs] == ["TrainingJob"] and problems == [] and foreign == []
