"""The parallelism planner in words and as a table, shared by the text and markdown renderings.

:func:`planner_rows` adds the recommendation (or the checked pin) and its reasons to a job's rows;
:func:`layout_table` is the compact table: for every TP x PP split, its best layout (the chosen
one marked ``*``), what it needs per GPU and whether it fits. JSON carries every layout.
"""

from __future__ import annotations

from trainspec.compiler.parallelism.memory import HEADROOM
from trainspec.compiler.parallelism.recommend import Plan, Scored, rank
from trainspec.compiler.sizing import human_bytes
from trainspec.explain.explanation import COMPUTED, Explanation, Row


def planner_rows(ex: Explanation) -> list[Row]:
    """Rows for the planner's verdict (none when the job has no spec.model or no GPU memory)."""
    plan = ex.planner
    if plan is None:
        if ex.arch is not None and ex.arch.shape is None and ex.gpus_total:
            return [
                Row(
                    "parallel layout",
                    "not planned: add spec.model (layers, hiddenSize, attentionHeads, "
                    "sequenceLength) for activations and TP/PP (docs/parallelism.md)",
                )
            ]
        return []
    gpu = plan.inputs.cluster.gpu_memory or 0
    out = [
        Row(
            "parallel layouts",
            f"{len(plan.layouts)} valid, {plan.fitting} fit in {human_bytes(int(gpu * HEADROOM))}"
            f" per GPU (90% of {human_bytes(gpu)})",
            COMPUTED,
        )
    ]
    reasons = list(plan.reasons)
    if plan.chosen is None:
        out.append(Row("recommended layout", f"none: {reasons[0]}", COMPUTED))
        return out
    label = "pinned layout" if plan.pinned else "recommended layout"
    origin = "job" if plan.pinned else COMPUTED
    if plan.pinned and not plan.chosen.fits:
        out.append(Row(label, f"{plan.chosen.layout.describe()}: does not fit (TS425)", origin))
        return out
    out.append(Row(label, reasons[0], origin))
    out.append(Row("memory per GPU", reasons[1], COMPUTED))
    out.append(Row("why", reasons[2], COMPUTED))
    out.extend(Row(f"{item.split(':', 1)[0]} traffic", item.split(": ", 1)[1], COMPUTED) for item in reasons[3:])
    return out


HEADERS = ("", "TP", "CP", "PP", "DP", "ZeRO", "recompute", "model state", "activations", "per GPU", "fits")


def layout_table(plan: Plan) -> list[tuple[str, ...]]:
    """One row per TP x CP x PP split: its best fitting layout by the planner's preference, else its smallest.
    An uneven pipeline shows its first and last stages' layers (``16 (7/../7)``)."""
    best: dict[tuple[int, int, int], Scored] = {}
    for scored in plan.layouts:
        key = (scored.layout.tp, scored.layout.cp, scored.layout.pp)
        held = best.get(key)
        if held is None or _better(scored, held):
            best[key] = scored
    rows: list[tuple[str, ...]] = []
    for key in sorted(best, key=lambda k: (k[0] * k[1] * k[2], -k[0], k[1])):
        scored = best[key]
        lay, mem = scored.layout, scored.memory
        mark = "*" if plan.chosen is not None and scored.layout == plan.chosen.layout else ""
        rows.append(
            (
                mark,
                str(lay.tp),
                str(lay.cp),
                f"{lay.pp} ({lay.first}/../{lay.last})" if lay.uneven else str(lay.pp),
                str(lay.dp),
                str(lay.zero),
                lay.recompute,
                human_bytes(mem.state),
                human_bytes(mem.activations or 0),
                human_bytes(mem.total),
                {True: "yes", False: "no", None: "?"}[scored.fits],
            )
        )
    return rows


def _better(a: Scored, b: Scored) -> bool:
    if a.fits != b.fits:
        return bool(a.fits)
    if a.fits:
        return rank(a) < rank(b)
    return a.memory.total < b.memory.total
