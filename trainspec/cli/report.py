"""Reporters: diagnostics as located text lines or as JSON, with the same data.

Text is for a terminal: a file name, a field path or a message may hold what a spec's author
put there (a newline, an escape sequence, a bidi override), so each is printed escaped
(:func:`~trainspec.dsl.diagnostics.escape_text`); JSON escapes them itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from trainspec.dsl.diagnostics import Diagnostic, Severity, escape_text


def location(file: str | None, line: int | None, column: int | None) -> str:
    """``file:line:column`` for a terminal, the file name escaped."""
    if not file:
        return "<input>"
    if line is None:
        return _plain(file)
    return f"{_plain(file)}:{line}:{column or 1}"


def _plain(text: str) -> str:
    # A name the loader escaped already (TS124), or a message quoting one with repr(), keeps its
    # backslashes: only the unsafe characters are replaced.
    return escape_text(text, backslashes=False)


def format_text(diagnostic: Diagnostic) -> str:
    """``path:line:col: error[TS101]: spec.nodes: must be >= 1 (got 0)`` plus hint and notes."""
    where = location(diagnostic.file, diagnostic.line, diagnostic.column)
    field = f"{_plain(diagnostic.path)}: " if diagnostic.path else ""
    lines = [f"{where}: {diagnostic.severity.value}[{diagnostic.code}]: {field}{_plain(diagnostic.message)}"]
    if diagnostic.hint:
        lines.append(f"  hint: {_plain(diagnostic.hint)}")
    lines.extend(f"  note: {location(r.file, r.line, r.column)}: {_plain(r.message)}" for r in diagnostic.related)
    return "\n".join(lines)


def summary(diagnostics: Sequence[Diagnostic], files: int | None = None) -> str:
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    notes = sum(1 for d in diagnostics if d.severity is Severity.NOTE)
    warnings = len(diagnostics) - errors - notes
    parts = [f"{errors} error{'s' * (errors != 1)}", f"{warnings} warning{'s' * (warnings != 1)}"]
    if notes:  # only when there are any: the summary every command printed so far stays as it was
        parts.append(f"{notes} note{'s' * (notes != 1)}")
    scope = f" in {files} file{'s' * (files != 1)}" if files is not None else ""
    return ", ".join(parts) + scope


def as_json(diagnostic: Diagnostic) -> dict:
    return {
        "code": diagnostic.code,
        "severity": diagnostic.severity.value,
        "file": diagnostic.file,
        "line": diagnostic.line,
        "column": diagnostic.column,
        "path": diagnostic.path,
        "message": diagnostic.message,
        "hint": diagnostic.hint,
        "related": [
            {"message": r.message, "file": r.file, "line": r.line, "column": r.column} for r in diagnostic.related
        ],
    }


def write(
    diagnostics: Sequence[Diagnostic],
    stream: TextIO,
    fmt: str = "text",
    *,
    files: int | None = None,
    quiet: bool = False,
) -> None:
    """Write every diagnostic, then (text) a one-line summary."""
    if fmt == "json":
        import json  # only for --format json: every command's start-up imports this module

        payload = {
            "diagnostics": [as_json(d) for d in diagnostics],
            "summary": {
                "errors": sum(1 for d in diagnostics if d.is_error),
                "warnings": sum(1 for d in diagnostics if d.severity is Severity.WARNING),
                "files": files,
            },
        }
        stream.write(json.dumps(payload, indent=2) + "\n")
        return
    for diagnostic in diagnostics:
        stream.write(format_text(diagnostic) + "\n")
    if not quiet or diagnostics:
        stream.write(summary(diagnostics, files) + "\n")
