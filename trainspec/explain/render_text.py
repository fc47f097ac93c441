"""Explanations as aligned plain text: one block per job, ``what  value  [from]`` per line."""

from __future__ import annotations

from trainspec.explain.explanation import Explanation
from trainspec.explain.planner_rows import HEADERS, layout_table
from trainspec.explain.rows import rows


def render_one(ex: Explanation) -> str:
    """One job's block: a heading with its location, then aligned rows."""
    lines = [f"{ex.key}  ({ex.file}:{ex.line}:{ex.column})"]
    table = rows(ex)
    width = max(len(r.label) for r in table)
    for row in table:
        origin = f"  [{row.origin}]" if row.origin else ""
        lines.append(f"  {row.label.ljust(width)}  {row.text}{origin}")
    if ex.planner is not None and ex.planner.layouts:
        lines.extend(_table(layout_table(ex.planner)))
    return "\n".join(lines) + "\n"


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    """The planner's table, columns aligned (the best layout of each TP x PP split, ``*`` the choice)."""
    table = [HEADERS, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADERS))]
    out = ["  parallel layouts (best of each TP x CP x PP; * chosen):"]
    out.extend(
        "    " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in table
    )
    return out


def render(explanations: list[Explanation]) -> str:
    """Every job, separated by a blank line."""
    if not explanations:
        return "no jobs\n"
    return "\n".join(render_one(ex) for ex in explanations)
