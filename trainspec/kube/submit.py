"""``trainspec submit``: the compiled objects of each Trainer job, server-side applied.

Order: the runtime the job references is read first (never created or changed unless asked:
``with_runtimes``), then the checkpoint PVCs, then the TrainJob, each applied with field manager
``trainspec`` and ``fieldValidation=Strict``. What each apply did is read from the object before
and after: created, configured (the resourceVersion moved) or unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic
from trainspec.k8s import wellknown as W
from trainspec.kube import resources as R
from trainspec.kube.session import CommandError, api_diagnostic

RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


@dataclass
class JobObjects:
    """One job's objects to apply, and where its spec is (for diagnostics)."""

    name: str
    namespace: str
    trainjob: dict[str, Any]
    claims: list[dict[str, Any]] = field(default_factory=list)
    runtime: dict[str, Any] | None = None  # the compiled runtime, when trainspec compiles it
    file: str | None = None
    line: int | None = None
    column: int | None = None


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


def select_jobs(result: Any, job: str | None) -> list[JobObjects]:
    """The Trainer jobs of a compile result (``job`` picks one): TS713 for other engines, TS715 for none."""
    from trainspec.compiler.emit import manifest_dicts

    plans = [p for p in result.plans if job is None or p.resolved.name == job]
    specs = {(s.namespace, s.name): s for s in result.specs}
    other = [p for p in plans if p.engine != "trainer"]
    if other:
        diagnostics = []
        for p in other:
            spec = specs.get((p.resolved.namespace, p.resolved.name))
            mark = spec.origin if spec is not None else None
            diagnostics.append(
                Diagnostic(
                    "TS713",
                    f"job {p.resolved.name} runs on engine {p.engine}; trainspec submit/status/logs/cancel "
                    "handle Kubeflow Trainer TrainJobs only (not supported yet for this engine)",
                    file=spec.file if spec else None,
                    line=getattr(mark, "line", None),
                    column=getattr(mark, "column", None),
                    path="spec.runtime",
                    hint="compile it (trainspec compile SPEC -o DIR) and apply it with kubectl, or use a trainer runtime",
                )
            )
        raise CommandError(*diagnostics)
    dicts = manifest_dicts(result.objects())
    jobs: list[JobObjects] = []
    for d in dicts:
        if d["kind"] != "TrainJob" or (job is not None and d["metadata"]["name"] != job):
            continue
        meta = d["metadata"]
        ns = meta.get("namespace") or ""
        wanted = set(claim_names(d))
        claims = [
            c
            for c in dicts
            if c["kind"] == "PersistentVolumeClaim"
            and c["metadata"]["name"] in wanted
            and (c["metadata"].get("namespace") or "") == ns
        ]
        ref = d["spec"].get("runtimeRef") or {}
        runtime = next(
            (
                r
                for r in dicts
                if r["kind"] == (ref.get("kind") or "ClusterTrainingRuntime")
                and r["metadata"]["name"] == ref.get("name")
            ),
            None,
        )
        spec = specs.get((ns, meta["name"])) or specs.get((None, meta["name"]))
        mark = spec.origin if spec is not None else None
        jobs.append(
            JobObjects(
                meta["name"],
                ns,
                d,
                claims,
                runtime,
                spec.file if spec else None,
                getattr(mark, "line", None),
                getattr(mark, "column", None),
            )
        )
    if not jobs:
        found = ", ".join(sorted(p.resolved.name for p in result.plans)) or "none"
        raise CommandError(
            Diagnostic(
                "TS715",
                f"no job{f' named {job!r}' if job else ''} in the specs (jobs: {found})",
                file=(result.specs[0].file if result.specs else None),
                line=1,
                column=1,
                hint="name one of the jobs with --job NAME",
            )
        )
    return jobs


def describe(obj: dict[str, Any]) -> str:
    """``trainjob.trainer.kubeflow.org/ml-dev/ddp-cpu`` (kubectl's ``kind.group/name``, namespace added)."""
    resource = R.resource_of(obj)
    group = resource.api_version.rpartition("/")[0]
    kind = resource.kind.lower() + (f".{group}" if group else "")
    meta = obj["metadata"]
    return "/".join(filter(None, (kind, meta.get("namespace"), meta["name"])))


