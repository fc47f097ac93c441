"""The update rules of the admission webhooks and of core PersistentVolumeClaim validation.

:mod:`.updates` runs these after the CRD transition rules. Each rule names its upstream source
(repository, tag or branch, file) next to it; messages use the upstream words, with the field
path in Go's form (``metadata.labels[kueue.x-k8s.io/queue-name]``) inside the message and in
trainspec's rendered form in ``Diagnostic.path``.

What a rule cannot see offline is the live state. A job whose manifest says ``suspend: true``
runs once Kueue admits it, and re-applying the unchanged manifest does not suspend it again; so a
rule that only bites while a job runs is reported as a refusal, and its message says the
condition. Only an update that itself turns ``suspend`` on (or a job that nothing unsuspends:
suspended and without a queue) counts as suspended.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from trainspec.check._paths import render_path, short
from trainspec.check.schema.core_kinds import stored_data_source
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.framework.quantity import QuantityError, format_quantity, quantity_value
from trainspec.k8s import wellknown as W

__all__ = ["pvc_update_problems", "webhook_update_problems"]

QUEUE_LABEL = W.QUEUE_NAME_LABEL
PRIORITY_LABEL = W.PRIORITY_CLASS_LABEL
MAX_EXEC_LABEL = W.MAX_EXEC_TIME_LABEL
ELASTIC_ANNOTATION = W.ELASTIC_JOB_ANNOTATION
IMMUTABLE = "field is immutable"


class _KueueKind(NamedTuple):
    webhook: str  # the validating webhook's name, as the API server quotes it
    suspend: tuple[str, ...]  # where the kind says it is suspended (Kueue's IsSuspended)
    ray: bool = False  # RayJob: Kueue validates updates of managed jobs only


# kubernetes-sigs/kueue v0.19.2: the per-integration webhooks call jobframework.ValidateJobOnUpdate
# (pkg/controller/jobframework/validation.go) from ValidateUpdate:
# pkg/controller/jobs/trainjob/trainjob_webhook.go, pkg/controller/jobs/rayjob/rayjob_webhook.go,
# pkg/controller/jobs/mpijob/mpijob_webhook.go (v2beta1 only), and the shared
# pkg/controller/jobframework/base_webhook.go for PyTorchJob and JAXJob (kubeflowjob's IsSuspended
# reads runPolicy.suspend).
_KUEUE_KINDS: dict[tuple[str, str], _KueueKind] = {
    (W.TRAINER_API_VERSION, "TrainJob"): _KueueKind("vtrainjob.kb.io", ("spec", "suspend")),
    (W.RAY_API_VERSION, "RayJob"): _KueueKind("vrayjob.kb.io", ("spec", "suspend"), ray=True),
    (W.KUBEFLOW_V1_API_VERSION, "PyTorchJob"): _KueueKind("vpytorchjob.kb.io", ("spec", "runPolicy", "suspend")),
    (W.KUBEFLOW_V1_API_VERSION, "JAXJob"): _KueueKind("vjaxjob.kb.io", ("spec", "runPolicy", "suspend")),
    (W.MPI_API_VERSION, "MPIJob"): _KueueKind("vmpijob.kb.io", ("spec", "runPolicy", "suspend")),
}
TRAINER_WEBHOOK = "validator.trainjob.trainer.kubeflow.org"


def _get(obj: Any, *path: str) -> Any:
    for part in path:
        obj = obj.get(part) if isinstance(obj, Mapping) else None
    return obj


def _meta(obj: Mapping[str, Any], which: str, key: str) -> str:
    value = _get(obj, "metadata", which, key)
    return value if isinstance(value, str) else ""


def _go_value(value: Any) -> str:
    """A value as apimachinery's field.Error prints it: strings quoted, numbers and booleans bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value if isinstance(value, str) else str(value))


def _denied(webhook: str, error: str) -> str:
    return f'admission webhook "{webhook}" denied the request: {error}'


class _Suspension(NamedTuple):
    before: bool  # surely suspended before the update
    after: bool  # surely suspended after it


