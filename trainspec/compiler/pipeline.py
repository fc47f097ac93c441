"""The compiler: one ordered list of passes that every command and the library run.

::

    load -> project -> resolve -> plan -> rules -> lower(target) -> emit

:data:`PASSES` is that list, in order; :func:`run` runs it over some inputs with
:class:`Options` (which project file, which values, which target, where to stop). ``validate``
stops after ``rules``, ``explain``/``diff``/``check``/``kfp`` after ``lower``, ``compile`` after
``emit``; since every check runs before lowering, each of them reports exactly the diagnostics the
others do for the same inputs. The target picks the lowering dialect
(:func:`trainspec.compiler.lower.dialects.dialect_for`) instead of objects being patched later.

Nothing is lowered once any pass has found an error, and nothing is emitted unless the whole
compile succeeded.
"""

from __future__ import annotations

import enum
import gc
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainspec.compiler.resolve import DEFAULT_NAMESPACE
from trainspec.dsl.diagnostics import Diagnostic, has_errors
from trainspec.dsl.models import Runtime, Scope, TrainingJob
from trainspec.dsl.project import Project
from trainspec.dsl.record import Record, TupleRecord, field

if TYPE_CHECKING:
    from trainspec.compiler.lower.dialects import TrainerDialect
    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.provenance import FieldSources
    from trainspec.compiler.resolve import ResolvedJob, RuntimeEntry, RuntimeIndex
    from trainspec.compiler.targets import Target
    from trainspec.dsl.sources import ForeignDoc, LoadedSpec
    from trainspec.dsl.yaml_loader import LoadLimits

RUNTIMES_DIR = "runtimes"


class Stop(str, enum.Enum):
    """The last pass a run goes through."""

    CHECK = "rules"  # every diagnostic, no objects (validate)
    LOWER = "lower"  # typed Kubernetes objects (explain, diff, check, kfp, the library)
    EMIT = "emit"  # rendered files as well (compile)


class _Discover:
    """Find ``trainspec.yaml`` as the CLI does: from the working directory upwards to the repo root."""

    def __repr__(self) -> str:
        return "DISCOVER"


#: ``Options.project`` value: discover the project file (the default, for the CLI and the library).
DISCOVER: Any = _Discover()


class Options(Record):
    """How to compile: everything a command's flags or a library caller can choose.

    ``project``: :data:`DISCOVER` (default), a path to a project file, a :class:`Project`
    object, or None for no project file. ``values`` and ``values_files`` feed ``{{ values.x }}``
    (files are layered first, then ``values`` on top). ``target`` is the ``--target`` option
    (fields given there win over the project file's ``spec.target``).
    """

    project: Any = DISCOVER
    #: Where project discovery starts (default: the working directory).
    cwd: str | None = None
    values: Mapping[str, Any] | None = None
    values_files: tuple[str, ...] = ()
    #: What ``parse_target_option`` returns: versions, and the ``engine`` and ``jobset_gates`` chosen.
    target: Mapping[str, Any] | None = None
    stop: Stop = Stop.LOWER
    #: ``argocd`` or ``flux``: the GitOps controller the tree is for (emit); None: the project's choice.
    gitops: str | None = None
    #: The output directory files are rendered for (emit names sources relative to it).
    output: str | None = None
    #: Seconds a Python spec module may run (None: the loader's default, 10 s; 0: no limit).
    python_timeout: float | None = None
    #: Whether Python spec modules run: "allow", "warn" or "deny" (``--no-python``); None: the
    #: project's ``spec.python`` decides (trainspec.dsl.pypolicy).
    python: str | None = None
    #: The YAML loader's caps (file size: ``--max-file-size``); None: the loader's defaults.
    limits: LoadLimits | None = None
    #: Called as ``progress(pass name, passes done, passes in all)`` before each pass (the CLI's
    #: terminal progress line, trainspec.progress); None: nothing is reported.
    progress: Callable[[str, int, int], None] | None = field(default=None, compare=False)
    #: Replace every job by its scaling ladder (1 GPU, 1 node, 2, 4 ... nodes up to its own size),
    #: expanded in the plan pass so every later pass sees each rung (trainspec.compiler.ladder).
    ladder: bool = False
    #: The namespace of jobs whose spec names none, over the project's ``defaults.namespace``
    #: (``submit -n``, as kubectl's ``-n`` places objects without a namespace); None: the project's.
    namespace: str | None = None


