"""Compare two snapshots and say what changed, by meaning, keyed by job and runtime.

Each change is reported once, where it was made: a runtime field under the runtime (with the
jobs it affects), a job field under the job. A value a job inherits from a runtime it still
uses is therefore not repeated under the job; derived figures (GPUs in total, shards,
checkpoint sizes) never make a change of their own, they explain the change that moved them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trainspec.compiler.resolve import Origin
from trainspec.compiler.sizing import human_bytes
from trainspec.diff.snapshot import (
    DERIVED,
    Fact,
    JobSnapshot,
    RuntimeSnapshot,
    Snapshot,
)

#: Categories in the order a report lists them.
CATEGORIES = (
    "added",
    "removed",
    "engine",
    "runtime",
    "gpus",
    "resources",
    "image",
    "queue",
    "priority",
    "deadline",
    "restarts",
    "checkpoint",
    "data",
    "command",
    "env",
    "metadata",
    "placement",
    "scheduling",
    "network",
    "sharding",
    "other",
    "run",
)
ABSENT = None


@dataclass(frozen=True)
class FieldChange:
    """One field that changed: its dotted path and both values (None where absent)."""

    path: str
    old: Any
    new: Any


@dataclass(frozen=True)
class Change:
    """A change by meaning: what (``scope`` job or runtime, ``key``), which kind, and in words."""

    scope: str
    key: str
    category: str
    message: str
    fields: tuple[FieldChange, ...] = ()
    affects: tuple[str, ...] = ()


@dataclass(frozen=True)
class DiffReport:
    """Every change between two sides, runtimes first, each group in a fixed order."""

    changes: tuple[Change, ...]

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def summary(self) -> str:
        if not self.changes:
            return "no changes"
        # A new run is what changes cause on the cluster, not a change of its own.
        counted = [c for c in self.changes if c.category != "run"]
        jobs = len({c.key for c in counted if c.scope == "job"})
        runtimes = len({c.key for c in counted if c.scope == "runtime"})
        parts = [f"{len(counted)} change{'s' * (len(counted) != 1)}"]
        scopes = [f"{n} {what}{'s' * (n != 1)}" for n, what in ((jobs, "job"), (runtimes, "runtime")) if n]
        return parts[0] + " in " + " and ".join(scopes)


def show(value: Any) -> str:
    """A value as people read it: plain scalars bare, lists and mappings as compact JSON."""
    if value is ABSENT:
        return "(unset)"
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": "), sort_keys=True)


def dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


def _arrow(name: str, old: Any, new: Any) -> str:
    """``name 8 -> 16``, ``name added: x``, ``name removed (was x)``."""
    if old is ABSENT:
        return f"{name} added: {show(new)}"
    if new is ABSENT:
        return f"{name} removed (was {show(old)})"
    return f"{name} {show(old)} -> {show(new)}"


def _signed(number: int) -> str:
    return f"+{number}" if number > 0 else str(number)


# -- jobs ---------------------------------------------------------------------------------------


def job_category(path: tuple, gpu_resource: str) -> str:
    """Which kind of change a changed job field is."""
    if path[0] == "metadata":
        return "metadata"
    if path[:2] == ("runtime", "engine"):  # TrainJob -> RayJob / PyTorchJob: another object
        return "engine"
    if path[0] == "runtime":  # what the job inherits from its runtime (the restart budget)
        return "restarts"
    head = path[1] if len(path) > 1 else ""
    if head in ("nodes", "procsPerNode") or (head == "resourcesPerNode" and path[2:] == (gpu_resource,)):
        return "gpus"
    return {
        "runtime": "runtime",
        "resourcesPerNode": "resources",
        "image": "image",
        "queue": "queue",
        "priority": "priority",
        "maxRunTime": "deadline",
        "checkpoint": "checkpoint",
        "data": "data",
        "command": "command",
        "args": "command",
        "env": "env",
        "secretEnv": "env",
        "topology": "placement",
        "podLabels": "placement",
        "podAnnotations": "placement",
    }.get(head, "other")


def _inherited_unchanged_runtime(old: JobSnapshot, new: JobSnapshot, path: tuple) -> bool:
    """Both sides inherit the value from the same runtime: the runtime's own change reports it."""
    a, b = old.facts.get(path), new.facts.get(path)
    inherited = {Origin.RUNTIME.value, Origin.DEFAULT.value}
    return (
        old.runtime == new.runtime
        and a is not None
        and b is not None
        and a.origin in inherited
        and b.origin in inherited
    )


