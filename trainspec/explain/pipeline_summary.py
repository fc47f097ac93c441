"""``explain`` of a pipeline: its steps in run order and what its job steps cost together.

Each job step is explained as a job (its own block, above); this adds one block per pipeline:
the steps with what each waits for, and the GPU-hours and cost of all its job steps at most
(the sum of each job's ``maxRunTime`` bound; container steps are not counted: they run on CPUs
the pipeline's cluster provides). A job without ``maxRunTime`` makes the total unbounded, and the
block names it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from trainspec.dsl.record import Record
from trainspec.explain.estimate import format_number
from trainspec.explain.rows import PRICE_HINT, money

if TYPE_CHECKING:
    from trainspec.dsl.load.pipeline_steps import PipelineGraph
    from trainspec.explain.explanation import Explanation


class PipelineSummary(Record):
    """One pipeline, as ``explain`` shows it."""

    key: str  # namespace/name
    file: str
    line: int
    column: int
    #: (step, kind, what it waits for, the job it runs or "")
    steps: tuple[tuple[str, str, tuple[str, ...], str], ...]
    #: GPU-hours of all job steps at most (None: a job step has no maxRunTime).
    gpu_hours: Fraction | None
    cost: Fraction | None
    currency: str | None
    #: Job steps with no bound on their GPU-hours.
    unbounded: tuple[str, ...]


def summarize(graph: PipelineGraph, explanations: list[Explanation]) -> PipelineSummary:
    """The summary of ``graph`` from the explanations of its jobs (by job name)."""
    pipeline = graph.pipeline
    by_job = {ex.name: ex for ex in explanations if ex.namespace.value == (pipeline.namespace or "default")}
    jobs = [by_job[step.job] for step in graph.steps if step.kind == "job" and step.job in by_job]
    unbounded = tuple(ex.name for ex in jobs if ex.gpus_total > 0 and ex.gpu_hours is None)
    hours = None if unbounded else sum((ex.gpu_hours or Fraction(0) for ex in jobs), Fraction(0))
    priced = [ex for ex in jobs if ex.gpus_total > 0]
    cost: Fraction | None = None
    currency = None
    if hours is not None and all(ex.cost is not None and ex.price is not None for ex in priced):
        cost = sum((ex.cost or Fraction(0) for ex in priced), Fraction(0))
        currency = next((ex.price.currency for ex in priced if ex.price is not None), None)
    return PipelineSummary(
        f"{pipeline.namespace or 'default'}/{pipeline.name}",
        graph.file,
        graph.at.line,
        graph.at.column,
        tuple((s.name, s.kind, s.needs, s.job) for s in graph.steps),
        hours,
        cost,
        currency,
        unbounded,
    )


def render_text(summary: PipelineSummary) -> str:
    """The block ``explain`` prints after the job blocks."""
    lines = [f"pipeline {summary.key}  ({summary.file}:{summary.line}:{summary.column})"]
    for name, kind, needs, job in summary.steps:
        what = f"job {job}" if kind == "job" else "container"
        after = f", after {', '.join(needs)}" if needs else ""
        lines.append(f"  step {name:<14}  {what}{after}")
    if summary.unbounded:
        lines.append(f"  GPU-hours            unbounded: no maxRunTime on {', '.join(summary.unbounded)}")
    elif summary.gpu_hours == 0:
        lines.append("  GPU-hours            0 (CPU only)")
    else:
        assert summary.gpu_hours is not None
        lines.append(f"  GPU-hours            {format_number(summary.gpu_hours)} for all job steps, at most")
        if summary.cost is None or summary.currency is None:
            lines.append(f"  cost                 unknown: no price ({PRICE_HINT})")
        else:
            lines.append(f"  cost                 {money(summary.cost, summary.currency)}, at most")
    return "\n".join(lines) + "\n"


def as_dict(summary: PipelineSummary) -> dict[str, Any]:
    """The summary as ``explain --format json`` shows it under ``pipelines``."""
    return {
        "pipeline": summary.key,
        "file": summary.file,
        "line": summary.line,
        "column": summary.column,
        "steps": [{"name": n, "kind": k, "after": list(a), "job": j or None} for n, k, a, j in summary.steps],
        "gpuHours": None if summary.gpu_hours is None else float(summary.gpu_hours),
        "cost": None if summary.cost is None else float(summary.cost),
        "currency": summary.currency,
        "unbounded": list(summary.unbounded),
    }


__all__ = ["PipelineSummary", "as_dict", "render_text", "summarize"]
