"""Admission-webhook rules for TrainingRuntime / ClusterTrainingRuntime and for JobSet specs.

These rules live in Go webhooks, not in the CRDs, so the API server's schema and CEL checks
do not cover them. Re-implemented here:

* runtimes (Trainer webhook): every replicatedJob labelled with the ancestor label runs with
  ``replicas: 1`` and has the container the TrainJob fields are injected into; the label
  belongs on the Job template, not the pod template;
* trainspec policy for runtimes: the ``trainer.kubeflow.org/framework`` label and an explicit
  ``spec.mlPolicy`` are required (the SDK needs both), and ``webhook-validation: disabled`` is
  refused (it would switch the rules above off on a cluster);
* JobSet webhook, applied to a runtime's JobSet template and to plain JobSets: ``dependsOn``
  only points at earlier replicatedJobs and never sits on the first; target names in
  ``successPolicy``, ``failurePolicy`` and ``coordinator`` exist; every ``volumeClaimPolicies``
  template is mounted somewhere and does not clash with a pod volume; the pod-name budget.

Everything is reported as TS503 with a path inside the manifest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.k8s.wellknown import (
    ANCESTOR_DATASET, ANCESTOR_LABEL, ANCESTOR_MODEL, ANCESTOR_TRAINER, FRAMEWORK_LABEL, NAME_MAX, NODE,
    POD_RANDOM_SUFFIX, WEBHOOK_VALIDATION_LABEL,
)

from ._paths import join_path

#: ancestor label value -> the container that must exist in that replicatedJob.
ANCESTOR_CONTAINERS = {
    ANCESTOR_TRAINER: NODE,
    ANCESTOR_DATASET: ANCESTOR_DATASET,
    ANCESTOR_MODEL: ANCESTOR_MODEL,
}
#: JobSet pod names are <jobset>-<rjob>-<jobIndex>-<podIndex>-<5 random characters>.
POD_SUFFIX = POD_RANDOM_SUFFIX
MAX_NAME = NAME_MAX


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
    return Diagnostic(code="TS503", message=message, path=path, file=file, severity=severity, hint=hint)


# -- JobSet spec rules -------------------------------------------------------------------------


def check_jobset_spec(spec: Mapping[str, Any], base: str, file: str | None) -> Iterator[Diagnostic]:
    """JobSet webhook rules that depend only on the spec (``base`` = path of the spec)."""
    rjobs = rjobs_of(spec)
    names = [str(r.get("name")) for r in rjobs]
    for index, rjob in enumerate(rjobs):
        for dep_index, dep in enumerate(_list(rjob.get("dependsOn"))):
            target = _dict(dep).get("name")
            path = join_path(base, "replicatedJobs", index, "dependsOn", dep_index, "name")
            if index == 0:
                yield _error(
                    f"dependsOn is not allowed on the first replicatedJob ({names[0]!r})",
                    join_path(base, "replicatedJobs", 0, "dependsOn"),
                    file,
                )
                break
            if target not in names:
                yield _error(
                    f"dependsOn references unknown replicatedJob {target!r}",
                    path,
                    file,
                    hint=f"replicatedJobs: {', '.join(names)}",
                )
            elif names.index(str(target)) >= index:
                yield _error(
                    f"dependsOn must reference an earlier replicatedJob: {target!r} is not "
                    f"before {names[index]!r}",
                    path,
                    file,
                )

    def targets(values: Any, path: str, what: str) -> Iterator[Diagnostic]:
        for i, target in enumerate(_list(values)):
            if target not in names:
                yield _error(
                    f"{what} references unknown replicatedJob {target!r}",
                    join_path(path, i),
                    file,
                    hint=f"replicatedJobs: {', '.join(names)}",
                )

    yield from targets(
        _dict(spec.get("successPolicy")).get("targetReplicatedJobs"),
        join_path(base, "successPolicy", "targetReplicatedJobs"),
        "successPolicy",
    )
    for i, rule in enumerate(_list(_dict(spec.get("failurePolicy")).get("rules"))):
        yield from targets(
            _dict(rule).get("targetReplicatedJobs"),
            join_path(base, "failurePolicy", "rules", i, "targetReplicatedJobs"),
            "failurePolicy rule",
        )
    coordinator = _dict(spec.get("coordinator")).get("replicatedJob")
    if coordinator is not None and coordinator not in names:
        yield _error(
            f"coordinator references unknown replicatedJob {coordinator!r}",
            join_path(base, "coordinator", "replicatedJob"),
            file,
        )

    yield from _check_claim_policies(spec, rjobs, base, file)


def _check_claim_policies(
    spec: Mapping[str, Any], rjobs: list[dict[str, Any]], base: str, file: str | None
) -> Iterator[Diagnostic]:
    mounted: set[str] = set()
    volumes: dict[str, int] = {}
    for index, rjob in enumerate(rjobs):
        pod = pod_spec(rjob)
        for field in ("containers", "initContainers"):
            for container in _list(pod.get(field)):
                mounted.update(str(_dict(m).get("name")) for m in _list(_dict(container).get("volumeMounts")))
        for volume in _list(pod.get("volumes")):
            volumes.setdefault(str(_dict(volume).get("name")), index)
    for p, policy in enumerate(_list(spec.get("volumeClaimPolicies"))):
        for t, template in enumerate(_list(_dict(policy).get("templates"))):
            claim = _dict(_dict(template).get("metadata")).get("name")
            path = join_path(base, "volumeClaimPolicies", p, "templates", t, "metadata", "name")
            if claim is None:
                continue
            if claim not in mounted:
                yield _error(
                    f"volumeClaimPolicies template {claim!r} is not mounted by any container", path, file
                )
            if claim in volumes:
                yield _error(
                    f"volumeClaimPolicies template {claim!r} clashes with a pod volume of the same name "
                    f"in replicatedJob {rjobs[volumes[claim]].get('name')!r}",
                    path,
                    file,
                )


def pod_name_problems(
    jobset_name: str,
    rjobs: list[dict[str, Any]],
    pods_of: Callable[[dict[str, Any]], int],
) -> Iterator[tuple[int, str, str]]:
    """(rjob index, longest pod name, message) for every replicatedJob over the 63 budget."""
    for index, rjob in enumerate(rjobs):
        replicas = rjob.get("replicas", 1)
        pods = pods_of(rjob)
        if not isinstance(replicas, int) or replicas < 1 or pods < 1:
            continue
        pod_name = f"{jobset_name}-{rjob.get('name')}-{replicas - 1}-{pods - 1}{POD_SUFFIX}"
        if len(pod_name) > MAX_NAME:
            room = MAX_NAME - (len(pod_name) - len(jobset_name))
            yield (
                index,
                pod_name,
                (
                    f"JobSet pod-name rule: pod name {pod_name!r} of replicatedJob {rjob.get('name')!r} is "
                    f"{len(pod_name)} characters, the maximum is {MAX_NAME}; the name may have at most "
                    f"{max(room, 0)} characters here"
                ),
            )


def claim_name_problems(jobset_name: str, spec: Mapping[str, Any]) -> Iterator[str]:
    """Messages for PVCs ``<claim>-<jobset>`` from volumeClaimPolicies that exceed 63 characters."""
    for policy in _list(spec.get("volumeClaimPolicies")):
        for template in _list(_dict(policy).get("templates")):
            claim = _dict(_dict(template).get("metadata")).get("name")
            if claim and len(f"{claim}-{jobset_name}") > MAX_NAME:
                pvc = f"{claim}-{jobset_name}"
                yield (
                    f"JobSet volumeClaimPolicies rule: PVC name {pvc!r} is {len(pvc)} characters, "
                    f"the maximum is {MAX_NAME}"
                )


def check_jobset(jobset: Mapping[str, Any], file: str | None) -> Iterator[Diagnostic]:
    """JobSet webhook rules for a plain ``JobSet`` manifest."""
    spec = _dict(jobset.get("spec"))
    yield from check_jobset_spec(spec, "spec", file)
    name = _dict(jobset.get("metadata")).get("name")
    if isinstance(name, str):

        def parallelism(rjob: dict[str, Any]) -> int:
            value = _dict(_dict(rjob.get("template")).get("spec")).get("parallelism", 1)
            return value if isinstance(value, int) else 1

        for _index, _pod, message in pod_name_problems(name, rjobs_of(spec), parallelism):
            yield _error(message, "metadata.name", file)
        for message in claim_name_problems(name, spec):
            yield _error(message, "metadata.name", file)


# -- runtime rules -----------------------------------------------------------------------------


def check_runtime(
    runtime: Mapping[str, Any], file: str | None, *, policy: bool = True
) -> Iterator[Diagnostic]:
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
        pod_labels = _dict(
            _dict(_dict(_dict(rjob.get("template")).get("spec")).get("template")).get("metadata")
        ).get("labels")
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
    yield from check_jobset_spec(jobset_spec, base, file)
