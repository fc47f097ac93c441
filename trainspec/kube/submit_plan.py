"""What ``trainspec submit`` applies for each job, in which order, and what it leaves alone.

**What belongs to a job.** The compiler writes each job's objects into one output file,
``<namespace>/<job>.yaml`` (the run object, its checkpoint claims, the PodMonitor and dashboard
ConfigMap of its ``observability`` block, and whatever else lowering emits for the job), and
labels them ``trainspec.dev/job=<job>``. Submit takes that file's objects: exactly what
``trainspec compile`` emits for the job, nothing from another job's file. The runtime the job
references comes from the runtimes' files; it is applied only when asked (``--with-runtimes``).

**Order** (:func:`stage_of`): namespaced prerequisites first, because the job's pods use them the
moment Kueue admits the job, which may be at once: ServiceAccount, Role, RoleBinding, ConfigMaps
the pods mount, PersistentVolumeClaims; then the TrainJob; then observability (PodMonitor,
Grafana dashboard ConfigMap), which the job does not need to run: it comes last so a cluster
without the Prometheus Operator, or a refusal of these objects, never keeps a job from running,
and a refused TrainJob leaves no monitoring behind for a job that does not exist.

**Never created or changed unless asked**: cluster-scoped or shared objects. Runtimes with
``--with-runtimes``; other such kinds (ClusterRole, PriorityClass, Kueue's ClusterQueue,
LocalQueue, ResourceFlavor, ...) never: submit says it did not apply them (TS731) and a cluster
admin applies them (``kubectl apply``). Compile does not emit such kinds for a job today; the
rule keeps a future one from slipping into every user's submit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.k8s import wellknown as W
from trainspec.kube.session import CommandError

__all__ = [
    "JOB",
    "OBSERVABILITY",
    "PREREQUISITES",
    "RUNTIME_KINDS",
    "SHARED_KINDS",
    "JobObjects",
    "claim_names",
    "describe",
    "key_of",
    "namespace_name_problem",
    "namespace_problems",
    "select_jobs",
    "stage_of",
]

RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
#: Stages, in apply order.
PREREQUISITES, JOB, OBSERVABILITY, SHARED = "prerequisites", "job", "observability", "shared"
#: Namespaced prerequisites in apply order: who the pods run as, what it may do, what they mount.
PREREQUISITE_ORDER = ("ServiceAccount", "Role", "RoleBinding", "ConfigMap", "PersistentVolumeClaim")
#: Cluster-scoped or shared by many jobs: submit never applies them (runtimes: only when asked).
SHARED_KINDS = frozenset(
    {
        *RUNTIME_KINDS,
        "ClusterRole",
        "ClusterRoleBinding",
        "PriorityClass",
        "Namespace",
        "CustomResourceDefinition",
        "ClusterQueue",
        "LocalQueue",
        "ResourceFlavor",
        "Cohort",
        "Topology",
        "AdmissionCheck",
        "WorkloadPriorityClass",
        "ProvisioningRequestConfig",
    }
)


@dataclass
class JobObjects:
    """One job's objects to apply, and where its spec is (for diagnostics).

    ``claims`` are its PersistentVolumeClaims; ``extras`` every other object of the job's output
    besides the TrainJob (prerequisites and observability: :func:`stage_of` orders them);
    ``runtime`` the runtime it references when trainspec compiles it; ``sources`` the provenance of
    each object's fields (by :func:`key_of`), so a refused field is located at its spec field.
    """

    name: str
    namespace: str
    trainjob: dict[str, Any]
    claims: list[dict[str, Any]] = field(default_factory=list)
    runtime: dict[str, Any] | None = None
    file: str | None = None
    line: int | None = None
    column: int | None = None
    extras: list[dict[str, Any]] = field(default_factory=list)
    sources: dict[tuple[str, str, str, str], Any] = field(default_factory=dict)
    #: The trainspec job (``trainspec.dev/job``); ``name`` is its run object's name.
    job: str = ""

    def objects(self) -> list[tuple[str, dict[str, Any]]]:
        """``(stage, object)`` for everything of the job but its runtime, in apply order."""
        staged = [(stage_of(obj), obj) for obj in [*self.claims, *self.extras, self.trainjob]]
        rank = {PREREQUISITES: 0, JOB: 1, OBSERVABILITY: 2, SHARED: 3}
        kinds = {kind: i for i, kind in enumerate(PREREQUISITE_ORDER)}
        # Within a stage, compile's order (stable sort); prerequisites by kind, as listed above.
        return sorted(
            staged, key=lambda so: (rank[so[0]], kinds.get(str(so[1].get("kind")), 0) if so[0] == PREREQUISITES else 0)
        )


def key_of(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    """``(apiVersion, kind, namespace, name)``: one object in the cluster."""
    meta = obj.get("metadata") or {}
    return (str(obj.get("apiVersion")), str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")))


def stage_of(obj: dict[str, Any]) -> str:
    """Where an object of a job's output goes in the apply order (module docstring)."""
    kind = str(obj.get("kind") or "")
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if kind == "TrainJob":
        return JOB
    if kind == "PodMonitor" or (kind == "ConfigMap" and W.GRAFANA_DASHBOARD_LABEL in labels):
        return OBSERVABILITY
    if kind in SHARED_KINDS or kind not in PREREQUISITE_ORDER:
        return SHARED
    return PREREQUISITES


