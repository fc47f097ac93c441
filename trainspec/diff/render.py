"""A diff report as text (terminals and CI logs), markdown (pull-request comments) or JSON."""

from __future__ import annotations

import json
from itertools import groupby

from trainspec.diff.compare import Change, DiffReport, show


def _groups(report: DiffReport) -> list[tuple[tuple[str, str], list[Change]]]:
    return [(key, list(items)) for key, items in groupby(report.changes, key=lambda c: (c.scope, c.key))]


def render_text(report: DiffReport) -> str:
    """``job team-nlp/llama-sft:`` then one indented line per change, then a summary line."""
    lines: list[str] = []
    for (scope, key), changes in _groups(report):
        lines.append(f"{scope} {key}:")
        for change in changes:
            lines.append(f"  {change.message}")
            if change.affects:
                lines.append(f"    affects: {', '.join(change.affects)}")
    lines.append(report.summary())
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(report: DiffReport) -> str:
    """A table ``| object | kind | change | affects |`` under a one-line summary."""
    if not report.changes:
        return "**trainspec diff:** no changes.\n"
    lines = [
        f"**trainspec diff:** {report.summary()}.",
        "",
        "| object | kind | change | affects |",
        "|---|---|---|---|",
    ]
    for change in report.changes:
        affects = ", ".join(f"`{_cell(a)}`" for a in change.affects)
        lines.append(
            f"| {change.scope} `{_cell(change.key)}` | {change.category} | {_cell(change.message)} | {affects} |"
        )
    return "\n".join(lines) + "\n"


def as_dict(change: Change) -> dict:
    return {
        "scope": change.scope,
        "key": change.key,
        "category": change.category,
        "message": change.message,
        "fields": [{"path": f.path, "old": f.old, "new": f.new} for f in change.fields],
        "affects": list(change.affects),
    }


def render_json(report: DiffReport) -> str:
    """``{"changed": bool, "summary": str, "changes": [...]}`` (absent values are null)."""
    payload = {"changed": report.changed, "summary": report.summary(), "changes": [as_dict(c) for c in report.changes]}
    return json.dumps(payload, indent=2) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}


def render(report: DiffReport, fmt: str = "text") -> str:
    """Render ``report`` in ``fmt`` (text, markdown or json)."""
    return RENDERERS[fmt](report)


__all__ = ["RENDERERS", "render", "show"]
