"""The compiler, pass by pass: load -> resolve -> plan -> check -> lower -> emit.

``compile_specs`` runs every pass that needs no output directory; ``validate`` and ``compile``
share it, so validate reports exactly what compile would refuse.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainspec.compiler.defaults import apply_to_job, apply_to_runtime
from trainspec.compiler.plan import JobPlan, plan_job, runtime_variants
from trainspec.compiler.resolve import DEFAULT_NAMESPACE, RuntimeEntry, build_index, related_at, resolve_job
from trainspec.compiler.policy import check_policy
from trainspec.compiler.rules import check_plan
from trainspec.dsl.diagnostics import Diagnostic, has_errors
from trainspec.dsl.models import Runtime, Scope, TrainingJob
from trainspec.dsl.project import Project
from trainspec.dsl.sources import LoadedSpec, discover, load_files

RUNTIMES_DIR = "runtimes"


@dataclass(frozen=True)
class Output:
    """One output file: its path relative to the output directory and its objects, in apply order."""

    path: str
    objects: tuple[Any, ...]  # trainspec.k8s resources
    sources: tuple[str, ...]
    #: 0 = runtimes, 1 = jobs; the apply order of files.
    wave: int


@dataclass
class CompileResult:
    """Everything a compile produced: output files, plans (for explain) and diagnostics."""

    outputs: list[Output] = field(default_factory=list)
    plans: list[JobPlan] = field(default_factory=list)
    specs: list[LoadedSpec] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    project: Project = field(default_factory=Project)
    #: How many spec files were read (compile_paths only).
    files: int = 0

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)

    def objects(self) -> list[Any]:
        """All objects in apply order: runtimes, then each job's PVC and TrainJob."""
        return [obj for out in sorted(self.outputs, key=lambda o: (o.wave, o.path)) for obj in out.objects]


def compile_paths(paths: list[str], *, values: dict[str, Any] | None = None,
                  extra_specs: Iterable[LoadedSpec] = (), project: str | None = None,
                  lower: bool = True) -> CompileResult:
    """Load the specs under ``paths`` (and the project file, if given) and compile them.

    ``lower=False`` stops after the checks (what ``validate`` needs): every diagnostic, no objects.
    """
    files, problems = discover(paths)
    extra = [Path(project)] if project and Path(project).resolve() not in {f.resolve() for f in files} else []
    inputs = [*files, *extra]
    specs, found = load_files(inputs, values=values)
    result = compile_specs([*specs, *extra_specs], lower=lower)
    result.files = len(files)
    problems.extend(found)
    result.diagnostics = sorted([*problems, *result.diagnostics], key=Diagnostic.sort_key)
    return result


