"""The *resolve* pass: find each job's runtime and settle every value, remembering its origin.

A value comes from the job, the runtime, the project defaults or a built-in default. Keeping
that origin lets a diagnostic say "nodes=16 from the job, runtime torch-h100 caps at 8".
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from trainspec.dsl.diagnostics import Diagnostic, Related
from trainspec.dsl.models import Framework, Runtime, Scope, TrainingJob
from trainspec.dsl.sources import LoadedSpec
from trainspec.dsl.types import Quantity

T = TypeVar("T")
DEFAULT_NAMESPACE = "default"


class Origin(str, enum.Enum):
    """Where a resolved value came from."""

    JOB = "job"
    RUNTIME = "runtime"
    PROJECT = "project defaults"
    DEFAULT = "built-in default"


@dataclass(frozen=True)
class Sourced(Generic[T]):
    """A value and where it came from (``path`` is the field path in that spec)."""

    value: T
    origin: Origin
    path: tuple = ()

    def describe(self, what: str) -> str:
        return f"{what}={self.value} from the {self.origin.value}"


@dataclass(frozen=True)
class RuntimeEntry:
    """A runtime available to jobs: from the inputs or the built-in catalog."""

    loaded: LoadedSpec
    builtin: bool

    @property
    def spec(self) -> Runtime:
        return self.loaded.spec  # type: ignore[return-value]

    @property
    def name(self) -> str:
        return self.loaded.name


@dataclass
class RuntimeIndex:
    """Runtimes by name: namespaced ones win over cluster ones, inputs over built-ins.

    Built-in runtimes are looked up through ``builtin`` only when no input runtime has the
    name, so a run reads just the catalog entries its jobs use.
    """

    cluster: dict[str, RuntimeEntry] = field(default_factory=dict)
    namespaced: dict[tuple[str, str], RuntimeEntry] = field(default_factory=dict)
    builtin: Callable[[str], LoadedSpec | None] | None = None
    builtin_names: tuple[str, ...] = ()

    def add(self, entry: RuntimeEntry) -> None:
        if entry.spec.spec.scope is Scope.NAMESPACE:
            self.namespaced[(entry.loaded.namespace or DEFAULT_NAMESPACE, entry.name)] = entry
        else:
            self.cluster[entry.name] = entry

    def find(self, namespace: str, name: str) -> RuntimeEntry | None:
        found = self.namespaced.get((namespace, name)) or self.cluster.get(name)
        if found is None and self.builtin is not None and name in self.builtin_names:
            loaded = self.builtin(name)
            if loaded is not None:
                found = self.cluster[name] = RuntimeEntry(loaded, builtin=True)
        return found

    def namespaces_of(self, name: str) -> list[str]:
        """Namespaces that hold a namespaced runtime called ``name``."""
        return sorted(ns for ns, runtime in self.namespaced if runtime == name)

    def names(self) -> list[str]:
        return sorted(set(self.cluster) | {name for _, name in self.namespaced} | set(self.builtin_names))


@dataclass(frozen=True)
class ResolvedJob:
    """A job with its runtime found and its values settled."""

    loaded: LoadedSpec
    runtime: RuntimeEntry
    namespace: str
    image: Sourced[str]
    command: Sourced[list[str]] | None
    nodes: Sourced[int]
    procs_per_node: Sourced[int]
    gpus_per_node: Sourced[int]
    #: Kubernetes resource name -> quantity, merged runtime <- network <- job.
    resources: dict[str, Sourced[Quantity]]
    #: Fields the project defaults filled in (``queue``, ``namespace``, ...).
    from_project: frozenset[str] = frozenset()

    def origin_of(self, field: str) -> Origin:
        """Origin of a job-level field that project defaults may fill."""
        return Origin.PROJECT if field in self.from_project else Origin.JOB

    @property
    def job(self) -> TrainingJob:
        return self.loaded.spec  # type: ignore[return-value]

    @property
    def name(self) -> str:
        return self.loaded.name

    @property
    def framework(self) -> Framework:
        return self.runtime.spec.spec.framework

    @property
    def world_size(self) -> int:
        return self.nodes.value * self.procs_per_node.value


def build_index(runtimes: list[LoadedSpec], builtin: Callable[[str], LoadedSpec | None] | None = None,
                builtin_names: tuple[str, ...] = ()) -> RuntimeIndex:
    """Index the input runtimes; ``builtin(name)`` supplies a catalog runtime on demand."""
    index = RuntimeIndex(builtin=builtin, builtin_names=builtin_names)
    for loaded in runtimes:
        index.add(RuntimeEntry(loaded, builtin=False))
    return index


def resolve_job(loaded: LoadedSpec, index: RuntimeIndex,
                from_project: frozenset[str] = frozenset()) -> tuple[ResolvedJob | None, list[Diagnostic]]:
    """Resolve one job against the runtimes; None when its runtime cannot be found."""
    job: TrainingJob = loaded.spec  # type: ignore[assignment]
    namespace = job.metadata.namespace or DEFAULT_NAMESPACE
    entry = index.find(namespace, job.spec.runtime)
    if entry is None:
        elsewhere = index.namespaces_of(job.spec.runtime)
        if elsewhere:
            return None, [loaded.diagnostic(
                "TS404", ("spec", "runtime"),
                f"runtime {job.spec.runtime} is a TrainingRuntime in namespace {', '.join(elsewhere)}; "
                f"jobs in namespace {namespace} cannot use it",
                hint="run the job in that namespace, or make the runtime cluster-scoped (scope: cluster)",
            )]
        return None, [_unknown_runtime(loaded, namespace, index)]
    problems: list[Diagnostic] = []
    runtime = entry.spec.spec

    nodes = _pick(loaded, ("spec", "nodes"), job.spec.nodes, runtime.nodes)
    resources = _resources(loaded, entry)
    gpu_name = runtime.gpu_resource
    gpus = resources.get(gpu_name)
    gpus_per_node = Sourced(int(gpus.value.value), gpus.origin, gpus.path) if gpus else Sourced(0, Origin.DEFAULT)
    procs = _procs(loaded, entry, gpus_per_node)
    image = _pick(loaded, ("spec", "image"), job.spec.image, runtime.image)
    command = None
    if job.spec.command is not None:
        command = Sourced(list(job.spec.command), Origin.JOB, ("spec", "command"))
    elif runtime.command is not None:
        command = Sourced(list(runtime.command), Origin.RUNTIME, ("spec", "command"))
    return ResolvedJob(
        loaded=loaded, runtime=entry, namespace=namespace, image=image, command=command, nodes=nodes,
        procs_per_node=procs, gpus_per_node=gpus_per_node, resources=resources, from_project=from_project,
    ), problems


def _pick(loaded: LoadedSpec, path: tuple, job_value: T | None, runtime_value: T) -> Sourced[T]:
    if job_value is not None:
        return Sourced(job_value, Origin.JOB, path)
    return Sourced(runtime_value, Origin.RUNTIME, path)


def _procs(loaded: LoadedSpec, entry: RuntimeEntry, gpus: Sourced[int]) -> Sourced[int]:
    job: TrainingJob = loaded.spec  # type: ignore[assignment]
    if job.spec.procs_per_node is not None:
        return Sourced(job.spec.procs_per_node, Origin.JOB, ("spec", "procsPerNode"))
    if entry.spec.spec.procs_per_node is not None:
        return Sourced(entry.spec.spec.procs_per_node, Origin.RUNTIME, ("spec", "procsPerNode"))
    if entry.spec.spec.framework is Framework.JAX:
        return Sourced(1, Origin.DEFAULT)  # one JAX process drives all GPUs of its node
    if gpus.value > 0:
        return Sourced(gpus.value, gpus.origin, gpus.path)
    return Sourced(1, Origin.DEFAULT)


def _resources(loaded: LoadedSpec, entry: RuntimeEntry) -> dict[str, Sourced[Quantity]]:
    """Merge per-node resources: runtime, then its network devices, then the job's overrides."""
    runtime = entry.spec.spec
    merged: dict[str, Sourced[Quantity]] = {}
    if runtime.resources_per_node is not None:
        for name, value in resource_items(runtime.resources_per_node, runtime.gpu_resource):
            merged[name] = Sourced(value, Origin.RUNTIME, ("spec", "resourcesPerNode"))
    if runtime.network is not None:
        for name, value in sorted(runtime.network.resources.items()):
            merged[name] = Sourced(value, Origin.RUNTIME, ("spec", "network", "resources", name))
    job: TrainingJob = loaded.spec  # type: ignore[assignment]
    if job.spec.resources_per_node is not None:
        for name, value in resource_items(job.spec.resources_per_node, runtime.gpu_resource):
            merged[name] = Sourced(value, Origin.JOB, ("spec", "resourcesPerNode"))
    return dict(sorted(merged.items()))


