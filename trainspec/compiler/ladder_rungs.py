"""The scaling ladder: each job expanded into the step-by-step jobs a team runs to measure scaling.

``Options(ladder=True)`` (``compile --ladder``, ``explain --ladder``) replaces every planned job by
its *rungs*: one GPU, one full node, then 2, 4, 8 ... nodes, always ending at the job's own size.
The expansion runs inside the plan pass, on typed specs (never on YAML text): each rung is the job's
spec with its node count, name, labels, deadline and checkpoint location changed, resolved and
planned again, so every rule, the policy, the target's rules, lowering and ``check`` see each rung
as the job it is.

What a rung keeps and what it changes (docs/explain-and-diff.md, "Scaling ladder"):

* **name** ``<job>-ladder-<rung>`` (``llama-sft-ladder-1gpu``, ``-1n``, ``-2n`` ...), within the name
  budget of the job (TS401 when the job's name leaves no room for the suffix);
* **labels** ``trainspec.dev/ladder: <job>`` and ``trainspec.dev/ladder-rung: <rung>`` on the job
  object and its trainer pods;
* **size**: the one-GPU rung runs one process on one GPU with a per-GPU share of the node's other
  resources (CPU, memory, RDMA devices ...: the node's amount divided by its GPUs, rounded up), so
  the per-GPU figures compare with the node rungs; a CPU-only job (or one GPU per node) has node
  rungs only; the node rungs keep the job's processes and resources per node;
* **data**: the same source and settings; shards follow each rung's world size (the plan does it);
* **checkpoints**: a location of the rung's own, never the job's nor another rung's: a new volume
  (``size``) becomes a new claim per rung (``<rung>-checkpoints``); object storage (``uri``) moves
  to ``<parent>/trainspec-ladder/<last segment>/<rung>``, beside the job's prefix, never under it
  (TS431 when no such place exists, a bucket root); an existing claim (``claimName``) is refused
  (TS430): a subdirectory chosen through ``TRAINSPEC_CHECKPOINT_DIR`` protects the real job only
  when the training code honours the variable, and code writing to the mount path would resume
  from, and overwrite, the job's checkpoints;
* **a pinned layout** (``spec.parallelism``): ``dp`` is left to the planner, ``tp`` and ``pp`` stay
  where the rung can run them (see :func:`_pin`);
* **deadline**: ``maxRunTime`` is the job's when shorter than :data:`RUNG_MAX_RUN_TIME` (1 h),
  else 1 h: a rung measures throughput, and a forgotten one must not run as long as the job.

An elastic job (``nodes: {min, max}``) gets fixed-size rungs up to ``max``: throughput is compared
at fixed sizes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from trainspec.compiler.lower.dialects import dialect_for
from trainspec.compiler.plan import CheckpointKind, JobPlan, plan_job
from trainspec.compiler.resolve import DEFAULT_NAMESPACE, ResolvedJob, RuntimeIndex, resolve_job
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.framework.types import Duration, Quantity
from trainspec.dsl.record import replace
from trainspec.dsl.spec.models import Resources
from trainspec.dsl.spec.parallelism import Parallelism
from trainspec.k8s.wellknown import LADDER_LABEL, LADDER_RUNG_LABEL

if TYPE_CHECKING:
    from trainspec.compiler.engines import Engine
    from trainspec.dsl.load.loaded import LoadedSpec

#: The longest a rung runs (``maxRunTime``); a job's own shorter deadline is kept.
RUNG_MAX_RUN_TIME = Duration(3600)
#: The folder, beside a job's object-storage prefix, that holds its rungs' checkpoints.
URI_FOLDER = "trainspec-ladder"
#: What a rung's name adds to the job's: ``<job>-ladder-<rung>``.
NAME_INFIX = "-ladder-"
_CPU = "cpu"


@dataclass(frozen=True)
class Rung:
    """One step of a ladder: ``nodes`` nodes, each with ``gpus`` GPUs (None: the job's own per node)."""

    tag: str
    nodes: int
    gpus: int | None = None

    @property
    def whole_nodes(self) -> bool:
        return self.gpus is None


def rungs(nodes: int, gpus_per_node: int) -> list[Rung]:
    """The rungs of a job of ``nodes`` nodes x ``gpus_per_node`` GPUs, smallest first.

    One GPU (when a node has more than one), then 1, 2, 4 ... nodes, ending at ``nodes`` itself
    (so a 12-node job climbs 1, 2, 4, 8, 12).
    """
    out = [Rung("1gpu", 1, gpus=1)] if gpus_per_node > 1 else []
    count = 1
    while count < nodes:
        out.append(Rung(f"{count}n", count))
        count *= 2
    out.append(Rung(f"{nodes}n", nodes))
    return out


def rung_name(job: str, rung: Rung) -> str:
    """The rung's job name, derived from the job's alone (the same inputs give the same names)."""
    return f"{job}{NAME_INFIX}{rung.tag}"


def rung_uri(uri: str, rung: str) -> str | None:
    """The object-storage prefix of a rung: beside the job's, in :data:`URI_FOLDER`; None at a bucket root.

    ``s3://bucket/ckpt/llama-sft`` -> ``s3://bucket/ckpt/trainspec-ladder/llama-sft/<rung>``. It
    never starts with the job's prefix (object stores list by prefix, so ``llama-sft-2n`` would
    be listed with ``llama-sft``), and the job's never starts with it.
    """
    scheme, sep, rest = uri.partition("://")
    bucket, _, path = rest.strip("/").partition("/")
    if not sep or not bucket or not path:
        return None
    parent, _, leaf = path.rpartition("/")
    parts = [part for part in (bucket, parent, URI_FOLDER, leaf, rung) if part]
    found = f"{scheme}://{'/'.join(parts)}"
    job = f"{scheme}://{rest.strip('/')}"
    if _under(found, job) or _under(job, found):
        return None
    return found


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


class Expansion:
    """The ladder of a run's plans: rung plans and what stood in the way, in the plan pass."""

    def __init__(self, index: RuntimeIndex, engine_of: Callable[[LoadedSpec], Engine]) -> None:
        self.index = index
        self.engine_of = engine_of
        self.plans: list[JobPlan] = []
        self.diagnostics: list[Diagnostic] = []

    def expand(self, plans: Iterable[JobPlan]) -> tuple[list[JobPlan], list[Diagnostic]]:
        """Every plan replaced by its rungs' plans; rungs that cannot exist become diagnostics."""
        plans = list(plans)
        taken = {(p.resolved.namespace, p.resolved.name): p for p in plans}
        for plan in plans:
            self._ladder(plan, taken)
        return self.plans, self.diagnostics

    def _ladder(self, plan: JobPlan, taken: dict[tuple[str, str], JobPlan]) -> None:
        resolved = plan.resolved
        problem = _checkpoint_problem(plan)
        if problem is not None:
            self.diagnostics.append(problem)
            return
        too_long: list[tuple[int, str, int, str]] = []  # (room left for the job's name, rung, limit, reason)
        for rung in rungs(resolved.nodes.value, resolved.gpus_per_node.value):
            name = rung_name(resolved.name, rung)
            other = taken.get((resolved.namespace, name))
            if other is not None:
                self.diagnostics.append(_collision(resolved, name, other))
                continue
            rung_plan = self._plan(resolved, rung, name)
            budget = dialect_for(engine=rung_plan.engine).name_budget(rung_plan)  # the engine's own names
            if len(name) > budget.max_length:
                room = budget.max_length - (len(name) - len(resolved.name))
                too_long.append((room, name, budget.max_length, budget.reason))
                continue
            self.plans.append(rung_plan)
        if too_long:  # one diagnostic per job, for the rung that needs the shortest job name
            self.diagnostics.append(_too_long(resolved, *min(too_long)))

    def _plan(self, resolved: ResolvedJob, rung: Rung, name: str) -> JobPlan:
        loaded = _rung_spec(resolved, rung, name)
        found, _ = resolve_job(loaded, self.index, resolved.from_project)
        assert found is not None  # the same runtime the job itself resolved against
        return replace(plan_job(found), engine=self.engine_of(found.runtime.loaded))


def expand(
    plans: Iterable[JobPlan], index: RuntimeIndex, engine_of: Callable[[LoadedSpec], Engine]
) -> tuple[list[JobPlan], list[Diagnostic]]:
    """The plans of every job's ladder (see the module docstring) and the diagnostics of rungs that cannot exist."""
    return Expansion(index, engine_of).expand(plans)


def ladder_of(plan: JobPlan) -> tuple[str, str] | None:
    """(the job a rung measures, the rung's tag) from its labels; None for a job that is no rung."""
    labels = plan.resolved.job.metadata.labels
    job, tag = labels.get(LADDER_LABEL), labels.get(LADDER_RUNG_LABEL)
    return (job, tag) if job is not None and tag is not None else None


# -- building a rung's spec -------------------------------------------------------------------------


def _rung_spec(resolved: ResolvedJob, rung: Rung, name: str) -> LoadedSpec:
    """The job's spec as the rung runs it; located where the job is (diagnostics point at its lines)."""
    job = resolved.job
    marks = {LADDER_LABEL: job.metadata.name, LADDER_RUNG_LABEL: rung.tag}
    metadata = job.metadata.model_copy(update={"name": name, "labels": {**job.metadata.labels, **marks}})
    deadline = job.spec.max_run_time
    update: dict[str, object] = {
        "nodes": rung.nodes,
        "max_run_time": deadline
        if deadline is not None and deadline.seconds < RUNG_MAX_RUN_TIME.seconds
        else RUNG_MAX_RUN_TIME,
        "pod_labels": {**job.spec.pod_labels, **marks},
    }
    gpus_per_node = resolved.gpus_per_node.value
    if not rung.whole_nodes:
        gpus_per_node = rung.gpus or 1
        update["procs_per_node"] = 1
        update["resources_per_node"] = _share(resolved, gpus_per_node)
    pinned = job.spec.parallelism
    if pinned is not None:
        update["parallelism"] = _pin(pinned, gpus_per_node, rung.nodes * gpus_per_node)
    checkpoint = job.spec.checkpoint
    if checkpoint is not None and checkpoint.uri is not None:
        update["checkpoint"] = checkpoint.model_copy(update={"uri": rung_uri(checkpoint.uri, rung.tag)})
    spec = job.spec.model_copy(update=update)
    return replace(resolved.loaded, spec=job.model_copy(update={"metadata": metadata, "spec": spec}))


def _pin(pinned: Parallelism, gpus_per_node: int, gpus: int) -> Parallelism:
    """The job's pinned layout as far as a rung of ``gpus`` GPUs can run it.

    ``dp`` is always left to the planner (world size / (tp x pp)); ``tp`` stays when it fits and
    divides the rung's GPUs per node, ``pp`` when tp x pp divides the rung's GPUs. The rest of the
    pin (ZeRO stage, recomputation, framework) is the job's.
    """
    tp, pp = pinned.tp, pinned.pp
    if tp is not None and (tp > gpus_per_node or gpus_per_node % tp):
        tp = None
    if pp is not None and gpus % ((tp or 1) * pp):
        pp = None
    return pinned.model_copy(update={"tp": tp, "pp": pp, "dp": None})


def _share(resolved: ResolvedJob, gpus: int) -> Resources:
    """The node's resources for ``gpus`` of its GPUs: each amount x gpus / GPUs per node, rounded up."""
    per_node = resolved.gpus_per_node.value
    gpu_name = resolved.runtime.spec.spec.gpu_resource
    fields: dict[str, object] = {"gpu": gpus}
    extra: dict[str, str] = {}
    for resource, sourced in resolved.resources.items():
        if resource == gpu_name:
            continue
        amount = str(_scaled(sourced.value, Fraction(gpus, per_node), milli=resource == _CPU))
        if resource in ("cpu", "memory", "ephemeral-storage"):
            fields[resource.replace("-", "_")] = amount
        else:
            extra[resource] = amount
    if extra:
        fields["extra"] = extra
    return Resources.model_validate(fields)


def _scaled(quantity: Quantity, share: Fraction, *, milli: bool) -> Quantity:
    """``quantity`` x ``share``, rounded up to a millicore (CPU) or a whole unit (bytes, devices), never 0."""
    step = Fraction(1, 1000) if milli else Fraction(1)
    amount = quantity.value * share
    rounded = max(math.ceil(amount / step), 1 if quantity.value > 0 else 0) * step
    return Quantity(rounded, quantity.binary)


# -- what stands in a rung's way --------------------------------------------------------------------


def _checkpoint_problem(plan: JobPlan) -> Diagnostic | None:
    resolved = plan.resolved
    ckpt = plan.checkpoint
    if ckpt is None:
        return None
    if ckpt.kind is CheckpointKind.CLAIM:
        return resolved.loaded.diagnostic(
            codes.LADDER_SHARED_CLAIM,
            ("spec", "checkpoint", "claimName"),
            f"the scaling ladder of {resolved.name} cannot use the existing claim {ckpt.claim_name}: every rung "
            "would mount the job's own checkpoints, resume from them and overwrite them",
            hint="for the ladder, give the job checkpoint.size (a new volume per rung) or checkpoint.uri "
            "(a prefix per rung), e.g. through a {{ values.x }} template",
        )
    if ckpt.kind is CheckpointKind.URI and rung_uri(ckpt.path, "1n") is None:
        return resolved.loaded.diagnostic(
            codes.LADDER_BUCKET_ROOT,
            ("spec", "checkpoint", "uri"),
            f"the scaling ladder of {resolved.name} has no place for its rungs' checkpoints beside {ckpt.path}: "
            f"each rung writes under <parent>/{URI_FOLDER}/..., and a bucket root has no parent",
            hint=f"give the job's checkpoints a prefix inside the bucket, e.g. {ckpt.path.rstrip('/')}/{resolved.name}",
        )
    return None


def _collision(resolved: ResolvedJob, name: str, other: JobPlan) -> Diagnostic:
    from trainspec.compiler.resolve import related_at

    namespace = resolved.namespace or DEFAULT_NAMESPACE
    return resolved.loaded.diagnostic(
        codes.LADDER_NAME_TAKEN,
        ("metadata", "name"),
        f"a rung of the scaling ladder of {resolved.name} would be named {name}, the name of another job in "
        f"namespace {namespace}: applying the rung would replace that job",
        hint=f"rename the job {resolved.name} or the job {name}",
        related=(related_at(other.resolved.loaded, ("metadata", "name"), f"job {name} is defined here"),),
    )


def _too_long(resolved: ResolvedJob, room: int, name: str, limit: int, reason: str) -> Diagnostic:
    return resolved.loaded.diagnostic(
        codes.NAME_BUDGET,
        ("metadata", "name"),
        f"the ladder rung {name!r} has {len(name)} characters; with {reason} it may have at most {limit}",
        hint=f"shorten the job's name to {max(room, 1)} characters or fewer: each rung adds "
        f"{len(name) - len(resolved.name)} ({NAME_INFIX}<rung>)",
    )


__all__ = [
    "NAME_INFIX",
    "RUNG_MAX_RUN_TIME",
    "URI_FOLDER",
    "Expansion",
    "Rung",
    "expand",
    "ladder_of",
    "rung_name",
    "rung_uri",
    "rungs",
]
