"""``explain --ladder``: the rungs of each job's scaling ladder, as text, markdown or JSON.

The rungs are the plans the pipeline made with ``Options(ladder=True)``
(:mod:`trainspec.compiler.ladder_rungs`); this module only tabulates them, one table per job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction

from trainspec.compiler.ladder_rungs import ladder_of
from trainspec.compiler.plan import CheckpointKind, JobPlan
from trainspec.explain.estimate import format_number, gpu_hours

#: The formats ``explain --ladder`` renders (a ladder is a table, not a picture: no mermaid).
FORMATS = ("text", "markdown", "json")
_HEADERS = (
    "rung",
    "job",
    "nodes",
    "GPUs",
    "procs/node",
    "world size",
    "shards",
    "checkpoints",
    "max run time",
    "GPU-hours",
)


@dataclass(frozen=True)
class RungRow:
    """One rung as explain shows it."""

    tag: str
    name: str
    nodes: int
    gpus_per_node: int
    procs_per_node: int
    world_size: int
    shards: int | None
    checkpoint_kind: str | None  # volume, uri (claims are refused: TS430)
    checkpoint: str | None  # the claim name or the URI
    max_run_time: str | None
    max_run_time_seconds: int | None

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def gpu_hours(self) -> Fraction | None:
        if not self.gpus or self.max_run_time_seconds is None:
            return None
        return gpu_hours(self.gpus, self.max_run_time_seconds)


@dataclass(frozen=True)
class Ladder:
    """The rungs of one job, smallest first, and where the job is defined."""

    namespace: str
    job: str
    file: str
    line: int
    column: int
    rungs: tuple[RungRow, ...]

    @property
    def gpu_hours(self) -> Fraction | None:
        hours = [r.gpu_hours for r in self.rungs if r.gpu_hours is not None]
        return sum(hours, Fraction(0)) if hours else None


def ladders(plans: list[JobPlan]) -> list[Ladder]:
    """Group rung plans into one :class:`Ladder` per job, in plan order (jobs sorted, rungs ascending)."""
    grouped: dict[tuple[str, str], list[JobPlan]] = {}
    for plan in plans:
        found = ladder_of(plan)
        if found is not None:
            grouped.setdefault((plan.resolved.namespace, found[0]), []).append(plan)
    out = []
    for (namespace, job), members in grouped.items():
        mark = members[0].resolved.loaded.mark(())
        out.append(
            Ladder(
                namespace, job, members[0].resolved.loaded.file, mark.line, mark.column, tuple(_row(p) for p in members)
            )
        )
    return out


def _row(plan: JobPlan) -> RungRow:
    resolved = plan.resolved
    found = ladder_of(plan)
    assert found is not None
    ckpt = plan.checkpoint
    kind = where = None
    if ckpt is not None:
        kind = "uri" if ckpt.kind is CheckpointKind.URI else "volume"
        where = ckpt.path if ckpt.kind is CheckpointKind.URI else ckpt.claim_name
    deadline = resolved.job.spec.max_run_time
    return RungRow(
        tag=found[1],
        name=resolved.name,
        nodes=resolved.nodes.value,
        gpus_per_node=resolved.gpus_per_node.value,
        procs_per_node=resolved.procs_per_node.value,
        world_size=resolved.world_size,
        shards=plan.data.num_shards if plan.data is not None else None,
        checkpoint_kind=kind,
        checkpoint=where,
        max_run_time=str(deadline) if deadline is not None else None,
        max_run_time_seconds=deadline.seconds if deadline is not None else None,
    )


def render(plans: list[JobPlan], fmt: str = "text") -> str:
    """The ladders of ``plans`` in ``fmt`` (one of :data:`FORMATS`)."""
    found = ladders(plans)
    if fmt == "json":
        return json.dumps({"ladders": [_json(ladder) for ladder in found]}, indent=2) + "\n"
    if not found:
        return "_No jobs._\n" if fmt == "markdown" else "no jobs\n"
    render_one = _markdown if fmt == "markdown" else _text
    return "\n".join(render_one(ladder) for ladder in found)


def _cells(row: RungRow) -> tuple[str, ...]:
    gpus = f"{row.gpus}" if row.gpus else "none"
    checkpoint = row.checkpoint or "none"  # a claim name, or a URI
    hours = format_number(row.gpu_hours) if row.gpu_hours is not None else "-"
    return (
        row.tag,
        row.name,
        str(row.nodes),
        gpus,
        str(row.procs_per_node),
        str(row.world_size),
        str(row.shards) if row.shards is not None else "none",
        checkpoint,
        row.max_run_time or "none",
        hours,
    )


def _summary(ladder: Ladder) -> str:
    count = len(ladder.rungs)
    text = f"{count} rung{'s' * (count != 1)}, each a job of its own"
    if ladder.gpu_hours is not None:
        text += f"; {format_number(ladder.gpu_hours)} GPU-hours at most for the whole ladder"
    return text


def _text(ladder: Ladder) -> str:
    table = [_HEADERS, *(_cells(row) for row in ladder.rungs)]
    widths = [max(len(line[i]) for line in table) for i in range(len(_HEADERS))]
    lines = [f"{ladder.namespace}/{ladder.job}: scaling ladder  ({ladder.file}:{ladder.line}:{ladder.column})"]
    lines.extend(
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in table
    )
    lines.append(f"  {_summary(ladder)}")
    return "\n".join(lines) + "\n"


def _markdown(ladder: Ladder) -> str:
    from trainspec.explain.render_markdown import cell

    lines = [
        f"### Scaling ladder of `{ladder.namespace}/{ladder.job}`",
        "",
        f"Defined in `{ladder.file}:{ladder.line}`. {_summary(ladder)}.",
        "",
        "| " + " | ".join(_HEADERS) + " |",
        "|" + "---|" * len(_HEADERS),
    ]
    lines.extend("| " + " | ".join(cell(c) for c in _cells(row)) + " |" for row in ladder.rungs)
    return "\n".join(lines) + "\n"


def _json(ladder: Ladder) -> dict[str, object]:
    return {
        "namespace": ladder.namespace,
        "job": ladder.job,
        "file": ladder.file,
        "line": ladder.line,
        "column": ladder.column,
        "gpuHours": float(ladder.gpu_hours) if ladder.gpu_hours is not None else None,
        "rungs": [
            {
                "rung": row.tag,
                "name": row.name,
                "nodes": row.nodes,
                "gpusPerNode": row.gpus_per_node,
                "gpus": row.gpus,
                "procsPerNode": row.procs_per_node,
                "worldSize": row.world_size,
                "shards": row.shards,
                "checkpoint": {"kind": row.checkpoint_kind, "location": row.checkpoint} if row.checkpoint else None,
                "maxRunTime": row.max_run_time,
                "maxRunTimeSeconds": row.max_run_time_seconds,
                "gpuHours": float(row.gpu_hours) if row.gpu_hours is not None else None,
            }
            for row in ladder.rungs
        ],
    }


__all__ = ["FORMATS", "Ladder", "RungRow", "ladders", "render"]
