"""``trainspec submit``: every object ``compile`` emits for each Trainer job, server-side applied.

What belongs to a job, the order and what is never applied unless asked:
:mod:`trainspec.kube.submit_plan`. In short: the runtime first, only with ``with_runtimes``
(cluster-scoped, the object RBAC most often refuses, so a refusal leaves nothing half-applied;
Trainer's webhook refuses a TrainJob whose runtime is missing, so it precedes the job anyway);
then per job its namespaced prerequisites (ServiceAccount, Role, RoleBinding, ConfigMaps,
PersistentVolumeClaims), the TrainJob, and its observability objects (PodMonitor, dashboard
ConfigMap); then its earlier runs are deleted.

Before anything is applied every object is read, so these stop or skip early: a runtime missing
from the cluster (TS712); a kind the cluster does not serve (TS721 for what the job needs, a
TS730 warning for an observability object: it is skipped and the job is submitted); an object
being deleted (TS722: "unchanged" would be a lie, it is about to be gone). Each apply uses field
manager ``trainspec`` and ``fieldValidation=Strict``; what it did is read from the object before
and after: created, configured (the resourceVersion moved) or unchanged. A failure on an
observability object does not stop the others (the job is already submitted); the command then
ends with its error, as ``kubectl apply`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.k8s import wellknown as W
from trainspec.kube import resources as R
from trainspec.kube.session import CommandError, api_diagnostic
from trainspec.kube.submit_plan import (
    OBSERVABILITY,
    RUNTIME_KINDS,
    SHARED,
    JobObjects,
    claim_names,
    describe,
    key_of,
    select_jobs,
)

__all__ = [
    "RUNTIME_KINDS",
    "JobObjects",
    "Outcome",
    "SubmitIncomplete",
    "apply_one",
    "check_runtime",
    "claim_names",
    "describe",
    "retire_old_runs",
    "select_jobs",
    "submit",
]

#: What a cluster needs before it serves an observability kind, and how a job stops asking for it.
OPERATORS = {
    "PodMonitor": (
        "the Prometheus Operator (e.g. the kube-prometheus-stack Helm chart)",
        "set spec.observability.podMonitor: false on the job (or its runtime) to stop emitting it",
    )
}


@dataclass
class Outcome:
    """What submit did with one object: ``created``, ``configured``, ``unchanged``, ``skipped``
    (``why`` says why, ``diagnostic`` is the warning), ``deleted`` or ``would be deleted`` (an
    earlier run of the job)."""

    target: str  # kubectl's kind.group/namespace/name
    action: str
    why: str = ""
    dry_run: bool = False
    diagnostic: Diagnostic | None = None

    def line(self) -> str:
        """The line ``trainspec submit`` prints for it."""
        text = f"{self.target} {self.action}" + (f": {self.why}" if self.why else "")
        return text + (" (server dry run)" if self.dry_run else "")


class SubmitIncomplete(CommandError):
    """The job was submitted, but objects applied after it were refused; ``outcomes`` is what was done."""

    def __init__(self, outcomes: list[Outcome], *diagnostics: Diagnostic) -> None:
        super().__init__(*diagnostics)
        self.outcomes = outcomes


@dataclass
class _Step:
    """One object to apply, as read before anything is applied."""

    job: JobObjects
    stage: str
    obj: dict[str, Any]
    before: dict[str, Any] | None = None
    skip: Outcome | None = None
    sources: Any = field(default=None, repr=False)


def _where(job: JobObjects) -> dict[str, Any]:
    return {"file": job.file, "line": job.line, "column": job.column}


def apply_one(
    kube: Any,
    obj: dict[str, Any],
    *,
    dry_run: bool,
    force: bool,
    job: JobObjects,
    before: Any = ...,
    sources: Any = None,
) -> Outcome:
    """Apply one object: what happened (created / configured / unchanged). ``before``: the object
    as read before (``...``: read it now)."""
    resource = R.resource_of(obj)
    meta = obj["metadata"]
    try:
        if before is ...:
            before = kube.get(resource, meta.get("namespace"), meta["name"])
        after = kube.apply(obj, force=force, dry_run=dry_run)
    except Exception as exc:
        raise CommandError(
            api_diagnostic(exc, kube, what=f"apply {describe(obj)}", sources=sources, **_where(job))
        ) from None
    if before is None:
        verb = "created"
    elif (before.get("metadata") or {}).get("resourceVersion") == ((after or {}).get("metadata") or {}).get(
        "resourceVersion"
    ):
        verb = "unchanged"
    else:
        verb = "configured"
    return Outcome(describe(obj), verb, dry_run=dry_run)


def check_runtime(kube: Any, job: JobObjects, *, with_runtimes: bool, dry_run: bool, force: bool) -> Outcome | None:
    """Read the runtime the job needs; apply it only ``with_runtimes`` (then: what happened)."""
    ref = job.trainjob["spec"].get("runtimeRef") or {}
    kind, name = ref.get("kind") or "ClusterTrainingRuntime", str(ref.get("name") or "")
    resource = R.TRAINING_RUNTIME if kind == "TrainingRuntime" else R.CLUSTER_TRAINING_RUNTIME
    ns = job.namespace if kind == "TrainingRuntime" else None
    if with_runtimes and job.runtime is not None:
        return apply_one(kube, job.runtime, dry_run=dry_run, force=force, job=job)
    try:
        from trainspec.kube.errors import get_or_none

        # Not kube.get: without Trainer's CRDs the runtime's 404 is "not served" (TS721), not "no runtime".
        found = get_or_none(kube, resource, ns, name)
    except Exception as exc:
        raise CommandError(api_diagnostic(exc, kube, what=f"read {kind} {name}", **_where(job))) from None
    if found is not None:
        return None
    place = f" in namespace {job.namespace}" if ns else ""
    if job.runtime is not None:
        hint = (
            f"trainspec compiles {kind} {name} from the specs: rerun with --with-runtimes to apply it, or apply "
            "the compiled runtimes yourself (trainspec compile SPEC -o DIR; kubectl apply -f DIR/runtimes/)"
        )
    else:
        hint = (
            f"{name} is not a runtime trainspec compiles: install Kubeflow Trainer's runtimes in the cluster, "
            "or point the job at a runtime that exists (kubectl get clustertrainingruntimes)"
        )
    raise CommandError(
        Diagnostic(
            codes.CLUSTER_RUNTIME_MISSING,
            f"TrainJob {job.namespace}/{job.name} needs {kind} {name!r}, which does "
            f"not exist in the cluster{place}; submit never creates or changes runtimes "
            "unless asked (--with-runtimes)",
            path="spec.runtime",
            hint=hint,
            **_where(job),
        )
    )


def _shared(step: _Step) -> Outcome:
    """TS731: a cluster-scoped or shared object of the job's output, which submit never applies."""
    what = describe(step.obj)
    why = "cluster-scoped or shared, submit never creates or changes it; a cluster admin applies it (kubectl apply)"
    warning = Diagnostic(
        codes.SHARED_OBJECT_SKIPPED,
        f"{what} not applied: {why}",
        severity=Severity.WARNING,
        hint="trainspec compile SPEC -o DIR writes it; kubectl apply -f applies it",
        **_where(step.job),
    )
    return Outcome(what, "skipped", why, diagnostic=warning)