def _suspension(old: Mapping[str, Any], new: Mapping[str, Any], path: tuple[str, ...]) -> _Suspension:
    was, will = _get(old, *path) is True, _get(new, *path) is True
    # Kueue unsuspends a queued job when it admits it; an unchanged `suspend: true` is not sent again.
    queued = bool(_meta(old, "labels", QUEUE_LABEL) or _meta(new, "labels", QUEUE_LABEL))
    return _Suspension(before=was and not queued, after=will and (not was or not queued))


def _label_problem(webhook: str, key: str, value: Any, detail: str, condition: str, hint: str) -> Diagnostic:
    message = _denied(webhook, f"metadata.labels[{key}]: Invalid value: {_go_value(value)}: {detail}")
    return Diagnostic(
        code=codes.UPDATE_WEBHOOK,
        message=f"{message} ({condition})" if condition else message,
        path=render_path(("metadata", "labels", key)),
        hint=hint,
    )


def _kueue_problems(old: Mapping[str, Any], new: Mapping[str, Any], spec: _KueueKind) -> list[Diagnostic]:
    """jobframework.ValidateJobOnUpdate (kubernetes-sigs/kueue v0.19.2 pkg/controller/jobframework/validation.go)."""
    kind = str(new.get("kind"))
    old_queue, new_queue = _meta(old, "labels", QUEUE_LABEL), _meta(new, "labels", QUEUE_LABEL)
    # ShouldValidateRayOrSparkJobOnUpdate: a RayJob is validated when Kueue manages it after the
    # update, or (ValidateRayAndSparkJobUpdates, beta and on since 0.18) before it.
    if spec.ray and not (new_queue or old_queue):
        return []
    state = _suspension(old, new, spec.suspend)
    running = f"refused while the {kind} runs; with a queue-name label it runs once Kueue admits it"
    new_job = "make the changed job a new object (another name) or suspend it in the same update"
    out: list[Diagnostic] = []
    # validateUpdateForQueueName: the queue may change only while the job is suspended after the update.
    if new_queue != old_queue and not state.after:
        out.append(_label_problem(spec.webhook, QUEUE_LABEL, new_queue, IMMUTABLE, running, new_job))
    elif new_queue == "" and old_queue:
        # ...and emptying it is refused where the namespace has a default LocalQueue (live state).
        out.append(
            Diagnostic(
                code=codes.UPDATE_WEBHOOK,
                severity=Severity.WARNING,
                path=render_path(("metadata", "labels", QUEUE_LABEL)),
                message=_denied(
                    spec.webhook,
                    f'metadata.labels[{QUEUE_LABEL}]: Invalid value: "": queue-name must not be empty in '
                    f"namespace with default queue",
                )
                + " (only if the namespace has a LocalQueue named default)",
                hint="keep the queue-name label",
            )
        )
    # validateUpdateForMaxExecTime: immutable unless suspended both before and after the update.
    old_max, new_max = _meta(old, "labels", MAX_EXEC_LABEL), _meta(new, "labels", MAX_EXEC_LABEL)
    if old_max != new_max and not (state.before and state.after):
        condition = f"refused unless the {kind} is suspended both before and after the update; {running}"
        out.append(_label_problem(spec.webhook, MAX_EXEC_LABEL, new_max, IMMUTABLE, condition, new_job))
    # ValidateUpdateForWorkloadPriorityClassName: a priority class may change, not appear on a
    # running job, and never disappear.
    old_wpc, new_wpc = _meta(old, "labels", PRIORITY_LABEL), _meta(new, "labels", PRIORITY_LABEL)
    if not old_wpc and new_wpc and not state.after:
        detail = "WorkloadPriorityClass cannot be added to a non-suspended workload"
        out.append(_label_problem(spec.webhook, PRIORITY_LABEL, new_wpc, detail, running, new_job))
    if old_wpc and not new_wpc:
        detail = "WorkloadPriorityClass cannot be removed from a workload"
        hint = "keep the label (changing it to another WorkloadPriorityClass is allowed), or make it a new job"
        out.append(_label_problem(spec.webhook, PRIORITY_LABEL, "", detail, "", hint))
    # validatedUpdateForEnabledWorkloadSlice (ElasticJobsViaWorkloadSlices, beta and on since 0.18).
    was_elastic = _meta(old, "annotations", ELASTIC_ANNOTATION) == "true"
    is_elastic = _meta(new, "annotations", ELASTIC_ANNOTATION) == "true"
    if was_elastic != is_elastic:
        error = f"metadata.annotations[{ELASTIC_ANNOTATION}]: Invalid value: {_go_value(is_elastic)}: {IMMUTABLE}"
        out.append(
            Diagnostic(
                code=codes.UPDATE_WEBHOOK,
                message=_denied(spec.webhook, error),
                path=render_path(("metadata", "annotations", ELASTIC_ANNOTATION)),
                hint="whether a job is elastic is fixed when it is created: make it a new job (another name)",
            )
        )
    return out


