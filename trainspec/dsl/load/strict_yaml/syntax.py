"""Positions in the text, and the diagnostics of text YAML cannot read: bytes that are not UTF-8,
characters YAML forbids, syntax errors, and tabs in indentation."""

from __future__ import annotations

import re
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity

# Characters YAML forbids anywhere in a stream (C0/C1 controls, surrogates, U+FFFE/U+FFFF).
# Spelled as the forbidden set: the complement class compiles ~8x slower (start-up time).
# Compiled on first use (re caches it): it takes 0.4 ms, so ASCII text (nearly every spec) is
# checked with the set's ASCII part, which compiles 8x faster. Below, _BREAK and _BLOCK_HEADER
# are compiled on first use too: only error messages and files with tabs need them.
_NON_PRINTABLE = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]"
_NON_PRINTABLE_ASCII = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Line breaks as YAML (and libyaml's marks) count them.
_BREAK = "\r\n|[\r\n\x85\u2028\u2029]"
# A line ending in a block scalar header (``key: |``, ``- >-``, ``run: |2 # comment``).
_BLOCK_HEADER = r"(?:^|[ \t])[|>][-+0-9]{0,2}[ \t]*(?:#.*)?$"

_SYNTAX_HINTS = (
    ("mapping values are not allowed", "a plain value cannot contain ': '; quote the value, or fix the indentation"),
    ("could not find expected ':'", "every key needs a ':' after it; check the indentation and quotes"),
    ("did not find expected key", "check the indentation of this line against the lines above it"),
    ("did not find expected '-' indicator", "list items must line up under each other"),
    ("found undefined alias", "define the anchor (&name) before using the alias (*name)"),
    ("found unexpected end of stream", "a quote or bracket is not closed"),
)


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of character ``offset`` in ``text`` (error paths only)."""
    offset = max(0, min(offset, len(text)))
    line, start = 1, 0
    for brk in re.compile(_BREAK).finditer(text, 0, offset):
        line, start = line + 1, brk.end()
    return line, offset - start + 1


def lines(text: str) -> list[str]:
    """The lines of ``text`` as YAML counts them."""
    return re.split(_BREAK, text)


def tab_lines(text: str) -> dict[int, int]:
    """0-based line -> 1-based column of the first tab in its indentation, outside block scalars."""
    found: dict[int, int] = {}
    block_indent = -1  # indentation of the line that opened the current block scalar, if any
    for number, line in enumerate(lines(text)):
        body = line.lstrip(" \t")
        spaces = len(line) - len(line.lstrip(" "))
        if block_indent >= 0:
            if not body or spaces > block_indent:
                continue  # content of a block scalar: a tab here is text, not indentation
            block_indent = -1
        lead = line[: len(line) - len(body)]
        if "\t" in lead:
            found[number] = lead.index("\t") + 1
        elif body and re.search(_BLOCK_HEADER, body):
            block_indent = spaces
    return found


def decode(data: bytes, file: str) -> tuple[str | None, Diagnostic | None]:
    """The text of UTF-8 ``data`` (a byte-order mark dropped), or the diagnostic of its first bad byte."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a UTF-8 byte-order mark is allowed and dropped
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        before = data[: e.start].decode("utf-8")  # valid: the error is the first bad byte
        line, column = position(before, len(before))
        hint = "re-save the file as UTF-8"
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            hint = "the file looks like UTF-16: re-save it as UTF-8"
        message = f"file is not valid UTF-8: byte 0x{data[e.start]:02x} ({e.reason})"
        return None, Diagnostic(codes.NOT_UTF8, message, Severity.ERROR, file, line, column, "", hint)


def forbidden_character(text: str, file: str) -> Diagnostic | None:
    """The diagnostic of the first character YAML forbids in ``text`` (a lone surrogate is a
    text that was never UTF-8), or None."""
    bad = (_NON_PRINTABLE_ASCII if text.isascii() else re.compile(_NON_PRINTABLE)).search(text)
    if bad is None:
        return None
    line, column = position(text, bad.start())
    char = ord(bad.group())
    if 0xD800 <= char <= 0xDFFF:
        return Diagnostic(
            codes.NOT_UTF8,
            f"text contains a lone surrogate U+{char:04X}, not valid UTF-8",
            Severity.ERROR,
            file,
            line,
            column,
            "",
            "re-save the file as UTF-8",
        )
    return Diagnostic(
        codes.YAML_SYNTAX,
        f"YAML syntax error: character U+{char:04X} is not allowed in YAML",
        Severity.ERROR,
        file,
        line,
        column,
        "",
        "remove the control character (is this a binary file?)",
    )


def syntax_error(e: Any, text: str, file: str) -> Diagnostic:
    """A YAML syntax diagnostic (or, for libyaml's depth cap, a too-deep one) from a PyYAML error."""
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is not None:
        line, column = mark.line + 1, mark.column + 1
    else:  # ReaderError: a character position only
        line, column = position(text, getattr(e, "position", 0) or 0)
    # libyaml can place a mark just past the end of the text; keep positions inside the file.
    all_lines = lines(text)
    if line > len(all_lines):
        line, column = len(all_lines), len(all_lines[-1]) + 1
    column = min(column, len(all_lines[line - 1]) + 1)
    if "maximum nesting depth" in problem:
        return Diagnostic(
            codes.ALIAS_BOMB, "nesting too deep to load", Severity.ERROR, file, line, column, "", "flatten the document"
        )
    hint = next((h for p, h in _SYNTAX_HINTS if p in problem), None)
    context, cmark = getattr(e, "context", None), getattr(e, "context_mark", None)
    if context and context.startswith("found duplicate anchor"):
        # PyYAML puts this one the other way round: the problem is "second occurrence".
        where = f" (first defined at {cmark.line + 1}:{cmark.column + 1})" if cmark is not None else ""
        problem, hint = f"duplicate anchor{where}", "give each anchor (&name) its own name"
    if hint is None and context:
        hint = f"{context} started at {cmark.line + 1}:{cmark.column + 1}" if cmark is not None else context
    if hint is None:
        hint = "check the indentation and quoting near this position"
    return Diagnostic(codes.YAML_SYNTAX, f"YAML syntax error: {problem}", Severity.ERROR, file, line, column, "", hint)


def tab_indent(file: str, line0: int, column: int) -> Diagnostic:
    """The diagnostic of a tab in the indentation of 0-based line ``line0``."""
    return Diagnostic(
        codes.TAB_INDENT,
        "tab character in indentation",
        Severity.ERROR,
        file,
        line0 + 1,
        column,
        "",
        "indent with spaces; YAML does not allow tabs for indentation",
    )


def empty_document_mark(text: str, node: Any, floor: int) -> tuple[int, int]:
    """Where an empty document begins: its '---' line if there is one, else the composer's mark."""
    all_lines = lines(text)
    line0 = min(node.start_mark.line, len(all_lines) - 1)
    for number in range(line0 - 1, floor - 1, -1):
        if all_lines[number].startswith("---"):
            return number + 1, 1
    return line0 + 1, min(node.start_mark.column, len(all_lines[line0])) + 1
