"""The compiler: one ordered list of passes that every command and the library run.

::

    Sources --load--> Loaded --project--> Projected --resolve--> Resolved --plan--> Planned
            --rules--> Checked --lower(target)--> Lowered --emit--> Rendered

:data:`PASSES` is that chain, in order: each pass is a function from the product of the one
before to its own (:mod:`trainspec.compiler.passes`, one module per pass; the products are
frozen). :func:`run` runs it over some inputs with :class:`Options` (which project file, which
values, which target, where to stop) and builds the :class:`CompileResult` from the products it
reached. ``validate`` stops after ``rules``, ``explain``/``diff``/``check``/``kfp`` after
``lower``, ``compile`` after ``emit``; since every check runs before lowering, each of them reports
exactly the diagnostics the others do for the same inputs. The target picks the lowering dialect
(:func:`trainspec.compiler.lower.dialects.dialect_for`) instead of objects being patched later.

Nothing is lowered once any pass has found an error, and nothing is emitted unless the whole
compile succeeded.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from trainspec.compiler.passes import (
    emit_pass,
    load_pass,
    lower_pass,
    plan_pass,
    project_pass,
    resolve_pass,
    rules_pass,
)
from trainspec.compiler.passes.options import DISCOVER, Options, Stop
from trainspec.compiler.passes.products import (
    Loaded,
    Lowered,
    Output,
    Planned,
    Product,
    Projected,
    Rendered,
    Sources,
)
from trainspec.dsl.diagnostics import Diagnostic, has_errors
from trainspec.dsl.record import Record, TupleRecord, field
from trainspec.dsl.spec.models import Runtime, TrainingJob
from trainspec.dsl.spec.project import Project

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.targets import Target
    from trainspec.dsl.load.loaded import ForeignDoc, LoadedSpec
    from trainspec.dsl.load.pipeline_steps import PipelineGraph

RUNTIMES_DIR = lower_pass.RUNTIMES_DIR


class CompileResult(Record, frozen=False):
    """Everything a run produced: diagnostics and, as far as it went, plans, objects and files."""

    outputs: list[Output] = field(default_factory=list)
    #: The objects of the jobs written inside pipelines (never in ``outputs``: a pipeline runs them).
    pipeline_jobs: list[Output] = field(default_factory=list)
    #: The pipelines whose steps fit together.
    pipelines: list[PipelineGraph] = field(default_factory=list)
    plans: list[JobPlan] = field(default_factory=list)
    #: Every loaded spec, as written (before project defaults).
    specs: list[LoadedSpec] = field(default_factory=list)
    #: The input runtimes after project defaults (what was resolved against and lowered).
    runtimes: list[LoadedSpec] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    project: Project = field(default_factory=Project)
    #: The project file in use (None: no project file).
    project_spec: LoadedSpec | None = None
    target: Target | None = None
    #: How many spec files were read.
    files: int = 0
    #: Documents that were read and left alone as not trainspec's (Kubernetes manifests, ...).
    foreign: list[ForeignDoc] = field(default_factory=list)
    #: Emit: relative path -> file text (Stop.EMIT only).
    files_text: dict[str, str] = field(default_factory=dict)
    #: The passes that ran, in order.
    passes: tuple[str, ...] = ()
    #: The GitOps controller the tree is for: ``--gitops`` over the project's ``spec.gitops``.
    gitops: str | None = None
    #: A streamed run (trainspec.compiler.streaming): how many job specs it read in batches and
    #: let go; their objects went to the run's sink, not to ``outputs``, ``plans`` or ``specs``.
    streamed: int = 0
    #: ... and how many files it read in batches (manifests among them).
    streamed_files: int = 0

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)

    def objects(self) -> list[Any]:
        """All objects in apply order: runtimes, then each job's PVC and TrainJob."""
        return [obj for out in sorted(self.outputs, key=lambda o: (o.wave, o.path)) for obj in out.objects]

    def to_yaml(self, *, gitops: str | None = None) -> str:
        """Every object as one YAML stream, in apply order (what ``compile -o -`` prints)."""
        from trainspec.compiler.emit import render_stream

        return render_stream(self.outputs, gitops=gitops or self.gitops)


class Pass(TupleRecord):
    """One compiler pass: a name, the function (``(product, options) -> next product``), and
    whether it runs after an error."""

    name: str
    run: Callable[[Any, Options], Product]
    #: Passes that produce objects stop at the first error; checking passes always run.
    needs_clean: bool = False


#: The compiler, in order. Every command and the library run these, and only these.
PASSES: tuple[Pass, ...] = (
    Pass("load", load_pass.load),  # Sources -> Loaded
    Pass("project", project_pass.project),  # Loaded -> Projected
    Pass("resolve", resolve_pass.resolve),  # Projected -> Resolved
    Pass("plan", plan_pass.plan),  # Resolved -> Planned
    Pass("rules", rules_pass.check),  # Planned -> Checked
    Pass("lower", lower_pass.lower, needs_clean=True),  # Checked -> Lowered
    Pass("emit", emit_pass.emit, needs_clean=True),  # Lowered -> Rendered
)


def run(inputs: Iterable[str | os.PathLike[str] | Any] = (), options: Options | None = None) -> CompileResult:
    """Run the compiler over ``inputs`` (paths, and/or spec objects built in Python).

    Returns every diagnostic of every pass that ran, sorted by location; plans, objects and
    files as far as ``options.stop`` and the absence of errors allow.
    """
    return run_reaching(inputs, options)[0]


