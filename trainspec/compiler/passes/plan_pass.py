"""The *plan* pass: what each job becomes, every decision made once per job.

A plan (:class:`~trainspec.compiler.plan.JobPlan`) fixes the replicated jobs, the runtime variant,
the checkpoint storage and the data shards, the engine (hence the dialect), the observability
settings and the parallel layout the planner chose. The rules, the lowering and ``explain`` read
these from the plan and never decide them again.
"""

from __future__ import annotations

from trainspec.compiler.passes.options import Options
from trainspec.compiler.passes.products import Dialects, Planned, Resolved
from trainspec.compiler.plan import JobPlan, plan_job
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.record import replace


def plan(resolved: Resolved, options: Options) -> Planned:
    """Every job's plan (with ``--ladder``, each rung's), and the dialect of every engine in use."""
    from trainspec.compiler.lower.dialects import dialect_for

    projected = resolved.projected
    engines = Dialects(target=projected.target, chosen=projected.engine)
    plans = [replace(plan_job(job), engine=engines.engine_of(job.runtime.loaded)) for job in resolved.jobs]
    found: list[Diagnostic] = []
    if options.ladder:  # before the rules: they, lowering and check see each rung
        from trainspec.compiler.ladder_rungs import expand

        plans, problems = expand(plans, resolved.index, engines.engine_of)
        found += problems
    plans = _layouts(plans)
    in_use = sorted({*(engines.engine_of(r) for r in projected.runtimes), *(p.engine for p in plans)})
    dialects = replace(engines, by_engine={engine: dialect_for(projected.target, engine) for engine in in_use})
    return Planned(projected=projected, plans=tuple(plans), dialects=dialects, diagnostics=tuple(found))


def _layouts(plans: list[JobPlan]) -> list[JobPlan]:
    """The planner's answer for every job that asks for one (``spec.model`` or ``spec.parallelism``)."""
    if not any(p.resolved.job.spec.model is not None or p.resolved.job.spec.parallelism is not None for p in plans):
        return plans  # most runs: the planner is not even imported
    from trainspec.compiler.parallelism.fromplan import decide

    return [replace(p, parallel=decide(p)) for p in plans]
