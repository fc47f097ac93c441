"""Lines as editors count them: YAML (libyaml's marks) also ends a line at NEL, LS and PS.

YAML 1.1 counts U+0085, U+2028 and U+2029 as line breaks, so every position libyaml reports
after one is a line further down than an editor, ``grep -n`` or a CI annotation shows. A file
holding none of them (nearly every file) is left as it is; otherwise every mark of its documents
and every position of its diagnostics is moved to the line and column counted by ``\\n``, ``\\r\\n``
and ``\\r`` alone.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.load.strict_yaml.documents import Mark, SourceDoc
from trainspec.dsl.record import replace

#: The breaks YAML counts and editors do not.
_ODD = re.compile("[\x85\u2028\u2029]")
_YAML_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_LINE_BREAK = re.compile("\r\n|[\r\n]")


def as_editors_count(text: str, docs: list[SourceDoc], diags: list[Diagnostic]) -> list[Diagnostic]:
    """``docs``' marks (changed in place) and ``diags`` (returned) counted by editors' lines."""
    if _ODD.search(text) is None:  # the caller looks first: this module is not imported for most files
        return diags
    move = _mover(text)
    for doc in docs:
        doc.start = Mark(*move(doc.start.line, doc.start.column))
        for marks in (doc.values, doc.keys):
            for path, mark in marks.items():
                marks[path] = Mark(*move(mark.line, mark.column))
    return [_moved(d, move) for d in diags]


def _mover(text: str) -> Callable[[int, int], tuple[int, int]]:
    """(YAML line, column) -> (editor's line, column), all 1-based."""
    yaml_starts = [0, *(m.end() for m in _YAML_BREAK.finditer(text))]
    starts = [0, *(m.end() for m in _LINE_BREAK.finditer(text))]

    def move(line: int, column: int) -> tuple[int, int]:
        if not 1 <= line <= len(yaml_starts):
            return line, column
        index = yaml_starts[line - 1] + column - 1
        physical = bisect_right(starts, index)
        return physical, index - starts[physical - 1] + 1

    return move


def _moved(diagnostic: Diagnostic, move: Callable[[int, int], tuple[int, int]]) -> Diagnostic:
    changes: dict = {}
    if diagnostic.line is not None:
        changes["line"], changes["column"] = move(diagnostic.line, diagnostic.column or 1)
        if diagnostic.column is None:
            changes["column"] = None
    related = tuple(
        replace(r, **dict(zip(("line", "column"), move(r.line, r.column or 1), strict=True)))
        if r.line is not None and r.file == diagnostic.file
        else r
        for r in diagnostic.related
    )
    if related != diagnostic.related:
        changes["related"] = related
    return replace(diagnostic, **changes) if changes else diagnostic