def apply_one(kube: Any, obj: dict[str, Any], *, dry_run: bool, force: bool, job: JobObjects) -> str:
    """Apply one object; the line saying what happened (created / configured / unchanged)."""
    resource = R.resource_of(obj)
    meta = obj["metadata"]
    try:
        before = kube.get(resource, meta.get("namespace"), meta["name"])
        after = kube.apply(obj, force=force, dry_run=dry_run)
    except Exception as exc:
        raise CommandError(
            api_diagnostic(exc, kube, what=f"apply {describe(obj)}", file=job.file, line=job.line, column=job.column)
        ) from None
    if before is None:
        verb = "created"
    elif (before.get("metadata") or {}).get("resourceVersion") == ((after or {}).get("metadata") or {}).get(
        "resourceVersion"
    ):
        verb = "unchanged"
    else:
        verb = "configured"
    return f"{describe(obj)} {verb}" + (" (server dry run)" if dry_run else "")


def check_runtime(kube: Any, job: JobObjects, *, with_runtimes: bool, dry_run: bool, force: bool) -> str | None:
    """Read the runtime the job needs; apply it only ``with_runtimes``. A line to print, or None."""
    ref = job.trainjob["spec"].get("runtimeRef") or {}
    kind, name = ref.get("kind") or "ClusterTrainingRuntime", str(ref.get("name") or "")
    resource = R.TRAINING_RUNTIME if kind == "TrainingRuntime" else R.CLUSTER_TRAINING_RUNTIME
    ns = job.namespace if kind == "TrainingRuntime" else None
    if with_runtimes and job.runtime is not None:
        return apply_one(kube, job.runtime, dry_run=dry_run, force=force, job=job)
    try:
        found = kube.get(resource, ns, name)
    except Exception as exc:
        raise CommandError(
            api_diagnostic(exc, kube, what=f"read {kind} {name}", file=job.file, line=job.line, column=job.column)
        ) from None
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
            "TS712",
            f"TrainJob {job.namespace}/{job.name} needs {kind} {name!r}, which does "
            f"not exist in the cluster{place}; submit never creates or changes runtimes "
            "unless asked (--with-runtimes)",
            path="spec.runtime",
            hint=hint,
            file=job.file,
            line=job.line,
            column=job.column,
        )
    )


def submit(
    kube: Any,
    jobs: list[JobObjects],
    *,
    with_runtimes: bool = False,
    dry_run: bool = False,
    force: bool = False,
    say: Callable[[str], None] = print,
) -> None:
    """Check every job's runtime first (nothing is applied when one is missing), then apply."""
    lines: dict[str, list[str]] = {}
    if not with_runtimes:
        for job in jobs:
            check_runtime(kube, job, with_runtimes=False, dry_run=dry_run, force=force)
    for job in jobs:
        if with_runtimes:
            line = check_runtime(kube, job, with_runtimes=True, dry_run=dry_run, force=force)
            if line and line not in lines:
                lines[line] = []
                say(line)
        for obj in [*job.claims, job.trainjob]:
            say(apply_one(kube, obj, dry_run=dry_run, force=force, job=job))
        for line in retire_old_runs(kube, job, dry_run=dry_run):
            say(line)


def retire_old_runs(kube: Any, job: JobObjects, *, dry_run: bool) -> list[str]:
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
    lines = []
    for item in listed.get("items") or []:
        old = (item.get("metadata") or {}).get("name")
        if not old or old == name:
            continue
        what = describe({**item, "apiVersion": item.get("apiVersion") or R.TRAINJOB.api_version, "kind": "TrainJob"})
        if dry_run:
            lines.append(f"{what} would be deleted: run {name} replaces it (server dry run)")
            continue
        try:
            kube.delete(R.TRAINJOB, ns, old, propagation="Background")
        except Exception as exc:
            raise CommandError(
                api_diagnostic(exc, kube, what=f"delete the earlier run {what}", file=job.file)
            ) from None
        lines.append(f"{what} deleted: run {name} replaces it and resumes from the same checkpoints")
    return lines