def _patches(obj: Mapping[str, Any]) -> dict[str, Any]:
    """runtimePatches by manager, without ``time`` (Trainer's defaulter keeps the old time of an
    unchanged patch, so only the content decides whether a patch changed)."""
    out: dict[str, Any] = {}
    for patch in _get(obj, "spec", "runtimePatches") or ():
        if isinstance(patch, Mapping):
            out[str(patch.get("manager"))] = {k: v for k, v in patch.items() if k != "time"}
    return out


# What JobSet's webhook lets change in a suspended JobSet's replicatedJobs: the pod template's
# labels and annotations, nodeSelector, tolerations, schedulingGates (kubernetes-sigs/jobset at
# 08dfbdfd, pkg/webhooks/jobset_webhook.go ValidateUpdate). Of what a runtime patch may set and
# the CRD lets change, the Job template's metadata and the pods' affinity are not among them.
_JOBSET_FIXED = (("template", "metadata"), ("template", "spec", "template", "spec", "affinity"))


def _trainer_problems(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Diagnostic]:
    """kubeflow/trainer at 8c0f5059 (v2.3), pkg/runtime/framework/plugins/jobset/jobset.go
    checkRuntimePatchesImmutability, run by pkg/webhooks/trainjob_webhook.go ValidateUpdate."""
    before, after = _patches(old), _patches(new)
    if before == after:
        return []
    state = _suspension(old, new, ("spec", "suspend"))
    path = render_path(("spec", "runtimePatches"))
    hint = "Trainer takes runtime patches only from a suspended TrainJob: make the changed job a new TrainJob"
    if not state.before and not state.after:
        detail = "RuntimePatches can only be modified when the TrainJob is suspended before or after the update"
        condition = "refused while the TrainJob runs; with a queue-name label it runs once Kueue admits it"
        message = _denied(TRAINER_WEBHOOK, f"spec.runtimePatches: Forbidden: {detail}")
        return [Diagnostic(code=codes.UPDATE_WEBHOOK, message=f"{message} ({condition})", path=path, hint=hint)]
    if not state.before:
        # Suspended by this very update: Trainer also refuses while the JobSet still has active pods.
        detail = "RuntimePatches cannot be modified when the JobSet's ReplicatedJob <name> is still active"
        message = _denied(TRAINER_WEBHOOK, f"spec.runtimePatches: Forbidden: {detail}")
        condition = "refused while the pods of the running job have not stopped: suspend it first, then change it"
        return [Diagnostic(code=codes.UPDATE_WEBHOOK, message=f"{message} ({condition})", path=path, hint=hint)]
    out = []
    for manager, patch in after.items():
        jobs_before = _replicated_jobs(before.get(manager))
        for name, rjob in _replicated_jobs(patch).items():
            for fixed in _JOBSET_FIXED:
                if name in jobs_before and _get(rjob, *fixed) != _get(jobs_before[name], *fixed):
                    where = ".".join(fixed)
                    out.append(
                        Diagnostic(
                            code=codes.UPDATE_WEBHOOK,
                            severity=Severity.WARNING,
                            path=path,
                            message=f"Trainer accepts this change of replicatedJob {name!r} ({where}) but passes it "
                            f"to the TrainJob's JobSet, whose webhook refuses it: spec.replicatedJobs: Invalid "
                            f"value: ...: {IMMUTABLE} (a suspended JobSet may change only pod labels, "
                            f"annotations, nodeSelector, tolerations and schedulingGates)",
                            hint="the JobSet keeps its old template: make the changed job a new TrainJob",
                        )
                    )
    return out