class Output(Record):
    """One output file: its path relative to the output directory and its objects, in apply order."""

    path: str
    objects: tuple[Any, ...]  # trainspec.k8s resources
    sources: tuple[str, ...]
    #: 0 = runtimes, 1 = jobs; the apply order of files.
    wave: int
    #: For each object, where each of its fields came from (same order as ``objects``).
    provenance: tuple[FieldSources, ...] = field(default=(), compare=False, repr=False)


class CompileResult(Record, frozen=False):
    """Everything a run produced: diagnostics and, as far as it went, plans, objects and files."""

    outputs: list[Output] = field(default_factory=list)
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


class Compilation:
    """The state the passes share while one run goes through them."""

    def __init__(self, options: Options, paths: list[str], objects: list[LoadedSpec], result: CompileResult) -> None:
        self.options = options
        self.paths = paths
        self.objects = objects
        self.result = result
        self.values: dict[str, Any] | None = None
        self.jobs: list[tuple[LoadedSpec, frozenset[str]]] = []
        self.index: RuntimeIndex | None = None
        self.resolved: list[ResolvedJob] = []
        self.used_builtins: dict[str, tuple[RuntimeEntry, LoadedSpec]] = {}
        self._dialects: dict[str, TrainerDialect] = {}

    def engine_of(self, runtime: LoadedSpec) -> str:
        """A runtime's engine: ``--target`` over the runtime's ``spec.engine`` over the project's."""
        target = self.result.target
        assert target is not None
        chosen = (self.options.target or {}).get("engine")
        if chosen is None and runtime.spec.spec.engine is not None:
            chosen = runtime.spec.spec.engine.value
        return chosen or target.engine

    def dialect_of(self, runtime: LoadedSpec) -> TrainerDialect:
        """The lowering dialect for the jobs of ``runtime`` (one instance per engine)."""
        from trainspec.compiler.lower.dialects import dialect_for

        engine = self.engine_of(runtime)
        if engine not in self._dialects:
            assert self.result.target is not None
            self._dialects[engine] = dialect_for(self.result.target, engine)
        return self._dialects[engine]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.result.diagnostics


# -- the passes -------------------------------------------------------------------------------------


def load_pass(c: Compilation) -> None:
    """Values files, spec files (YAML and Python), the project file and spec objects given in code."""
    from trainspec.dsl.discovery import split_stdin
    from trainspec.dsl.sources import DEFAULT_PYTHON_TIMEOUT, LoadedSpec, discover, load_files, spec_problems
    from trainspec.dsl.values import load_values

    values, problems = load_values(c.options.values_files)
    c.diagnostics.extend(problems)
    if c.options.values is not None:
        values = {**(values or {}), **c.options.values}
    c.values = values
    paths, stdin, problems = split_stdin(c.paths)  # `-`: YAML from standard input, read once
    c.diagnostics.extend(problems)
    files, problems = discover(paths)
    c.diagnostics.extend(problems)
    c.result.files = len(files) + stdin
    project_file, project_obj = _project_choice(c.options)
    seen = {os.path.realpath(f) for f in files}
    extra = [Path(project_file)] if project_file and os.path.realpath(project_file) not in seen else []
    timeout = c.options.python_timeout if c.options.python_timeout is not None else DEFAULT_PYTHON_TIMEOUT
    specs, problems = load_files(
        [*files, *extra],
        values=values,
        foreign=c.result.foreign,
        python_timeout=timeout or None,
        limits=c.options.limits,
        python=c.options.python,
        project=project_obj,
        project_file=project_file,
        stdin=stdin,
    )
    c.diagnostics.extend(problems)
    for given in c.objects:  # specs built in Python and handed over: the same single-spec checks
        c.diagnostics.extend(spec_problems(given))
    c.result.specs = [*specs, *c.objects]
    if project_obj is not None:
        c.result.specs.append(LoadedSpec(spec=project_obj, file="<python>"))