def compile_specs(specs: list[LoadedSpec], *, lower: bool = True) -> CompileResult:
    """Compile loaded specs. Diagnostics are collected for every spec; outputs only without errors.

    Every check runs before lowering, so ``lower=False`` reports the same diagnostics.
    """
    from trainspec.runtimes import builtin_names, builtin_runtime

    result = CompileResult(specs=list(specs))
    projects = [s for s in specs if isinstance(s.spec, Project)]
    result.diagnostics.extend(_extra_projects(projects))
    result.project = projects[0].spec if projects else Project()
    defaults = result.project.spec.defaults
    runtimes = [apply_to_runtime(s, defaults) for s in specs if isinstance(s.spec, Runtime)]
    jobs = [apply_to_job(s, defaults) for s in specs if isinstance(s.spec, TrainingJob)]
    result.diagnostics.extend(_duplicates(runtimes, [loaded for loaded, _ in jobs]))
    def builtin(name: str) -> LoadedSpec | None:
        loaded = builtin_runtime(name)
        return apply_to_runtime(loaded, defaults) if loaded is not None else None

    index = build_index(runtimes, builtin, builtin_names())

    used_builtins: dict[str, RuntimeEntry] = {}
    for loaded, filled in sorted(jobs, key=lambda pair: _job_key(pair[0])):
        resolved, found = resolve_job(loaded, index, filled)
        result.diagnostics.extend(found)
        if resolved is None:
            continue
        plan = plan_job(resolved)
        result.diagnostics.extend(check_plan(plan))
        result.diagnostics.extend(check_policy(plan, result.project.spec.policy))
        result.plans.append(plan)
        if resolved.runtime.builtin:
            used_builtins.setdefault(plan.runtime_name, resolved.runtime)

    if lower and not has_errors(result.diagnostics):
        result.outputs = _lower(runtimes, used_builtins, result.plans)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _lower(runtimes: list[LoadedSpec], used_builtins: dict[str, RuntimeEntry], plans: list[JobPlan]) -> list[Output]:
    # Imported here: the Kubernetes models are only needed when something is emitted.
    from trainspec.compiler.lower.runtime import lower_runtime
    from trainspec.compiler.lower.trainjob import lower_job

    outputs: list[Output] = []
    for loaded in runtimes:
        for obj in lower_runtime(loaded.spec):
            outputs.append(Output(_runtime_path(loaded.spec, obj.metadata.name), (obj,), (loaded.file,), 0))
    for name, entry in sorted(used_builtins.items()):
        for obj in lower_runtime(entry.spec):
            if obj.metadata.name == name:
                outputs.append(Output(_runtime_path(entry.spec, name), (obj,), ("<built-in>",), 0))
    for plan in plans:
        resolved = plan.resolved
        outputs.append(Output(f"{resolved.namespace}/{resolved.name}.yaml", tuple(lower_job(plan)),
                              (resolved.loaded.file,), 1))
    return sorted(outputs, key=lambda o: (o.wave, o.path))


def _extra_projects(projects: list[LoadedSpec]) -> list[Diagnostic]:
    return [
        extra.diagnostic("TS306", (), "a second Project: settings come from one project file only",
                         related=(related_at(projects[0], (), "the project file in use"),))
        for extra in projects[1:]
    ]


def _runtime_path(runtime: Runtime, name: str) -> str:
    if runtime.spec.scope is Scope.NAMESPACE:
        return f"{RUNTIMES_DIR}/{runtime.metadata.namespace}/{name}.yaml"
    return f"{RUNTIMES_DIR}/{name}.yaml"


def _job_key(loaded: LoadedSpec) -> tuple[str, str]:
    return (loaded.namespace or DEFAULT_NAMESPACE, loaded.name)


def _duplicates(runtimes: list[LoadedSpec], jobs: list[LoadedSpec]) -> list[Diagnostic]:
    """Two specs that would write the same object (TS306)."""
    problems: list[Diagnostic] = []
    seen: dict[tuple, LoadedSpec] = {}
    for loaded in [*runtimes, *jobs]:
        keys = _object_keys(loaded)
        for key in keys:
            first = seen.get(key)
            if first is None:
                seen[key] = loaded
                continue
            problems.append(loaded.diagnostic(
                "TS306", ("metadata", "name"),
                f"{key[0]} {key[2]!r}{' in namespace ' + key[1] if key[1] else ''} is defined twice",
                hint="rename one of them",
                related=(related_at(first, ("metadata", "name"), "first defined here"),),
            ))
            break
    return problems


def _object_keys(loaded: LoadedSpec) -> list[tuple[str, str, str]]:
    spec = loaded.spec
    if isinstance(spec, Runtime):
        namespaced = spec.spec.scope is Scope.NAMESPACE
        kind = "TrainingRuntime" if namespaced else "ClusterTrainingRuntime"
        ns = spec.metadata.namespace if namespaced else ""
        return [(kind, ns or "", name) for name, _ in runtime_variants(spec)]
    return [("TrainJob", spec.metadata.namespace or DEFAULT_NAMESPACE, spec.metadata.name)]


__all__ = ["CompileResult", "Output", "compile_paths", "compile_specs"]