def run_reaching(
    inputs: Iterable[str | os.PathLike[str] | Any] = (), options: Options | None = None
) -> tuple[CompileResult, list[Product]]:
    """:func:`run`, and the products the passes reached (for a caller that reads more than the result)."""
    options = options or Options()
    with collector_tuned():
        reached, found, ran = run_passes(sources(inputs), options)
    return result_of(reached, sorted(dict.fromkeys(found), key=Diagnostic.sort_key), ran), reached


def run_passes(product: Product, options: Options) -> tuple[list[Product], list[Diagnostic], tuple[str, ...]]:
    """:data:`PASSES` from ``product`` (a :class:`Sources`) up to ``options.stop``: the products
    reached, every diagnostic in pass order, and the passes that ran."""
    reached: list[Product] = []
    found: list[Diagnostic] = []
    ran: list[str] = []
    for index, step in enumerate(PASSES):
        if step.needs_clean and has_errors(found):
            break
        if options.progress is not None:
            options.progress(step.name, index, len(PASSES))
        product = step.run(product, options)
        reached.append(product)
        found += product.diagnostics
        ran.append(step.name)
        if step.name == options.stop.value:
            break
    return reached, found, tuple(ran)


@contextmanager
def collector_tuned() -> Iterator[None]:
    """Rarer young-generation collections while a run builds its products.

    A run builds many long-lived objects and no reference cycles (tests/compiler/
    test_no_reference_cycles.py); at the default thresholds the collector's full passes walk that
    growing heap again and again (10,000 specs cost 1.2x more per spec than 1,000). Collection
    stays on, and the caller's thresholds come back after.
    """
    thresholds = gc.get_threshold()
    if thresholds[0]:  # 0: collection is off, leave it so
        gc.set_threshold(max(thresholds[0], _GC_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


#: Allocations between young-generation collections during a run (CPython's default is 700).
_GC_THRESHOLD = 50_000


def sources(inputs: Iterable[str | os.PathLike[str] | Any]) -> Sources:
    """The load pass's input: paths as given, and specs built in Python as loaded specs."""
    from trainspec.dsl.load.loaded import LoadedSpec

    paths: list[str] = []
    objects: list[LoadedSpec] = []
    for item in inputs:
        if isinstance(item, (str, os.PathLike)):
            paths.append(os.fspath(item))
        elif isinstance(item, LoadedSpec):
            objects.append(item)
        elif isinstance(item, (Runtime, TrainingJob, Project)):
            objects.append(LoadedSpec(spec=item, file="<python>", origin=_python_origin(item)))
        else:
            raise TypeError(f"cannot compile {type(item).__name__}: give paths, Runtime or TrainingJob objects")
    return Sources(paths=tuple(paths), objects=tuple(objects))


def _python_origin(spec: Any) -> Any:
    from trainspec.dsl.load.strict_yaml import Mark

    created = getattr(spec, "created_at", None)
    return Mark(*created) if created else Mark(1, 1)


def result_of(reached: list[Product], diagnostics: list[Diagnostic], passes: tuple[str, ...]) -> CompileResult:
    """The public result, from the products a run reached (``diagnostics`` sorted; no objects or
    files after an error)."""
    last = {type(product): product for product in reached}
    loaded, projected = last.get(Loaded), last.get(Projected)
    planned, lowered, rendered = last.get(Planned), last.get(Lowered), last.get(Rendered)
    clean = not has_errors(diagnostics)
    assert loaded is None or isinstance(loaded, Loaded)
    assert projected is None or isinstance(projected, Projected)
    assert planned is None or isinstance(planned, Planned)
    assert lowered is None or isinstance(lowered, Lowered)
    assert rendered is None or isinstance(rendered, Rendered)
    return CompileResult(
        outputs=list(lowered.outputs) if lowered is not None and clean else [],
        pipeline_jobs=list(lowered.pipeline_jobs) if lowered is not None and clean else [],
        pipelines=list(loaded.pipelines) if loaded is not None else [],
        plans=list(planned.plans) if planned is not None else [],
        specs=list(loaded.specs) if loaded is not None else [],
        runtimes=list(projected.runtimes) if projected is not None else [],
        diagnostics=diagnostics,
        project=projected.project if projected is not None else Project(),
        project_spec=projected.project_spec if projected is not None else None,
        target=projected.target if projected is not None else None,
        files=loaded.files if loaded is not None else 0,
        foreign=list(loaded.foreign) if loaded is not None else [],
        files_text=dict(rendered.files_text) if rendered is not None and clean else {},
        passes=passes,
        gitops=projected.gitops if projected is not None else None,
    )


# -- compatibility entry points (used by tests and tools; both run the same passes) -----------------


def compile_paths(
    paths: list[str],
    *,
    values: dict[str, Any] | None = None,
    extra_specs: Iterable[LoadedSpec] = (),
    project: str | None = None,
    lower: bool = True,
    target: Mapping[str, Any] | None = None,
) -> CompileResult:
    """:func:`run` over ``paths`` with an explicit project file (None: none)."""
    return run(
        [*paths, *extra_specs],
        Options(project=project, values=values, target=target, stop=Stop.LOWER if lower else Stop.VALIDATE),
    )


def compile_specs(specs: list[LoadedSpec], *, lower: bool = True) -> CompileResult:
    """:func:`run` over specs already loaded, without a project file unless one is among them."""
    return run(specs, Options(project=None, stop=Stop.LOWER if lower else Stop.VALIDATE))


__all__ = [
    "DISCOVER",
    "PASSES",
    "RUNTIMES_DIR",
    "CompileResult",
    "Options",
    "Output",
    "Pass",
    "Stop",
    "compile_paths",
    "compile_specs",
    "run",
    "run_reaching",
    "sources",
]
