"""The JobSet webhook's rules as diagnostics: plain JobSets, runtime templates, TrainJobs.

A Trainer runtime is never sent to the JobSet webhook itself: the Trainer controller builds a
JobSet from its template for each TrainJob and that JobSet is. What the controller changes
(kubeflow/trainer ``pkg/runtime/core/trainingruntime.go`` and the plugins' ``EnforceMLPolicy``,
``pkg/runtime/framework/plugins/jobset/jobset.go``):

* the JobSet takes the TrainJob's name (so ``<trainjob>-<rjob>-<i>-<j>-xxxxx`` pod names);
* every replicatedJob gets ``parallelism = completions =`` its pod count: its own
  ``parallelism`` (1 by default), the runtime's ``mlPolicy.numNodes`` for the trainer job
  (ancestor label ``trainer``), and the TrainJob's ``numNodes`` over that (MPI: for the job
  ``node``, one less with ``runLauncherAsNode``, at least 1);
* ``runtimePatches`` add pod volumes and container volumeMounts.

So a runtime is checked as the JobSet it builds without a TrainJob (findings that hold for any
TrainJob, at the runtime), and each TrainJob for what its name, node count and patches add (at
the TrainJob). A runtime that only a TrainJob references (a cluster runtime, not among the
manifests) gets all of its findings reported at that TrainJob.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from trainspec.check.webhooks.jobset_names import generated_name_note, name_for_validation
from trainspec.check.webhooks.jobset_rule_base import COUNTS, NAME, PODS, Finding, job_spec, pod_spec
from trainspec.check.webhooks.jobset_rules import jobset_findings
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Related, Severity
from trainspec.k8s.wellknown import ANCESTOR_LABEL, ANCESTOR_TRAINER, NODE

#: The shortest TrainJob name: a rule that fails with it fails for every TrainJob.
SHORTEST_NAME = "a"
_PATCH_RJOBS = ("trainingRuntimeSpec", "template", "spec", "replicatedJobs")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _diagnostic(
    finding: Finding,
    message: str,
    path: str,
    file: str | None,
    *,
    hint: str | None = None,
    related: tuple[Related, ...] = (),
) -> Diagnostic:
    return Diagnostic(
        code=codes.WEBHOOK_RULE,
        message=message,
        path=path,
        file=file,
        severity=finding.severity,
        hint=hint or finding.hint,
        related=related,
    )


def _say(prefix: str, finding: Finding) -> str:
    # Warnings name their component themselves (the webhook accepts them).
    return finding.message if finding.severity is Severity.WARNING else f"{prefix}: {finding.message}"


# -- plain JobSets ------------------------------------------------------------------------------


def check_jobset(jobset: Mapping[str, Any], file: str | None, *, gates: Collection[str] = ()) -> list[Diagnostic]:
    """TS503 findings for a ``JobSet`` manifest, at the fields the webhook names."""
    meta = _dict(jobset.get("metadata"))
    name, _origin = name_for_validation(meta)
    note = generated_name_note(meta)
    out = []
    for f in jobset_findings(_dict(jobset.get("spec")), name, gates=gates):
        hint = f"{f.hint}; {note}" if note and f.depends == NAME and f.hint else (note if f.depends == NAME else None)
        out.append(_diagnostic(f, _say("the JobSet webhook rejects this JobSet", f), f.path, file, hint=hint))
    return out


# -- the JobSet Trainer builds -----------------------------------------------------------------


def _ancestor(rjob: Mapping[str, Any]) -> Any:
    return _dict(_dict(_dict(rjob.get("template")).get("metadata")).get("labels")).get(ANCESTOR_LABEL)


def _pod_counts(rjobs: list[dict[str, Any]], policy: dict[str, Any] | None, num_nodes: int | None) -> list[int]:
    counts = []
    for rjob in rjobs:
        count = _count(job_spec(rjob).get("parallelism")) or 1
        if policy is not None and _ancestor(rjob) == ANCESTOR_TRAINER:
            count = _count(policy.get("numNodes")) or 1
        counts.append(max(count, 1))
    if num_nodes is None:
        return counts
    mpi = _dict(policy).get("mpi")
    if isinstance(mpi, dict):
        for i, rjob in enumerate(rjobs):
            if rjob.get("name") == NODE:
                counts[i] = max(num_nodes - 1, 1) if mpi.get("runLauncherAsNode") else num_nodes
    else:
        trainer = next((i for i, r in enumerate(rjobs) if _ancestor(r) == ANCESTOR_TRAINER), None)
        if trainer is not None:
            counts[trainer] = num_nodes
    return counts


def _key(value: Any) -> str:
    """A hashable stand-in for a name field (a malformed one is the schema's finding)."""
    return value if isinstance(value, str) else repr(value)


def _merge_by(node: dict[str, Any], field: str, extra: list[Any], key: str) -> None:
    """Append the entries of ``extra`` whose ``key`` ``node[field]`` lacks (a strategic merge
    by key, as far as names go). ``node`` is a copy; its list is copied before it grows."""
    items = node.get(field, [])
    if not isinstance(items, list):
        return  # a malformed list is the schema's finding
    known = {_key(_dict(item).get(key)) for item in items}
    node[field] = [*items, *(e for e in extra if isinstance(e, dict) and _key(e.get(key)) not in known)]


def _apply_patches(rjobs: list[dict[str, Any]], patches: list[Any]) -> None:
    """Add what runtimePatches add to pods: volumes (by name) and volumeMounts (by mountPath)."""
    by_name = {_key(r.get("name")): r for r in rjobs}
    for patch in patches:
        node: Any = patch
        for key in _PATCH_RJOBS:
            node = _dict(node).get(key)
        for prjob in _list(node):
            rjob = by_name.get(_key(_dict(prjob).get("name")))
            if rjob is None:
                continue  # Trainer's webhook refuses the patch (the TrainJob rules say so)
            pod, extra = _level(rjob, "template", "spec", "template", "spec"), pod_spec(_dict(prjob))
            if pod is None:
                continue  # a malformed template is the schema's finding
            _merge_by(pod, "volumes", _list(extra.get("volumes")), "name")
            for field in ("containers", "initContainers"):
                if not isinstance(pod.get(field), list):
                    continue
                pod[field] = [dict(c) if isinstance(c, dict) else c for c in pod[field]]  # copied: mounts grow
                containers = {_key(c.get("name")): c for c in pod[field] if isinstance(c, dict)}
                for container in _list(extra.get(field)):
                    target = containers.get(_key(_dict(container).get("name")))
                    if target is not None:
                        mounts = _list(_dict(container).get("volumeMounts"))
                        _merge_by(target, "volumeMounts", mounts, "mountPath")


def _level(node: dict[str, Any], *keys: str) -> dict[str, Any] | None:
    """``node[k1][k2]...``, each level a copy in place of the runtime's own (created where
    missing); None past a non-mapping. ``node`` itself is a copy already."""
    for key in keys:
        child = node.get(key, {})
        if not isinstance(child, dict):
            return None
        node[key] = node = dict(child)
    return node


def trainer_jobset_spec(runtime: Mapping[str, Any], trainjob: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JobSet spec the Trainer controller builds from ``runtime`` (for ``trainjob``, if given).

    Copy on write: only the mappings and lists on the way to what the controller changes (each
    replicatedJob's counts, the patched pods' volumes and mounts) are copied; the rest is the
    runtime's own, so the result is read, never written.
    """
    runtime_spec = _dict(runtime.get("spec"))
    spec = dict(_dict(_dict(runtime_spec.get("template")).get("spec")))
    if isinstance(spec.get("replicatedJobs"), list):
        spec["replicatedJobs"] = [dict(r) if isinstance(r, dict) else r for r in spec["replicatedJobs"]]
    rjobs = [r for r in _list(spec.get("replicatedJobs")) if isinstance(r, dict)]
    policy = runtime_spec.get("mlPolicy") if isinstance(runtime_spec.get("mlPolicy"), dict) else None
    tj_spec = _dict(_dict(trainjob).get("spec"))
    num_nodes = _count(_dict(tj_spec.get("trainer")).get("numNodes"))
    for rjob, count in zip(rjobs, _pod_counts(rjobs, policy, num_nodes), strict=True):
        job = _level(rjob, "template", "spec")
        if job is not None:
            job["parallelism"] = job["completions"] = count
    if trainjob is not None:
        _apply_patches(rjobs, _list(tj_spec.get("runtimePatches")))
    return spec


RuntimeMemo = dict[int, tuple[Mapping[str, Any], tuple[list[Finding], list[Finding]]]]


def _runtime_findings(
    runtime: Mapping[str, Any], gates: Collection[str], memo: RuntimeMemo | None = None
) -> tuple[list[Finding], list[Finding]]:
    """(findings for any TrainJob, name findings that even the shortest TrainJob name hits).

    ``memo``: one check's answers by runtime (every TrainJob of a runtime asks the same question).
    """
    found = memo.get(id(runtime)) if memo is not None else None
    if found is not None and found[0] is runtime:
        return found[1]
    spec = trainer_jobset_spec(runtime)
    every = jobset_findings(spec, None, gates=gates)
    shortest = [f for f in jobset_findings(spec, SHORTEST_NAME, gates=gates) if f.depends == NAME]
    if memo is not None:
        memo[id(runtime)] = (runtime, (every, shortest))
    return every, shortest


def check_runtime_jobset(
    runtime: Mapping[str, Any], file: str | None, *, gates: Collection[str] = ()
) -> list[Diagnostic]:
    """TS503 findings for the JobSet template of a (Cluster)TrainingRuntime, at the runtime."""
    every, shortest = _runtime_findings(runtime, gates)
    # JobSet paths start at the JobSet object ("spec...."); the runtime holds it at spec.template.
    out = [
        _diagnostic(
            f,
            _say("the JobSet webhook rejects the JobSet Trainer builds from this runtime", f),
            f"spec.template.{f.path}",
            file,
        )
        for f in every
    ]
    out += [
        _diagnostic(
            f,
            _say(
                "the JobSet webhook rejects the JobSet of every TrainJob using this runtime, even "
                f"one named {SHORTEST_NAME!r}",
                f,
            ),
            f"spec.template.{f.path}",
            file,
        )
        for f in shortest
    ]
    return out


def check_trainjob_jobset(
    trainjob: Mapping[str, Any],
    file: str | None,
    runtime: Mapping[str, Any],
    *,
    runtime_checked: bool,
    related: tuple[Related, ...] = (),
    gates: Collection[str] = (),
    memo: RuntimeMemo | None = None,
) -> list[Diagnostic]:
    """TS503 findings for the JobSet Trainer would create for ``trainjob`` from ``runtime``.

    ``runtime_checked``: the runtime is among the checked manifests, so what holds for every
    TrainJob is already reported there and only what this TrainJob adds is reported here.
    ``memo``: shared by the TrainJobs of one check (a dict, for the same ``gates``), so that what
    holds for every TrainJob of a runtime is worked out once.
    """
    meta = _dict(trainjob.get("metadata"))
    name, origin = name_for_validation(meta)
    if name is None:
        return []  # no name at all is a schema error
    found = jobset_findings(trainer_jobset_spec(runtime, trainjob), name, gates=gates)
    if runtime_checked:
        every, shortest = _runtime_findings(runtime, gates, memo)
        seen = {f.key for f in (*every, *shortest)}
        found = [f for f in found if f.key not in seen]
    spec = _dict(trainjob.get("spec"))
    paths = {
        NAME: origin,
        COUNTS: "spec.trainer.numNodes" if "numNodes" in _dict(spec.get("trainer")) else "spec.runtimeRef.name",
        PODS: "spec.runtimePatches" if spec.get("runtimePatches") else "spec.runtimeRef.name",
    }
    note = generated_name_note(meta)
    prefix = f"the JobSet webhook rejects the JobSet {name!r} Trainer creates for this TrainJob"
    return [
        _diagnostic(
            f,
            f"{_say(prefix, f)} (JobSet field {f.path})",
            paths.get(f.depends, "spec.runtimeRef.name"),
            file,
            hint=note if f.depends == NAME and note else None,
            related=related,
        )
        for f in found
    ]


__all__ = ["check_jobset", "check_runtime_jobset", "check_trainjob_jobset", "trainer_jobset_spec"]