def _replicated_jobs(patch: Any) -> dict[str, Any]:
    jobs = _get(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs") or ()
    return {str(j.get("name")): j for j in jobs if isinstance(j, Mapping)}


def webhook_update_problems(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Diagnostic]:
    """What the validating webhooks refuse of updating ``old`` to ``new`` (TS441).

    Kueue's label rules for the kinds it integrates, and Trainer's runtime patch rule for a
    TrainJob. The other components trainspec emits for have no update rule of their own: KubeRay's
    RayJob webhook checks only the new object (ray-project/kuberay v1.7.0
    ray-operator/pkg/webhooks/v1/rayjob_webhook.go); Training Operator's PyTorchJob webhook reads
    the old object from the new one, so its runPolicy.managedBy rule never fires, and the JAXJob
    webhook checks only the new object (kubeflow/training-operator release-1.9,
    pkg/webhooks/pytorch/pytorchjob_webhook.go, pkg/webhooks/jax/jaxjob_webhook.go); mpi-operator has
    no webhook; Trainer's runtime webhooks check only the new object
    (pkg/webhooks/clustertrainingruntime_webhook.go, trainingruntime_webhook.go).
    """
    key = (str(new.get("apiVersion")), str(new.get("kind")))
    out: list[Diagnostic] = []
    if key == (W.TRAINER_API_VERSION, "TrainJob"):
        out.extend(_trainer_problems(old, new))
    spec = _KUEUE_KINDS.get(key)
    if spec is not None:
        out.extend(_kueue_problems(old, new, spec))
    return out


# -- PersistentVolumeClaim (kubernetes/kubernetes pkg/apis/core/validation/validation.go,
# ValidatePersistentVolumeClaimUpdate; plugin/pkg/admission/storage/persistentvolume/resize/admission.go)

SPEC_IMMUTABLE = (
    "spec: Forbidden: spec is immutable after creation except resources.requests and "
    "volumeAttributesClassName for bound claims"
)
_PVC_HINT = (
    "a claim's spec is fixed at creation (only a larger storage request and volumeAttributesClassName may "
    "change): keep the old value, or create a claim under a new name and move the data"
)


def _semantic(value: Any) -> Any:
    """A value as apimachinery's semantic equality sees it: empty lists and maps equal absent ones,
    quantities compare by value."""
    if isinstance(value, Mapping):
        kept = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None} or None
    if isinstance(value, list):
        return [_semantic(v) for v in value] or None
    return value


def _quantities(value: Any) -> Any:
    """A resource list with its quantities as exact values (``1Gi`` equals ``1073741824``)."""
    if not isinstance(value, Mapping) or not all(isinstance(v, (str, int, float)) for v in value.values()):
        return value
    try:
        return {k: quantity_value(v) for k, v in value.items()}
    except QuantityError:
        return value  # an unparsable quantity is the create-time check's to report


def _shown(value: Any) -> str:
    return "unset" if value is None else short(value)


def _storage(spec: Mapping[str, Any]) -> Any:
    value = _get(spec, "resources", "requests", "storage")
    try:
        return quantity_value(value) if value is not None else None
    except QuantityError:
        return None


def _pvc_view(spec: Mapping[str, Any], *, drop_legacy: bool = True) -> dict[str, Any]:
    """The spec fields the update rule compares, normalised as the API server stores them (a
    dataSource it drops is dropped, unless the stored claim has one: ``drop_legacy`` False)."""
    source = stored_data_source(spec) if drop_legacy else spec.get("dataSource")
    ref = spec.get("dataSourceRef")
    return {
        "accessModes": spec.get("accessModes"),
        "selector": spec.get("selector"),
        # the API server defaults volumeMode, and fills dataSource and dataSourceRef from each other
        "volumeMode": spec.get("volumeMode") or "Filesystem",
        "dataSource": source or ref,
        "dataSourceRef": ref or source,
        "resources.limits": _get(spec, "resources", "limits"),
    }