def compare_job(old: JobSnapshot, new: JobSnapshot) -> list[Change]:
    """The changes of one job present on both sides, one per category."""
    grouped: dict[str, list[FieldChange]] = {}
    for path in sorted(set(old.facts) | set(new.facts), key=lambda p: tuple(map(str, p))):
        if path[0] == DERIVED or _inherited_unchanged_runtime(old, new, path):
            continue
        before, after = old.value(*path), new.value(*path)
        if before != after:
            category = job_category(path, new.gpu_resource)
            grouped.setdefault(category, []).append(FieldChange(dotted(path), before, after))
    changes = []
    for category in CATEGORIES:
        if category in grouped:
            fields = tuple(grouped[category])
            message = _JOB_MESSAGES.get(category, _generic)(old, new, fields)
            changes.append(Change("job", new.key, category, message, fields))
    return changes


def _generic(old: JobSnapshot | None, new: JobSnapshot | None, fields: tuple[FieldChange, ...]) -> str:
    return "; ".join(_arrow(_short(f.path), f.old, f.new) for f in fields)


def _short(path: str) -> str:
    return path.removeprefix("spec.")


def _gpus_message(old: JobSnapshot, new: JobSnapshot, fields: tuple[FieldChange, ...]) -> str:
    names = {"spec.nodes": "nodes", "spec.procsPerNode": "processes per node"}
    # Read as people size a job: nodes, then GPUs per node, then processes per node.
    order = {"spec.nodes": 0, "spec.procsPerNode": 2}
    ordered = sorted(fields, key=lambda f: order.get(f.path, 1))
    parts = [_arrow(names.get(f.path, "GPUs per node"), f.old, f.new) for f in ordered]
    delta = new.value(DERIVED, "gpus") - old.value(DERIVED, "gpus")
    suffix = f" ({_signed(delta)} GPUs)" if delta else ""
    world = (old.value(DERIVED, "worldSize"), new.value(DERIVED, "worldSize"))
    if not delta and world[0] != world[1]:
        suffix = f" (world size {world[0]} -> {world[1]})"
    return ", ".join(parts) + suffix


def _checkpoint_message(old: JobSnapshot, new: JobSnapshot, fields: tuple[FieldChange, ...]) -> str:
    text = "checkpoint " + "; ".join(_arrow(f.path[len("spec.checkpoint.") :], f.old, f.new) for f in fields)
    notes = []
    sizes = (old.value(DERIVED, "checkpointBytes"), new.value(DERIVED, "checkpointBytes"))
    if sizes[0] != sizes[1] and None not in sizes:
        notes.append(f"{human_bytes(sizes[0])} -> {human_bytes(sizes[1])} per checkpoint")
    totals = (old.value(DERIVED, "checkpointTotalBytes"), new.value(DERIVED, "checkpointTotalBytes"))
    if totals[0] != totals[1] and None not in totals:
        notes.append(f"{human_bytes(totals[0])} -> {human_bytes(totals[1])} kept")
    volume = (old.value(DERIVED, "checkpointVolume"), new.value(DERIVED, "checkpointVolume"))
    if volume[0] != volume[1]:
        notes.append(_arrow("volume", volume[0], volume[1]))
    return text + (f" ({', '.join(notes)})" if notes else "")


def _data_message(old: JobSnapshot, new: JobSnapshot, fields: tuple[FieldChange, ...]) -> str:
    text = "data " + "; ".join(_arrow(f.path[len("spec.data.") :] or "source", f.old, f.new) for f in fields)
    shards = (old.value(DERIVED, "shards"), new.value(DERIVED, "shards"))
    return text + (f" (shards {show(shards[0])} -> {show(shards[1])})" if shards[0] != shards[1] else "")


def _named(name: str) -> Callable[[JobSnapshot, JobSnapshot, tuple[FieldChange, ...]], str]:
    return lambda old, new, fields: "; ".join(_arrow(name, f.old, f.new) for f in fields)


def _restarts_message(old: JobSnapshot, new: JobSnapshot, fields: tuple[FieldChange, ...]) -> str:
    return _named("restarts.max")(old, new, fields) + " (JobSet failurePolicy.maxRestarts)"


_JOB_MESSAGES: dict[str, Callable[[JobSnapshot, JobSnapshot, tuple[FieldChange, ...]], str]] = {
    "gpus": _gpus_message,
    "checkpoint": _checkpoint_message,
    "data": _data_message,
    "image": _named("image"),
    "queue": _named("queue"),
    "priority": _named("priority"),
    "deadline": _named("maxRunTime"),
    "runtime": _named("runtime"),
    "engine": _named("engine"),
    "restarts": _restarts_message,
}


