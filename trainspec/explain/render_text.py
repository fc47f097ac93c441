"""Explanations as aligned plain text: one block per job, ``what  value  [from]`` per line."""

from __future__ import annotations

from trainspec.explain.model import Explanation
from trainspec.explain.rows import rows


def render_one(ex: Explanation) -> str:
    """One job's block: a heading with its location, then aligned rows."""
    lines = [f"{ex.key}  ({ex.file}:{ex.line}:{ex.column})"]
    table = rows(ex)
    width = max(len(r.label) for r in table)
    for row in table:
        origin = f"  [{row.origin}]" if row.origin else ""
        lines.append(f"  {row.label.ljust(width)}  {row.text}{origin}")
    return "\n".join(lines) + "\n"


def render(explanations: list[Explanation]) -> str:
    """Every job, separated by a blank line."""
    if not explanations:
        return "no jobs\n"
    return "\n".join(render_one(ex) for ex in explanations)