def project_pass(c: Compilation) -> None:
    """The project file: one at most, its target, and its defaults filled into specs."""
    from trainspec.compiler.defaults import apply_to_job, apply_to_runtime
    from trainspec.compiler.resolve import related_at
    from trainspec.compiler.targets import resolve_target

    projects = [s for s in c.result.specs if isinstance(s.spec, Project)]
    for extra in projects[1:]:
        c.diagnostics.append(
            extra.diagnostic(
                "TS306",
                (),
                "a second Project: settings come from one project file only",
                related=(related_at(projects[0], (), "the project file in use"),),
            )
        )
    c.result.project_spec = projects[0] if projects else None
    c.result.project = projects[0].spec if projects else Project()
    target, problems = resolve_target(c.result.project_spec, c.options.target)
    c.diagnostics.extend(problems)
    c.result.target = target
    chosen = c.result.project.spec.gitops
    c.result.gitops = c.options.gitops or (chosen.value if chosen is not None else None)
    defaults = c.result.project.spec.defaults
    c.result.runtimes = [apply_to_runtime(s, defaults) for s in c.result.specs if isinstance(s.spec, Runtime)]
    if c.options.namespace:
        defaults = defaults.model_copy(update={"namespace": c.options.namespace})
    c.jobs = [apply_to_job(s, defaults) for s in c.result.specs if isinstance(s.spec, TrainingJob)]
    c.diagnostics.extend(_duplicates(c.result.runtimes, [loaded for loaded, _ in c.jobs]))


def resolve_pass(c: Compilation) -> None:
    """Each job's runtime (inputs, then the built-in catalog) and every value with its origin."""
    from trainspec.compiler.defaults import apply_to_runtime
    from trainspec.compiler.resolve import build_index, resolve_job
    from trainspec.runtimes import builtin_names, builtin_runtime

    defaults = c.result.project.spec.defaults

    def builtin(name: str) -> LoadedSpec | None:
        loaded = builtin_runtime(name)
        return apply_to_runtime(loaded, defaults) if loaded is not None else None

    c.index = build_index(c.result.runtimes, builtin, builtin_names())
    for loaded, filled in sorted(c.jobs, key=lambda pair: _job_key(pair[0])):
        resolved, found = resolve_job(loaded, c.index, filled)
        c.diagnostics.extend(found)
        if resolved is not None:
            c.resolved.append(resolved)


def plan_pass(c: Compilation) -> None:
    """What each job becomes: replicated jobs, runtime variant, checkpoint storage, shards."""
    from trainspec.compiler.plan import plan_job
    from trainspec.dsl.record import replace

    c.result.plans = [
        replace(plan_job(resolved), engine=c.engine_of(resolved.runtime.loaded)) for resolved in c.resolved
    ]
    if c.options.ladder and c.index is not None:  # before the rules: they, lowering and check see each rung
        from trainspec.compiler.ladder import expand

        c.result.plans, problems = expand(c.result.plans, c.index, c.engine_of)
        c.diagnostics.extend(problems)


def rules_pass(c: Compilation) -> None:
    """The plan rules, the project's policy and the target's own rules."""
    from trainspec.compiler.policy import check_policy
    from trainspec.compiler.rules import check_plan

    policy = c.result.project.spec.policy
    for loaded in c.result.runtimes:
        dialect = c.dialect_of(loaded)
        # A cluster's runtime is not emitted, nor is one whose engine folds it into each job:
        # its jobs carry the target's findings.
        if not loaded.spec.spec.external and dialect.emits_runtimes:
            c.diagnostics.extend(dialect.runtime_rules(loaded))
    for plan in c.result.plans:
        dialect = c.dialect_of(plan.resolved.runtime.loaded)
        c.diagnostics.extend(check_plan(plan, plan.engine))
        c.diagnostics.extend(check_policy(plan, policy))
        c.diagnostics.extend(dialect.job_rules(plan))
        entry = plan.resolved.runtime
        if entry.builtin and not entry.external and dialect.emits_runtimes:
            c.used_builtins.setdefault(plan.runtime_name, (entry, plan.resolved.loaded))


