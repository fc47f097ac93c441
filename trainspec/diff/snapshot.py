"""What a compile means, as flat comparable facts: one snapshot per side of a diff.

A job becomes ``path -> Fact`` pairs: the fields it wrote (after project defaults), its
*effective* image, scale and resources from the resolver, and a few derived figures (GPUs in
total, shards, checkpoint sizes). A runtime becomes its fields. Paths are tuples, values plain
JSON data, so two snapshots compare by meaning: the order of files, documents and keys, quoting
and comments never show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainspec.compiler.engines import DEFAULT_ENGINE
from trainspec.compiler.pipeline import CompileResult
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.resolve import DEFAULT_NAMESPACE, Origin, Sourced
from trainspec.dsl.spec.models import Runtime, Scope

#: Origin of derived facts (they never make a change on their own, they explain one).
COMPUTED = "computed"
#: First element of the path of a derived fact.
DERIVED = "derived"


@dataclass(frozen=True)
class Fact:
    """A value (plain JSON data) and where it came from."""

    value: Any
    origin: str


@dataclass(frozen=True)
class JobSnapshot:
    """One job by meaning. ``runtime`` is the key of the runtime it uses."""

    key: str
    runtime: str
    runtime_builtin: bool
    gpu_resource: str
    facts: dict[tuple, Fact]

    def value(self, *path: Any) -> Any:
        fact = self.facts.get(tuple(path))
        return None if fact is None else fact.value


@dataclass(frozen=True)
class RuntimeSnapshot:
    """One runtime (from the inputs; built-in ones are the same on both sides) by its fields."""

    key: str
    fields: dict[tuple, Any]


@dataclass
class Snapshot:
    """Every job and runtime of one side, by key."""

    jobs: dict[str, JobSnapshot] = field(default_factory=dict)
    runtimes: dict[str, RuntimeSnapshot] = field(default_factory=dict)

    def jobs_on(self, runtime: str) -> list[JobSnapshot]:
        """The jobs that use runtime ``runtime``, by key."""
        return sorted((j for j in self.jobs.values() if j.runtime == runtime), key=lambda j: j.key)


def flatten(data: Any, prefix: tuple = ()) -> dict[tuple, Any]:
    """Nested mappings as ``path -> leaf``; lists stay whole (their order means something)."""
    if isinstance(data, dict):
        out: dict[tuple, Any] = {}
        for key, value in data.items():
            out.update(flatten(value, (*prefix, key)))
        return out
    return {prefix: data}


def runtime_key(runtime: Runtime) -> str:
    """``name`` for a cluster runtime, ``namespace/name`` for a namespaced one."""
    if runtime.spec.scope is Scope.NAMESPACE:
        return f"{runtime.metadata.namespace or DEFAULT_NAMESPACE}/{runtime.metadata.name}"
    return runtime.metadata.name


def snapshot(result: CompileResult) -> Snapshot:
    """The meaning of a compile: its user runtimes (after project defaults) and its planned jobs."""
    out = Snapshot()
    for loaded in result.runtimes:  # after project defaults, as the pipeline resolved them
        if isinstance(loaded.spec, Runtime):
            runtime: Runtime = loaded.spec
            dumped = runtime.model_dump(mode="json", by_alias=True, exclude_none=True)
            fields = flatten(
                {
                    "metadata": {k: v for k, v in dumped["metadata"].items() if k in ("labels", "annotations")},
                    "spec": dumped["spec"],
                }
            )
            out.runtimes[runtime_key(runtime)] = RuntimeSnapshot(runtime_key(runtime), _drop_empty(fields))
    for plan in result.plans:
        job = job_snapshot(plan)
        out.jobs[job.key] = job
    return out


def _drop_empty(fields: dict[tuple, Any]) -> dict[tuple, Any]:
    # An empty mapping or list is the same as an absent one ({} env, [] tolerations).
    return {path: value for path, value in fields.items() if value not in ({}, [])}


def canonical_parameters(count: int) -> str:
    """A parameter count in the largest unit that keeps it whole: 70000M and 70B are both ``70B``."""
    for unit, size in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if count % size == 0:
            return f"{count // size}{unit}"
    return str(count)


def _sourced(value: Sourced) -> Fact:
    return Fact(value.value, value.origin.value)


def job_snapshot(plan: JobPlan) -> JobSnapshot:
    """One planned job as facts: its written fields, effective values and derived figures."""
    resolved = plan.resolved
    job = resolved.job
    dumped = job.model_dump(mode="json", by_alias=True, exclude_none=True)
    spec = {k: v for k, v in dumped["spec"].items() if k != "resourcesPerNode"}
    written = flatten(
        {"metadata": {k: v for k, v in dumped["metadata"].items() if k in ("labels", "annotations")}, "spec": spec}
    )
    facts: dict[tuple, Fact] = {}
    model = job.spec.checkpoint.model if job.spec.checkpoint is not None else None
    if model is not None:  # the dump keeps the text as written; compare the count
        written[("spec", "checkpoint", "model", "parameters")] = canonical_parameters(model.parameters.count)
    for path, value in _drop_empty(written).items():
        origin = Origin.JOB
        if len(path) >= 2 and ".".join(map(str, path[1:])) in resolved.from_project:
            origin = Origin.PROJECT
        facts[path] = Fact(value, origin.value)
    # Effective values replace what the job wrote (or add what it inherits from its runtime).
    facts[("spec", "image")] = _sourced(resolved.image)
    facts[("spec", "nodes")] = _sourced(resolved.nodes)
    facts[("spec", "procsPerNode")] = _sourced(resolved.procs_per_node)
    for name, quantity in resolved.resources.items():
        facts[("spec", "resourcesPerNode", name)] = Fact(str(quantity.value), quantity.origin.value)
    restarts = resolved.runtime.spec.spec.restarts
    if restarts is not None:
        # The job's restart budget lives in its runtime; listed so a switch of runtime shows it.
        facts[("runtime", "restarts", "max")] = Fact(restarts.max, Origin.RUNTIME.value)
    # The engine decides which object the job becomes (TrainJob, RayJob, PyTorchJob...).
    facts[("runtime", "engine")] = Fact(
        plan.engine.value, Origin.COMPUTED.value if plan.engine is DEFAULT_ENGINE else Origin.RUNTIME.value
    )
    gpus = resolved.nodes.value * resolved.gpus_per_node.value
    facts[(DERIVED, "gpus")] = Fact(gpus, COMPUTED)
    facts[(DERIVED, "worldSize")] = Fact(resolved.world_size, COMPUTED)
    if plan.data is not None:
        facts[(DERIVED, "shards")] = Fact(plan.data.num_shards, COMPUTED)
    ckpt = plan.checkpoint
    if ckpt is not None:
        if ckpt.size is not None:
            facts[(DERIVED, "checkpointVolume")] = Fact(str(ckpt.size), COMPUTED)
        if ckpt.sized is not None:
            facts[(DERIVED, "checkpointBytes")] = Fact(ckpt.sized.per_checkpoint, COMPUTED)
            facts[(DERIVED, "checkpointTotalBytes")] = Fact(ckpt.sized.total, COMPUTED)
        if ckpt.access_mode is not None:
            facts[(DERIVED, "checkpointAccessMode")] = Fact(ckpt.access_mode.value, COMPUTED)
    entry = resolved.runtime
    return JobSnapshot(
        key=f"{resolved.namespace}/{resolved.name}",
        runtime=runtime_key(entry.spec),
        runtime_builtin=entry.builtin,
        gpu_resource=entry.spec.spec.gpu_resource,
        facts=dict(sorted(facts.items(), key=lambda kv: tuple(map(str, kv[0])))),
    )