def _unserved(step: _Step) -> Outcome:
    """TS730: an observability object whose kind the cluster does not serve: skipped, the job goes on."""
    what, kind, resource = describe(step.obj), str(step.obj.get("kind")), R.resource_of(step.obj)
    operator, stop = OPERATORS.get(kind, ("the operator that defines it", "drop it from the spec"))
    served = f"the cluster does not serve {kind} ({resource.api_version})"
    why = f"{served}; the job is submitted without it"
    crd = f"{resource.plural}.{resource.api_version.rpartition('/')[0]}"
    warning = Diagnostic(
        codes.KIND_NOT_INSTALLED,
        f"{what} not applied: {served}, its CustomResourceDefinition {crd} is not installed; the job is "
        "submitted without it",
        severity=Severity.WARNING,
        hint=f"install {operator} and submit again to apply it; or {stop}",
        **_where(step.job),
    )
    return Outcome(what, "skipped", why, diagnostic=warning)


def _read(kube: Any, job: JobObjects, stage: str, obj: dict[str, Any]) -> _Step:
    """An object as the cluster has it now (TS721 when the job needs a kind the cluster does not serve)."""
    from trainspec.kube.errors import being_deleted, deleting_diagnostic, get_or_none

    step = _Step(job, stage, obj, sources=job.sources.get(key_of(obj)))
    if stage == SHARED:
        step.skip = _shared(step)
        return step
    meta = obj["metadata"]
    try:
        step.before = get_or_none(kube, R.resource_of(obj), meta.get("namespace"), meta["name"])
    except Exception as exc:
        found = api_diagnostic(exc, kube, what=f"read {describe(obj)}", **_where(job))
        if found.code == codes.KIND_NOT_SERVED and stage == OBSERVABILITY:
            step.skip = _unserved(step)
            return step
        raise CommandError(found) from None
    if step.before is not None and being_deleted(step.before):
        # "unchanged" would hide that it is about to be gone, and with it the job's run.
        raise CommandError(deleting_diagnostic({**step.before, "kind": obj.get("kind")}, **_where(job)))
    return step