def resource_items(resources, gpu_resource: str) -> list[tuple[str, Quantity]]:
    """A ``Resources`` model as (Kubernetes resource name, quantity) pairs."""
    items: list[tuple[str, Quantity]] = []
    if resources.gpu is not None:
        items.append((gpu_resource, Quantity.parse(resources.gpu)))
    for name, value in (("cpu", resources.cpu), ("memory", resources.memory),
                        ("ephemeral-storage", resources.ephemeral_storage)):
        if value is not None:
            items.append((name, value))
    items.extend(sorted(resources.extra.items()))
    return items


def _unknown_runtime(loaded: LoadedSpec, namespace: str, index: RuntimeIndex) -> Diagnostic:
    job: TrainingJob = loaded.spec  # type: ignore[assignment]
    names = index.names()
    close = difflib.get_close_matches(job.spec.runtime, names, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else f"runtimes available: {', '.join(names)}"
    return loaded.diagnostic(
        "TS305", ("spec", "runtime"),
        f"runtime {job.spec.runtime!r} is not among the inputs nor in the built-in catalog "
        f"(namespace {namespace})", hint=hint,
    )


def related_at(loaded: LoadedSpec, path: tuple, message: str) -> Related:
    """A pointer into another spec (for example the runtime a job conflicts with)."""
    mark = loaded.mark(path)
    return Related(message=message, file=loaded.file, line=mark.line, column=mark.column)


__all__ = [
    "DEFAULT_NAMESPACE", "Origin", "ResolvedJob", "RuntimeEntry", "RuntimeIndex", "Sourced",
    "build_index", "related_at", "resolve_job", "resource_items",
]
