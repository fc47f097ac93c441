"""What each pass hands to the next: frozen, typed products.

::

    Sources -> Loaded -> Projected -> Resolved -> Planned -> Checked -> Lowered -> Rendered

Every product holds what the passes after it read, and the diagnostics of the pass that made
it (the run gathers them). :class:`Projected` is the run's configuration (the project file, the
target, the input runtimes with the project's defaults filled in); the products after it carry
it on, as :class:`Checked` carries the plans on to the lowering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainspec.dsl.record import Record, field

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trainspec.compiler.engines import Engine
    from trainspec.compiler.lower.dialects import Dialect
    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.provenance import FieldSources
    from trainspec.compiler.resolve import ResolvedJob, RuntimeEntry, RuntimeIndex
    from trainspec.compiler.targets import Target
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.dsl.load.loaded import ForeignDoc, LoadedSpec
    from trainspec.dsl.load.pipeline_steps import PipelineGraph
    from trainspec.dsl.spec.project import Project

Diagnostics = tuple["Diagnostic", ...]


class Sources(Record):
    """The inputs of a run: paths (files, directories, ``-`` for standard input) and specs built in code."""

    paths: tuple[str, ...] = ()
    objects: tuple[LoadedSpec, ...] = ()
    #: Nothing is found before the first pass (every product has the field).
    diagnostics: Diagnostics = ()


class Loaded(Record):
    """Every spec read, as written (the project file among them), and what was left alone."""

    specs: tuple[LoadedSpec, ...]
    #: How many spec files were read.
    files: int
    #: Documents that were read and left alone as not trainspec's (Kubernetes manifests, ...).
    foreign: tuple[ForeignDoc, ...]
    diagnostics: Diagnostics = ()
    #: The pipelines whose steps fit together (their inline jobs are among ``specs``).
    pipelines: tuple[PipelineGraph, ...] = ()
    #: How many Pipeline specs were read (fitting together or not).
    pipeline_specs: int = 0


class Projected(Record):
    """The run's configuration: the project file in use, the target, and the specs with its defaults."""

    project: Project
    #: The project file in use (None: no project file).
    project_spec: LoadedSpec | None
    target: Target
    #: The GitOps controller the tree is for: ``--gitops`` over the project's ``spec.gitops``.
    gitops: str | None
    #: The input runtimes after project defaults (what jobs resolve against and what is lowered).
    runtimes: tuple[LoadedSpec, ...]
    #: The jobs after project defaults, each with the names of the fields the defaults filled.
    jobs: tuple[tuple[LoadedSpec, frozenset[str]], ...]
    #: The engine ``--target`` chose for every runtime (None: each runtime's or the project's).
    engine: str | None = None
    diagnostics: Diagnostics = ()


class Resolved(Record):
    """Each job's runtime found and every value with its origin."""

    projected: Projected
    index: RuntimeIndex
    jobs: tuple[ResolvedJob, ...]
    diagnostics: Diagnostics = ()


class Dialects(Record):
    """Which lowering dialect each runtime's jobs get: one instance per engine in use."""

    target: Target
    #: The engine ``--target`` chose (None: the runtime's ``spec.engine``, else the target's).
    chosen: str | None
    by_engine: Mapping[Engine, Dialect] = field(default_factory=dict)

    def engine_of(self, runtime: LoadedSpec) -> Engine:
        """A runtime's engine: ``--target`` over the runtime's ``spec.engine`` over the project's."""
        from trainspec.compiler.engines import engine_named

        chosen = self.chosen
        if chosen is None and runtime.spec.spec.engine is not None:
            chosen = runtime.spec.spec.engine.value
        return engine_named(chosen or self.target.engine)

    def dialect_of(self, runtime: LoadedSpec) -> Dialect:
        """The dialect that lowers ``runtime`` and its jobs."""
        return self.by_engine[self.engine_of(runtime)]


class Planned(Record):
    """What each job becomes (:class:`~trainspec.compiler.plan.JobPlan`: every decision made once
    per job) and the dialect of each engine in use."""

    projected: Projected
    plans: tuple[JobPlan, ...]
    dialects: Dialects
    diagnostics: Diagnostics = ()


class Checked(Record):
    """The plans with every rule run, and the built-in runtimes the jobs use (emitted once each)."""

    planned: Planned
    #: (object name, the catalog entry, the first job that uses it), sorted by name.
    builtins: tuple[tuple[str, RuntimeEntry, LoadedSpec], ...] = ()
    diagnostics: Diagnostics = ()


class Output(Record):
    """One output file: its path relative to the output directory and its objects, in apply order."""

    path: str
    objects: tuple[Any, ...]  # trainspec.k8s resources
    sources: tuple[str, ...]
    #: 0 = runtimes, 1 = jobs; the apply order of files.
    wave: int
    #: For each object, where each of its fields came from (same order as ``objects``).
    provenance: tuple[FieldSources, ...] = field(default=(), compare=False, repr=False)


class Lowered(Record):
    """The typed objects of every output file, in apply order."""

    outputs: tuple[Output, ...]
    gitops: str | None
    diagnostics: Diagnostics = ()
    #: The objects of the jobs written inside pipelines: run by the pipeline (the launcher), never
    #: written into an output tree, where a GitOps sync would start them; checked like the rest.
    pipeline_jobs: tuple[Output, ...] = ()


class Rendered(Record):
    """The text of every output file: relative path -> text."""

    files_text: Mapping[str, str]
    diagnostics: Diagnostics = ()


#: A product of any pass.
Product = Sources | Loaded | Projected | Resolved | Planned | Checked | Lowered | Rendered
