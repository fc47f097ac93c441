"""Explanations as GitHub-flavoured markdown tables, for pull-request comments."""

from __future__ import annotations

from trainspec.explain.model import Explanation
from trainspec.explain.rows import rows


def cell(text: str) -> str:
    """Text safe inside a table cell: pipes escaped, no line breaks."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_one(ex: Explanation) -> str:
    """A heading with the job's key and source, then a three-column table."""
    lines = [f"### `{ex.key}`", "", f"Defined in `{ex.file}:{ex.line}`.", "",
             "| | value | from |", "|---|---|---|"]
    for row in rows(ex):
        lines.append(f"| {cell(row.label)} | {cell(row.text)} | {cell(row.origin)} |")
    return "\n".join(lines) + "\n"


def render(explanations: list[Explanation]) -> str:
    """Every job's table, separated by a blank line."""
    if not explanations:
        return "_No jobs._\n"
    return "\n".join(render_one(ex) for ex in explanations)
