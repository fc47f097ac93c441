"""Diagnostics: the one type every problem trainspec finds is reported as.

A diagnostic carries a stable code (``TS101``), a severity, where it is (file, line, column,
field path), what is wrong and what to do about it. Codes are public: tools and tests match
on them, so a code never changes meaning. :mod:`trainspec.dsl.codes` names and documents each one
(:data:`CODES` maps each to its meaning).
"""

from __future__ import annotations

import enum
import re
from typing import Any

from trainspec.dsl.codes import CODES, Code
from trainspec.dsl.record import Record, field, replace

__all__ = ["CODES", "Diagnostic", "Related", "Severity", "escape_text", "format_path", "has_errors"]


class Severity(str, enum.Enum):
    """How bad a problem is. Errors make a command exit 1; warnings and notes do not.

    A note is no problem at all: it says what trainspec filled in for the spec (an accelerator
    inferred from a node label), where the spec's author would otherwise not see it.
    """

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


class Related(Record):
    """A second place a diagnostic points at (for example the object a job conflicts with)."""

    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None


class Diagnostic(Record):
    """One problem, located.

    ``line`` and ``column`` are 1-based. ``path`` is the dotted field path inside the document
    (``spec.checkpoint.size``, ``spec.args[2]``), empty for problems of the whole document.
    """

    code: Code
    message: str
    severity: Severity = Severity.ERROR
    file: str | None = None
    line: int | None = None
    column: int | None = None
    path: str = ""
    hint: str | None = None
    related: tuple[Related, ...] = field(default=())

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @classmethod
    def located(
        cls,
        code: Code,
        message: str,
        file: str | None,
        mark: Any,
        path: tuple[str | int, ...] | list[str | int],
        *,
        severity: Severity = Severity.ERROR,
        hint: str | None = None,
        related: tuple[Related, ...] = (),
    ) -> Diagnostic:
        """A diagnostic at ``mark`` (anything with a 1-based ``line`` and ``column``, such as the
        loader's marks) about the field ``path`` of ``file``."""
        return cls(
            code=code,
            message=message,
            severity=severity,
            file=file,
            line=mark.line,
            column=mark.column,
            path=format_path(path),
            hint=hint,
            related=related,
        )

    def at(self, file: str | None, line: int | None, column: int | None) -> Diagnostic:
        """The same diagnostic placed at another location."""
        return replace(self, file=file, line=line, column=column)

    def sort_key(self) -> tuple:
        return (self.file or "", self.line or 0, self.column or 0, self.code, self.path, self.message)


def format_path(path: tuple[str | int, ...] | list[str | int]) -> str:
    """Render a field path the way users write it: ``spec.args[2].name``."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            out.append(f".{part}" if out else str(part))
    return "".join(out)


def has_errors(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> bool:
    return any(d.is_error for d in diagnostics)


# Characters that must never reach a generated file or a terminal as they are: C0 and C1 controls
# (a newline would start a YAML line of its own, an escape sequence rewrites the screen), the line
# and paragraph separators (line breaks to YAML 1.1 readers), the bidirectional controls, and lone
# surrogates (a file name's undecodable bytes: written back raw they may be C1 controls, and they
# cannot be encoded as UTF-8 at all). Compiled on first use: most runs never meet such a character.
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


def escape_text(text: str, *, backslashes: bool = True) -> str:
    """``text`` with control, separator, bidi and surrogate characters written as ``\\uXXXX``.

    With ``backslashes`` (names in generated files) a ``\\`` is doubled, so a name that holds
    ``\\u000a`` literally never reads as one holding a newline. Without (text for a terminal, which
    may hold names escaped already, by ``repr`` or by the loader) only the unsafe characters are
    replaced: escaping twice would double those names' backslashes.
    """
    if text.isprintable() and not (backslashes and "\\" in text):
        return text  # the common case, without a regular expression
    if backslashes:
        text = text.replace("\\", "\\\\")
    return re.sub(_UNSAFE, lambda m: f"\\u{ord(m.group()):04x}", text)
