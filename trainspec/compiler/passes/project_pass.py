"""The *project* pass: one project file at most, its target, and its defaults filled into specs."""

from __future__ import annotations

from trainspec.compiler.passes.options import Options
from trainspec.compiler.passes.products import Loaded, Projected
from trainspec.compiler.resolve import DEFAULT_NAMESPACE, related_at
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Related
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.spec.models import Runtime, Scope, TrainingJob
from trainspec.dsl.spec.project import Project


def project(loaded: Loaded, options: Options) -> Projected:
    """The project file in use, the target (``--target`` over the project's), defaults filled in."""
    from trainspec.compiler.defaults import apply_to_job, apply_to_runtime
    from trainspec.compiler.targets import resolve_target

    found: list[Diagnostic] = []
    projects = [s for s in loaded.specs if isinstance(s.spec, Project)]
    found.extend(
        extra.diagnostic(
            codes.DUPLICATE_OBJECT,
            (),
            "a second Project: settings come from one project file only",
            related=(related_at(projects[0], (), "the project file in use"),),
        )
        for extra in projects[1:]
    )
    project_spec = projects[0] if projects else None
    chosen_project = projects[0].spec if projects else Project()
    assert isinstance(chosen_project, Project)
    target, problems = resolve_target(project_spec, options.target)
    found += problems
    gitops = chosen_project.spec.gitops
    defaults = chosen_project.spec.defaults
    runtimes = tuple(apply_to_runtime(s, defaults) for s in loaded.specs if isinstance(s.spec, Runtime))
    if options.namespace:
        defaults = defaults.model_copy(update={"namespace": options.namespace})
    jobs = tuple(apply_to_job(s, defaults) for s in loaded.specs if isinstance(s.spec, TrainingJob))
    if not options.names_elsewhere:
        found += duplicates(runtimes, [job for job, _ in jobs])
    return Projected(
        project=chosen_project,
        project_spec=project_spec,
        target=target,
        gitops=options.gitops or (gitops.value if gitops is not None else None),
        runtimes=runtimes,
        jobs=jobs,
        engine=(options.target or {}).get("engine"),
        diagnostics=tuple(found),
    )


def duplicates(runtimes: tuple[LoadedSpec, ...], jobs: list[LoadedSpec]) -> list[Diagnostic]:
    """Two specs that would write the same object (TS306)."""
    problems: list[Diagnostic] = []
    seen: dict[tuple[str, str, str], LoadedSpec] = {}
    for loaded in [*runtimes, *jobs]:
        for key in object_keys(loaded):
            first = seen.get(key)
            if first is None:
                seen[key] = loaded
                continue
            problems.append(duplicate(loaded, key, related_at(first, NAME, "first defined here")))
            break
    return problems


#: Where a duplicate is pointed at.
NAME = ("metadata", "name")


def duplicate(loaded: LoadedSpec, key: tuple[str, str, str], first: Related) -> Diagnostic:
    """TS306 at ``loaded``'s name: ``key`` (kind, namespace, name) was first defined at ``first``."""
    return loaded.diagnostic(
        codes.DUPLICATE_OBJECT,
        NAME,
        f"{key[0]} {key[2]!r}{' in namespace ' + key[1] if key[1] else ''} is defined twice",
        hint="rename one of them",
        related=(first,),
    )


def object_keys(loaded: LoadedSpec) -> list[tuple[str, str, str]]:
    """The (kind, namespace, name) of every object ``loaded`` writes (a runtime's variants each)."""
    from trainspec.compiler.plan import runtime_variants

    spec = loaded.spec
    if isinstance(spec, Runtime):
        namespaced = spec.spec.scope is Scope.NAMESPACE
        kind = "TrainingRuntime" if namespaced else "ClusterTrainingRuntime"
        ns = spec.metadata.namespace if namespaced else ""
        return [(kind, ns or "", name) for name, _ in runtime_variants(spec)]
    return [("TrainJob", spec.metadata.namespace or DEFAULT_NAMESPACE, spec.metadata.name)]
