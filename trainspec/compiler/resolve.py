"""The *resolve* pass: find each job's runtime and settle every value, remembering its origin.

A value comes from the job, the runtime, the project defaults or a built-in default. Keeping
that origin lets a diagnostic say "nodes=16 from the job, runtime torch-h100 caps at 8".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from trainspec.compiler.provenance import Origin, Sourced
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Related
from trainspec.dsl.framework.types import Quantity
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.record import Record, field
from trainspec.dsl.spec.models import Framework, NodeRange, Resources, Runtime, Scope, TrainingJob

T = TypeVar("T")
DEFAULT_NAMESPACE = "default"


class RuntimeEntry(Record):
    """A runtime available to jobs: from the inputs, trainspec's built-ins or Kubeflow Trainer's own.

    ``builtin`` marks trainspec's hardened catalog (emitted when a job uses it); Kubeflow
    Trainer's runtimes are never ``builtin`` but ``external``.
    """

    loaded: LoadedSpec
    builtin: bool
    #: Replicated jobs the runtime runs before the trainer (Kubeflow Trainer's torchtune
    #: runtimes: dataset- and model-initializer); their pod names count in the name budget.
    initializers: tuple[str, ...] = ()

    @property
    def spec(self) -> Runtime:
        return self.loaded.spec

    @property
    def external(self) -> bool:
        """The runtime exists in the cluster already: jobs resolve against it, trainspec never emits it.

        True for Kubeflow Trainer's own runtimes (``torch-distributed``, ...) and for a Runtime
        spec with ``spec.external: true`` (another team's runtime).
        """
        return bool(self.spec.spec.external)

    @property
    def name(self) -> str:
        return self.loaded.name


class RuntimeIndex(Record, frozen=False):
    """Runtimes by name: namespaced ones win over cluster ones, inputs over built-ins.

    Built-in runtimes are looked up through ``builtin`` only when no input runtime has the
    name, so a run reads just the catalog entries its jobs use. Last come Kubeflow Trainer's
    own runtimes (``upstream``): external entries, resolved against but never emitted. The two
    catalogs never share a name.
    """

    cluster: dict[str, RuntimeEntry] = field(default_factory=dict)
    namespaced: dict[tuple[str, str], RuntimeEntry] = field(default_factory=dict)
    builtin: Callable[[str], LoadedSpec | None] | None = None
    builtin_names: tuple[str, ...] = ()
    #: Whether jobs may name the runtimes Kubeflow Trainer installs (trainspec.runtimes.upstream).
    upstream: bool = True

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
        if found is None and self.upstream:
            found = self._upstream(name)
        return found

    def _upstream(self, name: str) -> RuntimeEntry | None:
        from trainspec.runtimes.upstream import upstream_entry, upstream_runtime

        loaded = upstream_runtime(name)
        if loaded is None:
            return None
        entry = upstream_entry(name)
        initializers = entry.initializers if entry is not None else ()
        found = self.cluster[name] = RuntimeEntry(loaded, builtin=False, initializers=initializers)
        return found

    def unmodeled(self, name: str) -> str | None:
        """The framework of Kubeflow Trainer's runtime ``name`` when trainspec does not model it."""
        if not self.upstream:
            return None
        from trainspec.runtimes.upstream import unmodeled

        entry = unmodeled(name)
        return entry.framework if entry is not None else None

    def namespaces_of(self, name: str) -> list[str]:
        """Namespaces that hold a namespaced runtime called ``name``."""
        return sorted(ns for ns, runtime in self.namespaced if runtime == name)

    def names(self) -> list[str]:
        """Every runtime name a job may use (for did-you-mean hints)."""
        upstream: tuple[str, ...] = ()
        if self.upstream:
            from trainspec.runtimes.upstream import upstream_names

            upstream = upstream_names()
        return sorted(
            set(self.cluster) | {name for _, name in self.namespaced} | set(self.builtin_names) | set(upstream)
        )


class ResolvedJob(Record):
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
    #: The job's elastic node range (``nodes: {min, max}``); ``nodes`` then holds its max, the
    #: count everything sized by nodes (quota, volumes, names, world size) must allow for.
    node_range: Sourced[NodeRange] | None = None

    def origin_of(self, field: str) -> Origin:
        """Origin of a job-level field that project defaults may fill."""
        return Origin.PROJECT if field in self.from_project else Origin.JOB

    @property
    def job(self) -> TrainingJob:
        return self.loaded.spec

    @property
    def name(self) -> str:
        return self.loaded.name

    @property
    def framework(self) -> Framework:
        return self.runtime.spec.spec.framework

    @property
    def world_size(self) -> int:
        return self.nodes.value * self.procs_per_node.value


def build_index(
    runtimes: list[LoadedSpec],
    builtin: Callable[[str], LoadedSpec | None] | None = None,
    builtin_names: tuple[str, ...] = (),
) -> RuntimeIndex:
    """Index the input runtimes; ``builtin(name)`` supplies a catalog runtime on demand."""
    index = RuntimeIndex(builtin=builtin, builtin_names=builtin_names)
    for loaded in runtimes:
        index.add(RuntimeEntry(loaded, builtin=False))
    return index


def resolve_job(
    loaded: LoadedSpec, index: RuntimeIndex, from_project: frozenset[str] = frozenset()
) -> tuple[ResolvedJob | None, list[Diagnostic]]:
    """Resolve one job against the runtimes; None when its runtime cannot be found."""
    job: TrainingJob = loaded.spec
    namespace = job.metadata.namespace or DEFAULT_NAMESPACE
    entry = index.find(namespace, job.spec.runtime)
    if entry is None:
        elsewhere = index.namespaces_of(job.spec.runtime)
        if elsewhere:
            return None, [
                loaded.diagnostic(
                    codes.NAMESPACED_RUNTIME,
                    ("spec", "runtime"),
                    f"runtime {job.spec.runtime} is a TrainingRuntime in namespace {', '.join(elsewhere)}; "
                    f"jobs in namespace {namespace} cannot use it",
                    hint="run the job in that namespace, or make the runtime cluster-scoped (scope: cluster)",
                )
            ]
        framework = index.unmodeled(job.spec.runtime)
        if framework is not None:
            return None, [_unmodeled_runtime(loaded, framework, index)]
        return None, [_unknown_runtime(loaded, namespace, index)]
    problems: list[Diagnostic] = []
    runtime = entry.spec.spec

    node_range = None
    if isinstance(job.spec.nodes, NodeRange):
        node_range = Sourced(job.spec.nodes, Origin.JOB, ("spec", "nodes"), loaded)
        nodes = Sourced(job.spec.nodes.max, Origin.JOB, ("spec", "nodes", "max"), loaded)
    else:
        nodes = _pick(loaded, entry.loaded, ("spec", "nodes"), job.spec.nodes, runtime.nodes)
    resources = _resources(loaded, entry)
    gpu_name = runtime.gpu_resource
    gpus = resources.get(gpu_name)
    gpus_per_node = (
        Sourced(int(gpus.value.value), gpus.origin, gpus.path, gpus.spec) if gpus else Sourced(0, Origin.DEFAULT)
    )
    procs = _procs(loaded, entry, gpus_per_node)
    image = _pick(loaded, entry.loaded, ("spec", "image"), job.spec.image, runtime.image)
    command = None
    if job.spec.command is not None:
        command = Sourced(list(job.spec.command), Origin.JOB, ("spec", "command"), loaded)
    elif runtime.command is not None:
        command = Sourced(list(runtime.command), Origin.RUNTIME, ("spec", "command"), entry.loaded)
    return ResolvedJob(
        loaded=loaded,
        runtime=entry,
        namespace=namespace,
        image=image,
        command=command,
        nodes=nodes,
        procs_per_node=procs,
        gpus_per_node=gpus_per_node,
        resources=resources,
        from_project=from_project,
        node_range=node_range,
    ), problems


def _pick(loaded: LoadedSpec, runtime: LoadedSpec, path: tuple, job_value: T | None, runtime_value: T) -> Sourced[T]:
    if job_value is not None:
        return Sourced(job_value, Origin.JOB, path, loaded)
    return Sourced(runtime_value, Origin.RUNTIME, path, runtime)


def _procs(loaded: LoadedSpec, entry: RuntimeEntry, gpus: Sourced[int]) -> Sourced[int]:
    job: TrainingJob = loaded.spec
    if job.spec.procs_per_node is not None:
        return Sourced(job.spec.procs_per_node, Origin.JOB, ("spec", "procsPerNode"), loaded)
    if entry.spec.spec.procs_per_node is not None:
        return Sourced(entry.spec.spec.procs_per_node, Origin.RUNTIME, ("spec", "procsPerNode"), entry.loaded)
    if entry.spec.spec.framework is Framework.JAX:
        return Sourced(1, Origin.DEFAULT)  # one JAX process drives all GPUs of its node
    if gpus.value > 0:
        return Sourced(gpus.value, gpus.origin, gpus.path, gpus.spec)
    return Sourced(1, Origin.DEFAULT)


def _resources(loaded: LoadedSpec, entry: RuntimeEntry) -> dict[str, Sourced[Quantity]]:
    """Merge per-node resources: runtime, then its network devices, then the job's overrides."""
    runtime = entry.spec.spec
    merged: dict[str, Sourced[Quantity]] = {}
    if runtime.resources_per_node is not None:
        for name, value in resource_items(runtime.resources_per_node, runtime.gpu_resource):
            merged[name] = Sourced(value, Origin.RUNTIME, ("spec", "resourcesPerNode"), entry.loaded)
    if runtime.network is not None:
        for name, value in sorted(runtime.network.resources.items()):
            merged[name] = Sourced(value, Origin.RUNTIME, ("spec", "network", "resources", name), entry.loaded)
    job: TrainingJob = loaded.spec
    if job.spec.resources_per_node is not None:
        for name, value in resource_items(job.spec.resources_per_node, runtime.gpu_resource):
            merged[name] = Sourced(value, Origin.JOB, ("spec", "resourcesPerNode"), loaded)
    return dict(sorted(merged.items()))


def resource_items(resources: Resources, gpu_resource: str) -> list[tuple[str, Quantity]]:
    """A ``Resources`` model as (Kubernetes resource name, quantity) pairs."""
    items: list[tuple[str, Quantity]] = []
    if resources.gpu is not None:
        items.append((gpu_resource, Quantity.parse(resources.gpu)))
    for name, value in (
        ("cpu", resources.cpu),
        ("memory", resources.memory),
        ("ephemeral-storage", resources.ephemeral_storage),
    ):
        if value is not None:
            items.append((name, value))
    items.extend(sorted(resources.extra.items()))
    return items


def _unknown_runtime(loaded: LoadedSpec, namespace: str, index: RuntimeIndex) -> Diagnostic:
    import difflib  # only for a runtime that is not found: not on every run's start-up path

    job: TrainingJob = loaded.spec
    names = index.names()
    close = difflib.get_close_matches(job.spec.runtime, names, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else f"runtimes available: {', '.join(names)}"
    return loaded.diagnostic(
        codes.RUNTIME_NOT_FOUND,
        ("spec", "runtime"),
        f"runtime {job.spec.runtime!r} is not among the inputs, the built-in catalog nor Kubeflow Trainer's "
        f"runtimes (namespace {namespace})",
        hint=hint,
    )


def _unmodeled_runtime(loaded: LoadedSpec, framework: str, index: RuntimeIndex) -> Diagnostic:
    job: TrainingJob = loaded.spec
    frameworks = ", ".join(f.value for f in Framework)
    own = ", ".join(index.builtin_names) or "a Runtime of your own"
    return loaded.diagnostic(
        codes.UNMODELLED_FRAMEWORK,
        ("spec", "runtime"),
        f"runtime {job.spec.runtime} is Kubeflow Trainer's {framework} runtime; trainspec does not model "
        f"framework {framework} (only {frameworks}), so it cannot compile a job for it",
        hint=f"use a runtime of a framework trainspec knows ({own}), or write this TrainJob by hand",
    )


def related_at(loaded: LoadedSpec, path: tuple, message: str) -> Related:
    """A pointer into another spec (for example the runtime a job conflicts with)."""
    mark = loaded.mark(path)
    return Related(message=message, file=loaded.file, line=mark.line, column=mark.column)


__all__ = [
    "DEFAULT_NAMESPACE",
    "Origin",
    "ResolvedJob",
    "RuntimeEntry",
    "RuntimeIndex",
    "Sourced",
    "build_index",
    "related_at",
    "resolve_job",
    "resource_items",
]
