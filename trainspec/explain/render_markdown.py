"""Explanations as GitHub-flavoured markdown tables, for pull-request comments."""

from __future__ import annotations

from trainspec.explain.explanation import Explanation
from trainspec.explain.planner_rows import HEADERS, layout_table
from trainspec.explain.rows import rows


def cell(text: str) -> str:
    """Text safe inside a table cell: pipes escaped, no line breaks."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_one(ex: Explanation) -> str:
    """A heading with the job's key and source, then a three-column table."""
    lines = [f"### `{ex.key}`", "", f"Defined in `{ex.file}:{ex.line}`.", "", "| | value | from |", "|---|---|---|"]
    lines.extend(f"| {cell(row.label)} | {cell(row.text)} | {cell(row.origin)} |" for row in rows(ex))
    if ex.planner is not None and ex.planner.layouts:
        lines += [
            "",
            "Parallel layouts (the best of each TP x CP x PP split; * the chosen one):",
            "",
            "| " + " | ".join(HEADERS) + " |",
            "|" + "---|" * len(HEADERS),
        ]
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in layout_table(ex.planner)]
    return "\n".join(lines) + "\n"


def render(explanations: list[Explanation]) -> str:
    """Every job's table, separated by a blank line."""
    if not explanations:
        return "_No jobs._\n"
    return "\n".join(render_one(ex) for ex in explanations)
