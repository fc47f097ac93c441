"""``Client.submit``: compile as ``trainspec submit`` does (namespaces placed as its ``-n`` places them),
then apply with ``trainspec.kube.submit`` and type what it did.

Imports the compiler only when called: reading a job's state needs none of it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from trainspec.client import cluster
from trainspec.client.errors import ClusterError
from trainspec.client.results import SubmitResult
from trainspec.kube.session import CommandError

#: ``submit(project=...)`` not given: the project file is discovered, as ``trainspec.compile`` does
#: by default (the compiler's own marker is not imported until a submit compiles).
DISCOVER: Any = object()
DEFAULT_NAMESPACE = "default"


def submit(
    kube: Any,
    specs: Any,
    *,
    namespace: str | None,
    fallback: str,
    job: str | None,
    with_runtimes: bool,
    dry_run: bool,
    force_conflicts: bool,
    values: Mapping[str, Any] | None,
    project: Any,
) -> SubmitResult:
    """Compile ``specs`` (or take a compile result) and apply each selected Trainer job's objects.

    ``namespace``: the client's namespace when it was given (``-n``), else None; ``fallback``: the
    client's namespace, where a job nothing places goes.
    """
    from trainspec.compiler.emit import manifest_dicts
    from trainspec.compiler.pipeline import CompileResult
    from trainspec.kube import submit as submitting
    from trainspec.kube.submit_plan import namespace_name_problem, namespace_problems

    given = list(specs) if isinstance(specs, Iterable) and not isinstance(specs, (str, bytes, os.PathLike)) else [specs]
    done = [s for s in given if isinstance(s, CompileResult)]
    if done and len(given) > 1:
        raise TypeError("submit takes one CompileResult, or specs and paths to compile, not both")
    if done:
        result = done[0]
    else:
        if namespace is not None and (bad := namespace_name_problem(namespace)) is not None:
            raise ClusterError([bad], usage=True)
        result = _compile(given, project=project, values=values, namespace=namespace)
        problems = namespace_problems(result, namespace, job) if namespace is not None and result.ok else []
        if problems:
            raise ClusterError([*result.diagnostics, *problems])
        if result.ok and namespace is None and fallback != DEFAULT_NAMESPACE and _unplaced(result, job):
            # kubectl's habit: an object without a namespace goes to the context's.
            result = _compile(given, project=project, values=values, namespace=fallback)
    if not result.ok:
        raise ClusterError(result.diagnostics)
    try:
        jobs = submitting.select_jobs(result, job)
    except CommandError as exc:
        raise ClusterError(exc.diagnostics, usage=exc.usage) from None
    kinds = cluster.kinds_of(manifest_dicts(result.objects()))

    def typed(outcomes: list[Any]) -> SubmitResult:
        return SubmitResult(
            objects=tuple(cluster.applied(o, kinds) for o in outcomes),
            jobs=tuple(j.name for j in jobs),
            diagnostics=(*result.diagnostics, *(o.diagnostic for o in outcomes if o.diagnostic is not None)),
        )

    try:
        outcomes = submitting.submit(
            kube, jobs, with_runtimes=with_runtimes, dry_run=dry_run, force=force_conflicts, say=_quiet
        )
    except submitting.SubmitIncomplete as exc:  # the job runs; objects applied after it were refused
        raise ClusterError(exc.diagnostics, submitted=typed(exc.outcomes)) from None
    except CommandError as exc:
        raise ClusterError(exc.diagnostics, usage=exc.usage) from None
    return typed(outcomes)


def _compile(given: list[Any], *, project: Any, values: Mapping[str, Any] | None, namespace: str | None) -> Any:
    """What ``trainspec.compile(*given, project=, values=)`` returns, jobs without a namespace placed in
    ``namespace`` (None: the project's ``defaults.namespace``, else ``default``)."""
    from trainspec.compiler import pipeline

    options = pipeline.Options(
        project=pipeline.DISCOVER if project is DISCOVER else project,
        values=values,
        stop=pipeline.Stop.LOWER,
        namespace=namespace,
    )
    return pipeline.run(tuple(given), options)


def _unplaced(result: Any, job: str | None) -> bool:
    """Whether a selected job's namespace came from nowhere (no spec namespace, no project default)."""
    if result.project.spec.defaults.namespace:
        return False
    return any(
        getattr(s, "kind", "") == "TrainingJob" and not s.namespace and job in (None, s.name) for s in result.specs
    )


def _quiet(_: str) -> None:
    pass
