"""The *resolve* pass: each job's runtime (inputs, then the built-in catalog) and every value's origin."""

from __future__ import annotations

from trainspec.compiler.passes.options import Options
from trainspec.compiler.passes.products import Projected, Resolved
from trainspec.compiler.resolve import DEFAULT_NAMESPACE
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.load.loaded import LoadedSpec


def resolve(projected: Projected, options: Options) -> Resolved:
    """Jobs in (namespace, name) order, each against the runtime it names."""
    from trainspec.compiler.defaults import apply_to_runtime
    from trainspec.compiler.resolve import build_index, resolve_job
    from trainspec.runtimes import builtin_names, builtin_runtime

    defaults = projected.project.spec.defaults

    def builtin(name: str) -> LoadedSpec | None:
        loaded = builtin_runtime(name)
        return apply_to_runtime(loaded, defaults) if loaded is not None else None

    # known_runtimes: a streamed run's runtimes, read once before its batches of jobs.
    index = build_index([*projected.runtimes, *options.known_runtimes], builtin, builtin_names())
    found: list[Diagnostic] = []
    jobs = []
    for loaded, filled in sorted(projected.jobs, key=lambda pair: _job_key(pair[0])):
        resolved, problems = resolve_job(loaded, index, filled)
        found += problems
        if resolved is not None:
            jobs.append(resolved)
    return Resolved(projected=projected, index=index, jobs=tuple(jobs), diagnostics=tuple(found))


def _job_key(loaded: LoadedSpec) -> tuple[str, str]:
    return (loaded.namespace or DEFAULT_NAMESPACE, loaded.name)
