"""What changed in the pipelines themselves: steps added or removed, parameters, the order, conditions.

A job step's own fields are compared as a job (its TrainingJob ``<pipeline>-<step>`` is one of the
compile's jobs); here each step is compared by everything else it says, keyed by step name, so a
step moved in the list is no change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainspec.diff.compare import ABSENT, Change, FieldChange, _arrow
from trainspec.diff.snapshot import flatten

if TYPE_CHECKING:
    from trainspec.compiler.pipeline import CompileResult
    from trainspec.dsl.load.pipeline_steps import PipelineGraph


def pipeline_changes(old: CompileResult, new: CompileResult) -> list[Change]:
    """Every pipeline added, removed or changed from ``old`` to ``new``, by key (namespace/name)."""
    before, after = _by_key(old.pipelines), _by_key(new.pipelines)
    changes: list[Change] = []
    for key in sorted(set(before) | set(after)):
        if key not in before:
            changes.append(Change("pipeline", key, "added", f"new pipeline: {_steps(after[key])}"))
        elif key not in after:
            changes.append(Change("pipeline", key, "removed", f"pipeline removed (was {_steps(before[key])})"))
        else:
            changes.extend(_compare(key, _facts(before[key]), _facts(after[key])))
    return changes


def _by_key(graphs: list[PipelineGraph]) -> dict[str, PipelineGraph]:
    return {f"{g.pipeline.namespace or 'default'}/{g.pipeline.name}": g for g in graphs}


def _steps(graph: PipelineGraph) -> str:
    return " -> ".join(step.name for step in graph.steps)


def _facts(graph: PipelineGraph) -> tuple[dict[tuple, Any], dict[str, dict[tuple, Any]]]:
    """The pipeline as path -> value (parameters, the run order), and each step's (by name) without
    its job's fields and without what it leaves at the default."""
    dumped = graph.pipeline.model_dump(mode="json", by_alias=True, exclude_none=True)["spec"]
    facts = flatten({"parameters": dumped.get("parameters", {})})
    facts[("order",)] = [step.name for step in graph.steps]
    steps: dict[str, dict[tuple, Any]] = {}
    for step, found in zip(dumped["steps"], graph.pipeline.spec.steps, strict=True):
        written = {k: v for k, v in step.items() if k not in ("name", "job") and v not in ([], {}, False, 0)}
        if "job" in step:
            written["job"] = f"{graph.pipeline.name}-{found.name}"  # its fields are compared as that job
        steps[found.name] = {path: v for path, v in flatten(written).items() if v not in ([], {})}
    return facts, steps


def _compare(key: str, old: tuple[dict, dict], new: tuple[dict, dict]) -> list[Change]:
    (old_facts, old_steps), (new_facts, new_steps) = old, new
    grouped: dict[str, list[FieldChange]] = {}
    for path in sorted(set(old_facts) | set(new_facts), key=lambda p: tuple(map(str, p))):
        a, b = old_facts.get(path, ABSENT), new_facts.get(path, ABSENT)
        if a != b:
            grouped.setdefault(str(path[0]), []).append(FieldChange(".".join(map(str, path)), a, b))
    for name in sorted(set(old_steps) | set(new_steps)):
        if name not in old_steps or name not in new_steps:
            grouped.setdefault("steps", []).append(
                FieldChange(f"step {name}", _shown(old_steps.get(name)), _shown(new_steps.get(name)))
            )
            continue
        a_step, b_step = old_steps[name], new_steps[name]
        for path in sorted(set(a_step) | set(b_step), key=lambda p: tuple(map(str, p))):
            a, b = a_step.get(path, ABSENT), b_step.get(path, ABSENT)
            if a != b:
                dotted = ".".join(map(str, (name, *path)))
                grouped.setdefault("steps", []).append(FieldChange(f"step {dotted}", a, b))
    return [
        Change("pipeline", key, category, "; ".join(_arrow(f.path, f.old, f.new) for f in fields), tuple(fields))
        for category, fields in ((c, tuple(grouped[c])) for c in ("parameters", "steps", "order") if c in grouped)
    ]


def _shown(step: dict[tuple, Any] | None) -> Any:
    """A whole step in one line: what it runs and what it waits for."""
    if step is None:
        return ABSENT
    runs = step.get(("job",)) or step.get(("jobRef",)) or step.get(("container", "image"), "")
    after = step.get(("after",))
    waits = ", after " + ", ".join(after) if after else ""
    return f"{runs}{waits}"


__all__ = ["pipeline_changes"]