def describe_job(job: JobSnapshot) -> str:
    """A one-line portrait of a job, for 'added' and 'removed'."""
    gpus = job.value(DERIVED, "gpus")
    scale = (
        f"{job.value('spec', 'nodes')} nodes, {gpus} GPUs" if gpus else f"{job.value('spec', 'nodes')} nodes, no GPUs"
    )
    queue = job.value("spec", "queue")
    return f"{scale}, runtime {job.runtime}" + (f", queue {queue}" if queue else "")


# -- runtimes -----------------------------------------------------------------------------------


def runtime_category(path: tuple) -> str:
    if path[0] == "metadata":
        return "metadata"
    head = path[1] if len(path) > 1 else ""
    if head in ("nodes", "maxNodes", "procsPerNode", "resourcesPerNode", "gpuResource", "accelerator"):
        return "gpus"
    return {
        "restarts": "restarts",
        "image": "image",
        "scheduling": "scheduling",
        "gang": "scheduling",
        "network": "network",
        "dataSharding": "sharding",
        "command": "command",
        "env": "env",
    }.get(head, "other")


def compare_runtime(old: RuntimeSnapshot, new: RuntimeSnapshot, old_side: Snapshot, new_side: Snapshot) -> list[Change]:
    """The changes of one runtime present on both sides, each with the jobs it affects."""
    grouped: dict[str, list[FieldChange]] = {}
    for path in sorted(set(old.fields) | set(new.fields), key=lambda p: tuple(map(str, p))):
        before, after = old.fields.get(path), new.fields.get(path)
        if before != after:
            grouped.setdefault(runtime_category(path), []).append(FieldChange(dotted(path), before, after))
    affects = _affected(new.key, old_side, new_side)
    changes = []
    for category in CATEGORIES:
        if category in grouped:
            fields = tuple(grouped[category])
            message = "; ".join(_arrow(_short(f.path), f.old, f.new) for f in fields)
            if category == "restarts":
                message += " (JobSet failurePolicy.maxRestarts)"
            changes.append(Change("runtime", new.key, category, message, fields, affects))
    return changes


def _affected(runtime: str, old_side: Snapshot, new_side: Snapshot) -> tuple[str, ...]:
    """Jobs on ``runtime`` (on the new side, else the old), with the GPU change the runtime causes.

    A job whose own scale changed reports its GPUs itself; only an inherited change is noted here.
    """
    out = []
    for job in new_side.jobs_on(runtime) or old_side.jobs_on(runtime):
        before = old_side.jobs.get(job.key)
        note = ""
        if (
            before is not None
            and before.value(DERIVED, "gpus") != job.value(DERIVED, "gpus")
            and not any(c.category == "gpus" for c in compare_job(before, job))
        ):
            note = f" ({before.value(DERIVED, 'gpus')} -> {job.value(DERIVED, 'gpus')} GPUs)"
        out.append(job.key + note)
    return tuple(out)


# -- both ---------------------------------------------------------------------------------------


def compare(old: Snapshot, new: Snapshot) -> DiffReport:
    """Every change from ``old`` to ``new``: runtimes (sorted by key), then jobs (sorted by key)."""
    changes: list[Change] = []
    for key in sorted(set(old.runtimes) | set(new.runtimes)):
        before, after = old.runtimes.get(key), new.runtimes.get(key)
        if before is None:
            changes.append(Change("runtime", key, "added", "runtime added", affects=_affected(key, old, new)))
        elif after is None:
            changes.append(Change("runtime", key, "removed", "runtime removed", affects=_affected(key, old, new)))
        else:
            changes.extend(compare_runtime(before, after, old, new))
    for key in sorted(set(old.jobs) | set(new.jobs)):
        before_job, after_job = old.jobs.get(key), new.jobs.get(key)
        if before_job is not None and after_job is not None:
            changes.extend(compare_job(before_job, after_job))
        elif after_job is not None:
            changes.append(Change("job", key, "added", f"job added: {describe_job(after_job)}"))
        elif before_job is not None:
            changes.append(Change("job", key, "removed", f"job removed (was {describe_job(before_job)})"))
    return DiffReport(tuple(changes))


__all__ = ["CATEGORIES", "Change", "DiffReport", "Fact", "FieldChange", "compare", "show"]
