"""The *lower* pass: typed Kubernetes objects, by each engine's dialect, with their fields' provenance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from trainspec.compiler.passes.options import Options
from trainspec.compiler.passes.products import Checked, Lowered, Output
from trainspec.dsl.spec.models import Runtime, Scope

if TYPE_CHECKING:
    from trainspec.compiler.lower.dialects import Lowered as LoweredObject

#: Where runtimes go in the output tree (namespaced ones under their namespace).
RUNTIMES_DIR = "runtimes"


def lower(checked: Checked, options: Options) -> Lowered:
    """The output files' objects: runtimes first (wave 0), then each job's (wave 1)."""
    from trainspec.compiler.lower.dialects import LoweringError
    from trainspec.compiler.observability.objects import lowered_objects
    from trainspec.compiler.provenance import SpecRef
    from trainspec.compiler.runs import finish as finish_runs

    planned = checked.planned
    dialects = planned.dialects
    gitops = planned.projected.gitops
    outputs: list[Output] = []
    pipeline_jobs: list[Output] = []
    try:
        for loaded in planned.projected.runtimes:
            dialect = dialects.dialect_of(loaded)
            if loaded.spec.spec.external or not dialect.emits_runtimes:
                continue  # exists in the cluster, or folded into each job: never an object of its own
            outputs.extend(
                _output(_runtime_path(loaded.spec, lowered.obj.metadata.name), [lowered], (loaded.file,), 0)
                for lowered in dialect.lower_runtime(loaded)
            )
        for name, entry, first_user in checked.builtins:
            used_by = SpecRef(first_user, ("spec", "runtime"))
            outputs.extend(
                _output(_runtime_path(entry.spec, name), [lowered], ("<built-in>",), 0)
                for lowered in dialects.dialect_of(entry.loaded).lower_runtime(entry.loaded, used_by=used_by)
                if lowered.obj.metadata.name == name
            )
        for job in planned.plans:
            resolved = job.resolved
            objects = dialects.dialect_of(resolved.runtime.loaded).lower_job(job)
            objects += lowered_objects(job)  # PodMonitor, dashboard ConfigMap (issue 15)
            objects = finish_runs(job, objects)  # <job>-<run id>: a new run per shape (day 2)
            output = _output(f"{resolved.namespace}/{resolved.name}.yaml", objects, (resolved.loaded.file,), 1)
            (pipeline_jobs if resolved.loaded.within else outputs).append(output)
    except LoweringError as exc:
        return Lowered(outputs=(), gitops=gitops, diagnostics=(exc.diagnostic,))
    return Lowered(
        outputs=tuple(sorted(outputs, key=lambda o: (o.wave, o.path))),
        gitops=gitops,
        pipeline_jobs=tuple(sorted(pipeline_jobs, key=lambda o: o.path)),
    )


def _output(path: str, lowered: Sequence[LoweredObject], sources: tuple[str, ...], wave: int) -> Output:
    return Output(
        path, tuple(item.obj for item in lowered), sources, wave, provenance=tuple(item.sources for item in lowered)
    )


def _runtime_path(runtime: Runtime, name: str) -> str:
    if runtime.spec.scope is Scope.NAMESPACE:
        return f"{RUNTIMES_DIR}/{runtime.metadata.namespace}/{name}.yaml"
    return f"{RUNTIMES_DIR}/{name}.yaml"