def claim_names(obj: Any) -> Iterator[str]:
    """Every ``persistentVolumeClaim.claimName`` inside a manifest."""
    if isinstance(obj, dict):
        claim = obj.get("persistentVolumeClaim")
        if isinstance(claim, dict) and claim.get("claimName"):
            yield str(claim["claimName"])
        for value in obj.values():
            yield from claim_names(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from claim_names(value)


def describe(obj: dict[str, Any]) -> str:
    """``trainjob.trainer.kubeflow.org/ml-dev/ddp-cpu`` (kubectl's ``kind.group/name``, namespace added)."""
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    kind = str(obj.get("kind") or "").lower() + (f".{group}" if group else "")
    meta = obj.get("metadata") or {}
    return "/".join(filter(None, (kind, meta.get("namespace"), meta.get("name"))))


def _not_trainer(result: Any, job: str | None) -> None:
    """TS713 for the selected jobs of engines whose dialect the cluster commands do not handle."""
    from trainspec.compiler.lower.dialects import dialect_for

    other = [
        p
        for p in result.plans
        if (job is None or p.resolved.name == job) and not dialect_for(result.target, p.engine).cluster_commands
    ]
    if other:
        raise CommandError(
            *(
                p.resolved.loaded.diagnostic(
                    codes.ENGINE_NOT_SUBMITTABLE,
                    ("spec", "runtime"),
                    f"job {p.resolved.name} runs on engine {p.engine}; trainspec submit/status/logs/cancel "
                    "handle Kubeflow Trainer TrainJobs only (not supported yet for this engine)",
                    hint="compile it (trainspec compile SPEC -o DIR) and apply it with kubectl, or use a trainer runtime",
                )
                for p in other
            )
        )


def select_jobs(result: Any, job: str | None) -> list[JobObjects]:
    """The Trainer jobs of a compile result with everything compile emits for each (``job`` picks
    one): TS713 for other engines, TS715 for none."""
    from trainspec.compiler.emit import manifest_dicts

    _not_trainer(result, job)
    runtimes = [d for out in result.outputs for d in manifest_dicts(list(out.objects)) if d["kind"] in RUNTIME_KINDS]
    plans = {(p.resolved.namespace, p.resolved.name): p for p in result.plans}
    jobs: list[JobObjects] = []
    for out in result.outputs:
        dicts = manifest_dicts(list(out.objects))
        runs = [d for d in dicts if d["kind"] == "TrainJob"]
        if len(runs) != 1:
            continue  # a runtimes file
        trainjob = runs[0]
        meta = trainjob["metadata"]
        ns, owner = meta.get("namespace") or "", (meta.get("labels") or {}).get(W.JOB_LABEL) or meta["name"]
        if job is not None and job not in (owner, meta["name"]):
            continue
        ref = trainjob["spec"].get("runtimeRef") or {}
        runtime = next(
            (
                r
                for r in runtimes
                if r["kind"] == (ref.get("kind") or "ClusterTrainingRuntime")
                and r["metadata"]["name"] == ref.get("name")
                and (r["kind"] == "ClusterTrainingRuntime" or (r["metadata"].get("namespace") or "") == ns)
            ),
            None,
        )
        plan = plans.get((ns, owner))
        spec = plan.resolved.loaded if plan is not None else None
        mark = spec.origin if spec is not None else None
        others = [d for d in dicts if d is not trainjob]
        provenance = list(getattr(out, "provenance", ()) or ())
        jobs.append(
            JobObjects(
                meta["name"],
                ns,
                trainjob,
                [d for d in others if d["kind"] == "PersistentVolumeClaim"],
                runtime,
                spec.file if spec is not None else None,
                getattr(mark, "line", None),
                getattr(mark, "column", None),
                extras=[d for d in others if d["kind"] != "PersistentVolumeClaim"],
                sources={key_of(d): s for d, s in zip(dicts, provenance, strict=False)},
                job=owner,
            )
        )
    if not jobs:
        found = ", ".join(sorted(p.resolved.name for p in result.plans)) or "none"
        raise CommandError(
            Diagnostic(
                codes.NO_SUCH_SPEC_JOB,
                f"no job{f' named {job!r}' if job else ''} in the specs (jobs: {found})",
                file=(result.specs[0].file if result.specs else None),
                line=1,
                column=1,
                hint="name one of the jobs with --job NAME",
            )
        )
    return jobs


def namespace_name_problem(namespace: str) -> Diagnostic | None:
    """TS732 when ``-n NAMESPACE`` is not a namespace name (checked before compiling with it)."""
    from trainspec.k8s.name_rules import label_problems

    problems = label_problems(namespace)
    if not problems:
        return None
    return Diagnostic(
        codes.NAMESPACE_MISMATCH,
        f"-n {namespace!r} is not a namespace name: it {' and '.join(problems)}",
        file="<command line>",
        line=1,
        column=1,
        hint="kubectl get namespaces lists the cluster's namespaces",
    )


def namespace_problems(result: Any, namespace: str, job: str | None = None) -> list[Diagnostic]:
    """TS732 for each (selected) job whose spec names another namespace than ``-n NAMESPACE``, as
    kubectl refuses an object whose namespace differs from ``-n``."""
    problems = []
    for loaded in result.specs:
        meta = getattr(loaded.spec, "metadata", None)
        if getattr(loaded, "kind", "") != "TrainingJob" or meta is None or job not in (None, meta.name):
            continue
        if meta.namespace and meta.namespace != namespace:
            problems.append(
                loaded.diagnostic(
                    codes.NAMESPACE_MISMATCH,
                    ("metadata", "namespace"),
                    f"the namespace from the provided object {meta.namespace!r} does not match the namespace "
                    f"{namespace!r} sent on the request (-n)",
                    hint=f"pass -n {meta.namespace} (or no -n) to submit it to {meta.namespace}, or remove "
                    "metadata.namespace from the spec to submit it to whichever namespace -n names",
                    severity=Severity.ERROR,
                )
            )
    return problems