def lower_pass(c: Compilation) -> None:
    """Typed Kubernetes objects, by the target's dialect, each with the provenance of its fields."""
    from trainspec.compiler.lower.dialects import LoweringError
    from trainspec.compiler.provenance import SpecRef
    from trainspec.compiler.runs import finish as finish_runs

    outputs: list[Output] = []
    try:
        for loaded in c.result.runtimes:
            dialect = c.dialect_of(loaded)
            if loaded.spec.spec.external or not dialect.emits_runtimes:
                continue  # exists in the cluster, or folded into each job: never an object of its own
            outputs.extend(
                _output(_runtime_path(loaded.spec, lowered.obj.metadata.name), [lowered], (loaded.file,), 0)
                for lowered in dialect.lower_runtime(loaded)
            )
        for name, (entry, first_user) in sorted(c.used_builtins.items()):
            used_by = SpecRef(first_user, ("spec", "runtime"))
            outputs.extend(
                _output(_runtime_path(entry.spec, name), [lowered], ("<built-in>",), 0)
                for lowered in c.dialect_of(entry.loaded).lower_runtime(entry.loaded, used_by=used_by)
                if lowered.obj.metadata.name == name
            )
        for plan in c.result.plans:
            resolved = plan.resolved
            lowered_job = c.dialect_of(resolved.runtime.loaded).lower_job(plan)
            lowered_job += _observability_objects(plan)  # PodMonitor, dashboard ConfigMap (issue 15)
            lowered_job = finish_runs(plan, lowered_job)  # <job>-<run id>: a new run per shape (day 2)
            outputs.append(
                _output(f"{resolved.namespace}/{resolved.name}.yaml", lowered_job, (resolved.loaded.file,), 1)
            )
    except LoweringError as exc:
        c.diagnostics.append(exc.diagnostic)
        return
    c.result.outputs = sorted(outputs, key=lambda o: (o.wave, o.path))


def _observability_objects(plan: Any) -> list[Any]:
    from trainspec.observability.objects import lowered_objects

    return lowered_objects(plan)


def emit_pass(c: Compilation) -> None:
    """The files of an output directory (path -> text), byte-identical for the same inputs."""
    from trainspec.compiler import emit

    c.result.files_text = emit.render_tree(c.result.outputs, gitops=c.result.gitops, root=c.options.output)


class Pass(TupleRecord):
    """One compiler pass: a name, the function, and whether it runs after an error."""

    name: str
    run: Callable[[Compilation], None]
    #: Passes that produce objects stop at the first error; checking passes always run.
    needs_clean: bool = False


#: The compiler, in order. Every command and the library run these, and only these.
PASSES: tuple[Pass, ...] = (
    Pass("load", load_pass),
    Pass("project", project_pass),
    Pass("resolve", resolve_pass),
    Pass("plan", plan_pass),
    Pass("rules", rules_pass),
    Pass("lower", lower_pass, needs_clean=True),
    Pass("emit", emit_pass, needs_clean=True),
)


def run(inputs: Iterable[str | os.PathLike[str] | Any] = (), options: Options | None = None) -> CompileResult:
    """Run the compiler over ``inputs`` (paths, and/or spec objects built in Python).

    Returns every diagnostic of every pass that ran, sorted by location; plans, objects and
    files as far as ``options.stop`` and the absence of errors allow.
    """
    from trainspec.dsl.sources import LoadedSpec

    options = options or Options()
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
    c = Compilation(options=options, paths=paths, objects=objects, result=CompileResult())
    ran: list[str] = []
    # A run builds many long-lived objects and no reference cycles (tests/compiler/
    # test_no_reference_cycles.py); at the default thresholds the collector's full passes walk that
    # growing heap again and again (10,000 specs cost 1.2x more per spec than 1,000). Collection
    # stays on, rarer for the young generation, and the caller's thresholds come back after.
    thresholds = gc.get_threshold()
    if thresholds[0]:  # 0: collection is off, leave it so
        gc.set_threshold(max(thresholds[0], _GC_THRESHOLD), *thresholds[1:])
    try:
        for index, step in enumerate(PASSES):
            if step.needs_clean and has_errors(c.diagnostics):
                break
            if options.progress is not None:
                options.progress(step.name, index, len(PASSES))
            step.run(c)
            ran.append(step.name)
            if step.name == options.stop.value:
                break
    finally:
        gc.set_threshold(*thresholds)
    c.result.passes = tuple(ran)
    c.result.diagnostics = sorted(dict.fromkeys(c.diagnostics), key=Diagnostic.sort_key)
    if has_errors(c.result.diagnostics):
        c.result.outputs, c.result.files_text = [], {}
    return c.result