def pvc_update_problems(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Diagnostic]:
    """What the API server refuses (TS442) or may refuse (TS443, a growing claim) of a PVC update."""
    o, n = old.get("spec") or {}, new.get("spec") or {}
    meta = new.get("metadata") or {}
    claim = f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    out: list[Diagnostic] = []

    def refuse(path: tuple[str, ...], message: str, *, warning: bool = False) -> None:
        severity = Severity.WARNING if warning else Severity.ERROR
        out.append(
            Diagnostic(
                code=codes.PVC_CHANGE_REFUSED,
                message=message,
                path=render_path(path),
                severity=severity,
                hint=_PVC_HINT,
            )
        )

    before = _pvc_view(o)
    after = _pvc_view(n, drop_legacy=before["dataSource"] is None)
    for name in before:
        compare = _quantities if name == "resources.limits" else _semantic
        if _semantic(compare(before[name])) != _semantic(compare(after[name])):
            path = ("spec", *name.split("."))
            change = f"({render_path(path)}: {_shown(before[name])} -> {_shown(after[name])})"
            if name == "volumeMode":  # ValidateImmutableField on the path "volumeMode" too
                mode = f"volumeMode: Invalid value: {_go_value(after[name])}: {IMMUTABLE}"
                refuse(path, f"[{SPEC_IMMUTABLE}, {mode}] {change}")
            else:
                refuse(path, f"{SPEC_IMMUTABLE} {change}")
    # storageClassName and volumeName may go from unset to set once: the live claim may already
    # have them (the default StorageClass at creation, the PV controller's binding), then not.
    for name, when in (
        ("storageClassName", "the API server gave the claim the cluster's default StorageClass when it was created"),
        ("volumeName", "the claim is bound (the PV controller set its volumeName)"),
    ):
        was, will = o.get(name), n.get(name)
        if was == will:
            continue
        change = f"(spec.{name}: {_shown(was)} -> {_shown(will)})"
        if was is None:
            refuse(("spec", name), f"{SPEC_IMMUTABLE} {change}, if {when}", warning=True)
        else:
            refuse(("spec", name), f"{SPEC_IMMUTABLE} {change}")
    if o.get("volumeAttributesClassName") and not n.get("volumeAttributesClassName"):
        form = "nil" if n.get("volumeAttributesClassName") is None else "an empty string"
        detail = f"update from non-nil value to {form} is forbidden"
        refuse(("spec", "volumeAttributesClassName"), f"spec.volumeAttributesClassName: Forbidden: {detail}")
    was, will = _storage(o), _storage(n)
    if was is not None and will is not None and will != was:
        path = ("spec", "resources", "requests", "storage")
        if will < was:
            # Since Kubernetes 1.34 (RecoverVolumeExpansionFailure, GA) the words are these;
            # older servers say "field can not be less than previous value".
            refuse(path, "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity")
        else:
            cls = n.get("storageClassName") or o.get("storageClassName")
            where = f"StorageClass {cls!r}" if cls else "the cluster's default StorageClass"
            out.append(
                Diagnostic(
                    code=codes.PVC_EXPANSION,
                    severity=Severity.WARNING,
                    path=render_path(path),
                    message=f"PersistentVolumeClaim {claim} grows from {format_quantity(was, True)} to "
                    f"{format_quantity(will, True)}: accepted only for a bound claim whose {where} has "
                    f"allowVolumeExpansion: true; otherwise the API server refuses it (only dynamically "
                    f"provisioned pvc can be resized and the storageclass that provisions the pvc must "
                    f"support resize)",
                    hint=f"check that {where} sets allowVolumeExpansion: true",
                )
            )
    return out