def submit(
    kube: Any,
    jobs: list[JobObjects],
    *,
    with_runtimes: bool = False,
    dry_run: bool = False,
    force: bool = False,
    say: Callable[[str], None] = print,
) -> list[Outcome]:
    """Check every job's runtime and read every object first (nothing is applied when one of them
    stops the submit), then apply in order; ``say`` gets each outcome's line. Returns the outcomes
    (a skipped object's warning is its ``diagnostic``); raises :class:`SubmitIncomplete` when an
    object after the job was refused (the rest was applied)."""
    outcomes: list[Outcome] = []

    def record(outcome: Outcome) -> None:
        outcomes.append(outcome)
        say(outcome.line())

    for job in jobs:
        if not (with_runtimes and job.runtime is not None):
            check_runtime(kube, job, with_runtimes=False, dry_run=dry_run, force=force)
    seen: set[tuple[str, str, str, str]] = set()
    steps: dict[int, list[_Step]] = {}
    for i, job in enumerate(jobs):
        for stage, obj in job.objects():
            if key_of(obj) not in seen:  # one object of two jobs (a shared ServiceAccount) is applied once
                seen.add(key_of(obj))
                steps.setdefault(i, []).append(_read(kube, job, stage, obj))
    late: list[Diagnostic] = []
    for i, job in enumerate(jobs):
        if with_runtimes and job.runtime is not None and key_of(job.runtime) not in seen:
            seen.add(key_of(job.runtime))
            applied = check_runtime(kube, job, with_runtimes=True, dry_run=dry_run, force=force)
            if applied is not None:
                record(applied)
        for step in steps.get(i, []):
            if step.skip is not None:
                record(step.skip)
                continue
            try:
                record(
                    apply_one(
                        kube, step.obj, dry_run=dry_run, force=force, job=job, before=step.before, sources=step.sources
                    )
                )
            except CommandError as exc:
                if step.stage != OBSERVABILITY:
                    raise
                late.extend(exc.diagnostics)  # the job runs: apply the rest, then say what failed
        for outcome in retire_old_runs(kube, job, dry_run=dry_run):
            record(outcome)
    if late:
        raise SubmitIncomplete(outcomes, *late)
    return outcomes


def retire_old_runs(kube: Any, job: JobObjects, *, dry_run: bool) -> list[Outcome]:
    """Delete the job's earlier runs, as a GitOps prune would: the new run resumes from their claim.

    A run is ``<job>-<run id>`` (docs/gitops.md); the earlier ones carry the same
    ``trainspec.dev/job`` label and another name. Their pods stop; the checkpoint claim is not
    theirs and stays, and the in-pod lease keeps the old run from writing once the new one has
    taken over.
    """
    meta = job.trainjob.get("metadata") or {}
    label = (meta.get("labels") or {}).get(W.JOB_LABEL)
    if not label:
        return []
    ns, name = meta.get("namespace") or job.namespace, meta.get("name")
    try:
        listed = kube.list(R.TRAINJOB, ns, selector=f"{W.JOB_LABEL}={label}")
    except Exception as exc:
        raise CommandError(api_diagnostic(exc, kube, what=f"list the runs of {ns}/{label}", file=job.file)) from None
    outcomes = []
    for item in listed.get("items") or []:
        old = (item.get("metadata") or {}).get("name")
        if not old or old == name:
            continue
        what = describe({**item, "apiVersion": item.get("apiVersion") or R.TRAINJOB.api_version, "kind": "TrainJob"})
        if dry_run:
            outcomes.append(Outcome(what, "would be deleted", f"run {name} replaces it", dry_run=True))
            continue
        try:
            kube.delete(R.TRAINJOB, ns, old, propagation="Background")
        except Exception as exc:
            raise CommandError(
                api_diagnostic(exc, kube, what=f"delete the earlier run {what}", file=job.file)
            ) from None
        outcomes.append(Outcome(what, "deleted", f"run {name} replaces it and resumes from the same checkpoints"))
    return outcomes