#: Allocations between young-generation collections during a run (CPython's default is 700).
_GC_THRESHOLD = 50_000


def _python_origin(spec: Any) -> Any:
    from trainspec.dsl.yaml_loader import Mark

    created = getattr(spec, "created_at", None)
    return Mark(*created) if created else Mark(1, 1)


# -- helpers ----------------------------------------------------------------------------------------


def _project_choice(options: Options) -> tuple[str | None, Project | None]:
    """(project file to load, project object given in code)."""
    choice = options.project
    if choice is None:
        return None, None
    if isinstance(choice, Project):
        return None, choice
    if choice is DISCOVER:
        from trainspec.dsl.project import find_project_file

        found = find_project_file(Path(options.cwd or os.getcwd()))
        return (str(found) if found else None), None
    return os.fspath(choice), None


def _output(path: str, lowered: list[Any], sources: tuple[str, ...], wave: int) -> Output:
    return Output(
        path, tuple(item.obj for item in lowered), sources, wave, provenance=tuple(item.sources for item in lowered)
    )


def _runtime_path(runtime: Runtime, name: str) -> str:
    if runtime.spec.scope is Scope.NAMESPACE:
        return f"{RUNTIMES_DIR}/{runtime.metadata.namespace}/{name}.yaml"
    return f"{RUNTIMES_DIR}/{name}.yaml"


def _job_key(loaded: LoadedSpec) -> tuple[str, str]:
    return (loaded.namespace or DEFAULT_NAMESPACE, loaded.name)


def _duplicates(runtimes: list[LoadedSpec], jobs: list[LoadedSpec]) -> list[Diagnostic]:
    """Two specs that would write the same object (TS306)."""
    from trainspec.compiler.resolve import related_at

    problems: list[Diagnostic] = []
    seen: dict[tuple, LoadedSpec] = {}
    for loaded in [*runtimes, *jobs]:
        for key in _object_keys(loaded):
            first = seen.get(key)
            if first is None:
                seen[key] = loaded
                continue
            problems.append(
                loaded.diagnostic(
                    "TS306",
                    ("metadata", "name"),
                    f"{key[0]} {key[2]!r}{' in namespace ' + key[1] if key[1] else ''} is defined twice",
                    hint="rename one of them",
                    related=(related_at(first, ("metadata", "name"), "first defined here"),),
                )
            )
            break
    return problems


def _object_keys(loaded: LoadedSpec) -> list[tuple[str, str, str]]:
    from trainspec.compiler.plan import runtime_variants

    spec = loaded.spec
    if isinstance(spec, Runtime):
        namespaced = spec.spec.scope is Scope.NAMESPACE
        kind = "TrainingRuntime" if namespaced else "ClusterTrainingRuntime"
        ns = spec.metadata.namespace if namespaced else ""
        return [(kind, ns or "", name) for name, _ in runtime_variants(spec)]
    return [("TrainJob", spec.metadata.namespace or DEFAULT_NAMESPACE, spec.metadata.name)]


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
        Options(project=project, values=values, target=target, stop=Stop.LOWER if lower else Stop.CHECK),
    )


def compile_specs(specs: list[LoadedSpec], *, lower: bool = True) -> CompileResult:
    """:func:`run` over specs already loaded, without a project file unless one is among them."""
    return run(specs, Options(project=None, stop=Stop.LOWER if lower else Stop.CHECK))


__all__ = [
    "DISCOVER",
    "PASSES",
    "CompileResult",
    "Compilation",
    "Options",
    "Output",
    "Pass",
    "Stop",
    "compile_paths",
    "compile_specs",
    "run",
]
