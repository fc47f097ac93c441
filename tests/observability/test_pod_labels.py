"""Every trainer pod carries the labels that join GPU and job metrics to the job, on every engine,
and the rank-0 pod is selected by the labels its engine's controllers add."""

from __future__ import annotations

from typing import Any

import pytest

from tests.observability.helpers import compile_specs, objects
from trainspec.k8s.wellknown import (
    COMPLETION_INDEX_LABEL,
    JOB_INDEX_LABEL,
    JOB_LABEL,
    JOB_NAMESPACE_LABEL,
    RAY_NODE_TYPE_LABEL,
    REPLICA_INDEX_LABEL,
    REPLICA_TYPE_LABEL,
    REPLICATED_JOB_LABEL,
    RUNTIME_LABEL,
    TEAM_LABEL,
)

EXPECTED = {JOB_LABEL: "demo", JOB_NAMESPACE_LABEL: "team-a", TEAM_LABEL: "team-a", RUNTIME_LABEL: "rt"}


def _pod_templates(node: Any, path: str = "") -> list[tuple[str, dict]]:
    """(path, pod template) of every pod template in a compiled object (a template whose spec has containers)."""
    found: list[tuple[str, dict]] = []
    if isinstance(node, dict):
        spec = node.get("spec")
        if isinstance(spec, dict) and "containers" in spec and "metadata" in node | {"metadata": None}:
            found.append((path, node))
        for key, value in node.items():
            found.extend(_pod_templates(value, f"{path}.{key}"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_pod_templates(value, f"{path}[{index}]"))
    return found


def _trainer_pod_labels(result: Any) -> dict[str, dict[str, str]]:
    """Labels of every pod template that runs training code (runtime objects excluded: the job's
    patch carries them on Trainer), by path."""
    out: dict[str, dict[str, str]] = {}
    for obj in objects(result):
        if obj["kind"] in ("ClusterTrainingRuntime", "TrainingRuntime", "PersistentVolumeClaim"):
            continue
        if obj["kind"] == "TrainJob":
            for rjob in obj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]:
                out[rjob["name"]] = rjob["template"]["spec"]["template"]["metadata"]["labels"]
            continue
        for path, template in _pod_templates(obj["spec"]):
            if "headGroupSpec" in path:
                continue  # the Ray head schedules; it runs no training code
            out[path] = (template.get("metadata") or {}).get("labels") or {}
    return out


ENGINES = [
    ("torch", "trainer=2.3", 1),
    ("jax", "trainer=2.3", 1),
    ("mpi", "trainer=2.3", 2),
    ("deepspeed", "trainer=2.2,kueue=0.17", 2),
    ("torch", "training-operator", 2),
    ("jax", "training-operator", 1),
    ("mpi", "training-operator", 2),
    ("torch", "ray", 1),
]


@pytest.mark.parametrize(("framework", "target", "pods"), ENGINES)
def test_every_trainer_pod_carries_the_job_labels(tmp_path, framework: str, target: str, pods: int) -> None:
    result = compile_specs(tmp_path, framework=framework, target=target)
    labels = _trainer_pod_labels(result)
    assert len(labels) == pods, labels
    for where, found in labels.items():
        assert {k: found.get(k) for k in EXPECTED} == EXPECTED, where


def test_trainer_21_puts_the_labels_in_pod_template_overrides(tmp_path) -> None:
    result = compile_specs(tmp_path, target="trainer=2.1,kueue=0.16")
    (trainjob,) = [o for o in objects(result) if o["kind"] == "TrainJob"]
    (override,) = trainjob["spec"]["podTemplateOverrides"]
    assert {k: override["metadata"]["labels"][k] for k in EXPECTED} == EXPECTED


def test_team_comes_from_the_job_then_the_runtime_then_the_namespace(tmp_path) -> None:
    def team(**blocks: dict) -> str:
        (labels,) = _trainer_pod_labels(compile_specs(tmp_path, **blocks)).values()
        return labels[TEAM_LABEL]

    assert team() == "team-a"
    assert team(runtime={"observability": {"team": "vision"}}) == "vision"
    assert team(runtime={"observability": {"team": "vision"}}, job={"observability": {"team": "nlp"}}) == "nlp"


def test_a_job_cannot_relabel_itself_as_another_job(tmp_path) -> None:
    result = compile_specs(tmp_path, job={"podLabels": {JOB_LABEL: "someone-else", "app": "x"}})
    (labels,) = _trainer_pod_labels(result).values()
    assert labels[JOB_LABEL] == "demo" and labels["app"] == "x"
    (warning,) = [d for d in result.diagnostics if d.code == "TS436"]
    assert warning.severity.value == "warning" and warning.path == f"spec.podLabels.{JOB_LABEL}"
    assert warning.line is not None


@pytest.mark.parametrize(
    ("framework", "target", "selector", "exact"),
    [
        (
            "torch",
            "trainer=2.3",
            {REPLICATED_JOB_LABEL: "node", JOB_INDEX_LABEL: "0", COMPLETION_INDEX_LABEL: "0"},
            True,
        ),
        ("jax", "trainer=2.3", {REPLICATED_JOB_LABEL: "node", JOB_INDEX_LABEL: "0", COMPLETION_INDEX_LABEL: "0"}, True),
        ("torch", "training-operator", {REPLICA_TYPE_LABEL: "master"}, True),
        ("jax", "training-operator", {REPLICA_TYPE_LABEL: "worker", REPLICA_INDEX_LABEL: "0"}, True),
        ("mpi", "trainer=2.3", {}, False),
        ("mpi", "training-operator", {}, False),
        ("torch", "ray", {RAY_NODE_TYPE_LABEL: "worker"}, False),
    ],
)
def test_the_rank_zero_selector_uses_the_engines_labels(tmp_path, framework, target, selector, exact) -> None:
    from trainspec.compiler.lower.dialects import dialect_for

    result = compile_specs(tmp_path, framework=framework, target=target)
    (plan,) = result.plans
    found, is_exact = dialect_for(None, plan.engine).rank_zero_selector(plan)
    assert found == {JOB_LABEL: "demo", **selector} and is_exact is exact


def test_an_elastic_pytorchjob_has_no_rank_zero_pod(tmp_path) -> None:
    from trainspec.compiler.lower.dialects import dialect_for

    result = compile_specs(tmp_path, target="training-operator", job={"nodes": {"min": 1, "max": 3}})
    (plan,) = result.plans
    assert dialect_for(None, plan.engine).rank_zero_selector(plan) == ({JOB_LABEL: "demo"}, False)
