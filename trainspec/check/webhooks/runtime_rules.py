"""Admission-webhook rules for TrainingRuntime / ClusterTrainingRuntime.

These rules live in Go webhooks, not in the CRDs, so the API server's schema and CEL checks
do not cover them. Re-implemented here:

* runtimes (Trainer webhook): every replicatedJob labelled with the ancestor label runs with
  ``replicas: 1`` and has the container the TrainJob fields are injected into; the label
  belongs on the Job template, not the pod template;
* the runtime plugins' rules a runtime breaks by itself (envInjection targets, the Flux
  installer, Volcano's queue annotation: Trainer's TrainJob webhook rejects every TrainJob
  using it) and the deprecation warning, from :mod:`.trainer_rules`;
* trainspec policy for runtimes: the ``trainer.kubeflow.org/framework`` label and an explicit
  ``spec.mlPolicy`` are required (the SDK needs both), and ``webhook-validation: disabled`` is
  refused (it would switch the rules above off on a cluster);
* the JobSet webhook's rules on a runtime's JobSet template and on plain JobSets are in
  :mod:`.jobset_rules` / :mod:`.jobset_trainer` (``check_webhooks`` runs both).

Everything is reported as TS503 with a path inside the manifest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from trainspec.check._paths import join_path
from trainspec.check.webhooks.trainer_rules import runtime_plugin_findings
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.k8s.wellknown import (
    ANCESTOR_DATASET,
    ANCESTOR_LABEL,
    ANCESTOR_MODEL,
    ANCESTOR_TRAINER,
    FRAMEWORK_LABEL,
    NODE,
    WEBHOOK_VALIDATION_LABEL,
)

#: ancestor label value -> the container that must exist in that replicatedJob.
ANCESTOR_CONTAINERS = {
    ANCESTOR_TRAINER: NODE,
    ANCESTOR_DATASET: ANCESTOR_DATASET,
    ANCESTOR_MODEL: ANCESTOR_MODEL,
}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def rjobs_of(jobset_spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The replicatedJobs of a JobSet spec (malformed entries dropped)."""
    return [r for r in _list(jobset_spec.get("replicatedJobs")) if isinstance(r, dict)]


def pod_spec(rjob: Mapping[str, Any]) -> dict[str, Any]:
    return _dict(_dict(_dict(_dict(rjob.get("template")).get("spec")).get("template")).get("spec"))


def container_names(rjob: Mapping[str, Any], field: str = "containers") -> list[str]:
    return [str(c.get("name")) for c in _list(pod_spec(rjob).get(field)) if isinstance(c, dict)]


def ancestor_of(rjob: Mapping[str, Any]) -> str | None:
    labels = _dict(_dict(_dict(rjob.get("template")).get("metadata")).get("labels"))
    value = labels.get(ANCESTOR_LABEL)
    return str(value) if value is not None else None


def _error(
    message: str, path: str, file: str | None, severity: Severity = Severity.ERROR, hint: str | None = None
) -> Diagnostic:
    return Diagnostic(code=codes.WEBHOOK_RULE, message=message, path=path, file=file, severity=severity, hint=hint)


# -- runtime rules -----------------------------------------------------------------------------


def check_runtime(runtime: Mapping[str, Any], file: str | None, *, policy: bool = True) -> Iterator[Diagnostic]:
    """Trainer runtime webhook rules (+ trainspec policy) for one (Cluster)TrainingRuntime."""
    labels = _dict(_dict(runtime.get("metadata")).get("labels"))
    spec = _dict(runtime.get("spec"))
    if policy:
        if FRAMEWORK_LABEL not in labels:
            yield _error(
                f"trainspec policy: runtime has no label {FRAMEWORK_LABEL!r}; the Kubeflow SDK skips "
                "runtimes without it",
                "metadata.labels",
                file,
            )
        if str(labels.get(WEBHOOK_VALIDATION_LABEL, "")).lower() == "disabled":
            yield _error(
                f"trainspec policy: label {WEBHOOK_VALIDATION_LABEL}=disabled turns off the Trainer "
                "webhook's runtime checks; generated runtimes must not carry it",
                join_path("metadata.labels", WEBHOOK_VALIDATION_LABEL),
                file,
            )
        if not isinstance(spec.get("mlPolicy"), dict):
            yield _error(
                "trainspec policy: spec.mlPolicy must be set explicitly (at least {numNodes: 1}); "
                "the Kubeflow SDK fails to list runtimes without it",
                "spec.mlPolicy",
                file,
            )

    jobset_spec = _dict(_dict(spec.get("template")).get("spec"))
    base = "spec.template.spec"
    for index, rjob in enumerate(rjobs_of(jobset_spec)):
        rpath = join_path(base, "replicatedJobs", index)
        pod_labels = _dict(_dict(_dict(_dict(rjob.get("template")).get("spec")).get("template")).get("metadata")).get(
            "labels"
        )
        if ANCESTOR_LABEL in _dict(pod_labels):
            yield _error(
                f"label {ANCESTOR_LABEL!r} is on the pod template; it must be on the Job template "
                "(replicatedJobs[].template.metadata.labels) or the TrainJob is not injected",
                join_path(rpath, "template", "spec", "template", "metadata", "labels", ANCESTOR_LABEL),
                file,
            )
        step = ancestor_of(rjob)
        if step is None:
            continue
        label_path = join_path(rpath, "template", "metadata", "labels", ANCESTOR_LABEL)
        if step not in ANCESTOR_CONTAINERS:
            yield _error(
                f"unknown {ANCESTOR_LABEL} value {step!r}; expected one of {', '.join(ANCESTOR_CONTAINERS)}",
                label_path,
                file,
                Severity.WARNING,
            )
            continue
        replicas = rjob.get("replicas", 1)
        # A non-integer is a schema error (TS500) already.
        if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas != 1:
            yield _error(
                f"replicatedJob {rjob.get('name')!r} with {ANCESTOR_LABEL}={step} must have replicas 1, "
                f"got {replicas!r} (maximum 1)",
                join_path(rpath, "replicas"),
                file,
            )
        required = ANCESTOR_CONTAINERS[step]
        if required not in container_names(rjob):
            yield _error(
                f"replicatedJob {rjob.get('name')!r} with {ANCESTOR_LABEL}={step} must have a container "
                f"named {required!r}, found {container_names(rjob)}",
                join_path(rpath, "template", "spec", "template", "spec", "containers"),
                file,
            )
    for finding in runtime_plugin_findings(runtime):
        yield _error(finding.message, finding.path, file, finding.severity, finding.hint)
