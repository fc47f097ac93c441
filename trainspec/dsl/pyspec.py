"""Python spec files: a module whose top-level ``Runtime`` / ``TrainingJob`` objects are specs.

Specs are collected from module-level names that do not start with ``_``: a spec itself, or a
list, tuple or dict of specs (``jobs = [TrainingJob(...), ...]``); an object reachable under
several names counts once. How the module is run (output captured, time limited, the process
left as it was) is :mod:`trainspec.dsl.pyrun`.
"""

from __future__ import annotations

import errno
import os
import stat
import traceback
from pathlib import Path
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic, Related, Severity, format_path
from trainspec.dsl.modeling import ValidationError
from trainspec.dsl.models import Runtime, TrainingJob
from trainspec.dsl.sources import DEFAULT_PYTHON_TIMEOUT, LoadedSpec, spec_problems
from trainspec.dsl.validation import _CODE_BY_ERROR, _clean_loc, _message
from trainspec.dsl.yaml_loader import Mark

#: Notes (output lines) shown for a module that wrote output, and the width of each.
MAX_OUTPUT_NOTES = 10
_NOTE_WIDTH = 200


def load_python(
    path: Path, display: str, *, timeout: float | None = DEFAULT_PYTHON_TIMEOUT
) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """Run the module at ``path`` and collect its specs; a failure is a located diagnostic.

    ``timeout``: seconds the module may run (None or 0: no limit), else TS115.
    """
    from trainspec.dsl.pyrun import SpecTimeout, run_module

    refused = _refuse(path, display)
    if refused is not None:
        return [], [refused]
    resolved = str(path.resolve())
    result = run_module(resolved, timeout=timeout, run_name=f"trainspec_spec_{path.stem}")
    problems = _output_warning(result.output, display) if result.output else []
    exc = result.error
    if isinstance(exc, SpecTimeout):
        line = _line_in(exc, resolved)
        where = f" (stopped at line {line})" if line else ""
        problems.append(
            Diagnostic(
                code="TS115",
                message=f"the spec module ran longer than {timeout:g}s{where}",
                file=display,
                line=line,
                column=1 if line else None,
                hint="a spec module should only build objects: look for an endless loop or a "
                "blocking call here (raise the limit with --python-timeout SECONDS, or python_timeout= in the library)",
            )
        )
        return [], problems
    if isinstance(exc, ValidationError):
        line = _line_in(exc, resolved)
        return [], [*problems, *(_from_validation(err, display, line) for err in exc.errors())]
    if isinstance(exc, SyntaxError):
        return [], [
            *problems,
            Diagnostic(
                code="TS112",
                message=f"syntax error: {exc.msg}",
                file=display,
                line=exc.lineno,
                column=exc.offset,
                hint="fix the Python syntax",
            ),
        ]
    if exc is not None:
        line = _line_in(exc, resolved)
        detail = str(exc)[:300]
        return [], [
            *problems,
            Diagnostic(
                code="TS112",
                message=f"{type(exc).__name__}: {detail}",
                file=display,
                line=line,
                column=1 if line else None,
                hint="the spec module must import without errors",
            ),
        ]
    specs = [
        LoadedSpec(spec=value, file=display, origin=Mark(*(value.created_at or (1, 1))))
        for value in _collect(result.namespace or {})
    ]
    if not specs:
        problems.append(
            Diagnostic(
                code="TS117",
                message="no TrainingJob or Runtime objects found",
                severity=Severity.WARNING,
                file=display,
                line=1,
                column=1,
                hint="assign them to module-level names (job = TrainingJob(...)) or put them in a module-level list, "
                "tuple or dict; names starting with '_' and code under if __name__ == '__main__' are not read",
            )
        )
    problems.extend(d for s in specs for d in spec_problems(s))
    return specs, problems


def _refuse(path: Path, display: str) -> Diagnostic | None:
    """A diagnostic when ``path`` is not a regular file: running a FIFO would wait forever."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return Diagnostic(
                code="TS119",
                message="cannot read the file: its path name is too long",
                file=display,
                hint="shorten the file or directory names",
            )
        if exc.errno == errno.ELOOP:
            return Diagnostic(
                code="TS118",
                message="cannot read the file: symbolic link loop",
                file=display,
                hint="point the link at a real file, or remove it",
            )
        return Diagnostic(
            code="TS100",
            message=f"cannot read the file: {exc.strerror or exc}",
            file=display,
            hint="check the path and the file's permissions",
        )
    except ValueError:
        return Diagnostic(
            code="TS100", message="cannot read the file: NUL character in the path", file=display, hint="check the path"
        )
    if not stat.S_ISREG(mode):
        from trainspec.dsl.discovery import file_type

        what = "a directory" if stat.S_ISDIR(mode) else file_type(mode)
        code = "TS100" if stat.S_ISDIR(mode) else "TS118"
        return Diagnostic(
            code=code,
            message=f"cannot run the file: it is {what}, not a regular file",
            file=display,
            hint="name a regular Python file",
        )
    return None


def _collect(namespace: dict[str, Any]) -> list[Any]:
    """Specs under public module-level names, directly or in a list, tuple or dict; each once."""
    found: list[Any] = []
    seen: set[int] = set()

    def take(value: Any) -> None:
        if isinstance(value, (Runtime, TrainingJob)) and id(value) not in seen:
            seen.add(id(value))
            found.append(value)

    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        if isinstance(value, (list, tuple)):
            for item in value:
                take(item)
        elif isinstance(value, dict):
            for item in value.values():
                take(item)
        else:
            take(value)
    return found


def _output_warning(output: Any, display: str) -> list[Diagnostic]:
    """TS116: what the module wrote, as notes (its text never reaches trainspec's own output)."""
    notes: list[Related] = []
    first_line: int | None = None
    total = 0
    for line, stream, text in output.pieces:
        first_line = first_line or line
        for part in text.splitlines():
            total += 1
            if len(notes) < MAX_OUTPUT_NOTES:
                notes.append(Related(f"{stream}: {_clip(part)}", display, line, 1 if line else None))
    for part in output.raw.decode("utf-8", errors="replace").splitlines():
        total += 1
        if len(notes) < MAX_OUTPUT_NOTES:
            notes.append(Related(f"output (file descriptor or child process): {_clip(part)}", display))
    dropped = output.dropped + output.raw_dropped
    if total > len(notes) or dropped:
        notes.append(
            Related(
                f"... output truncated ({total - len(notes)} more lines shown here, {dropped} more characters not kept)"
            )
        )
    return [
        Diagnostic(
            code="TS116",
            message="the spec module wrote output; it is not part of trainspec's output",
            severity=Severity.WARNING,
            file=display,
            line=first_line or 1,
            column=1,
            hint="remove the print() calls (or other output) from the spec module; what it wrote is shown in the notes",
            related=tuple(notes),
        )
    ]


def _clip(text: str) -> str:
    return text if len(text) <= _NOTE_WIDTH else text[:_NOTE_WIDTH] + "..."


def _line_in(exc: BaseException, filename: str) -> int | None:
    """The innermost line of ``filename`` in the traceback (the user's statement)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = frame.lineno
    return line


def _from_validation(err: dict, display: str, line: int | None) -> Diagnostic:
    loc = _clean_loc(err["loc"])
    code = _CODE_BY_ERROR.get(err["type"], "TS202")
    message = f"unknown field {loc[-1]!r}" if err["type"] == "unknown_field" else _message(err["type"], err, None)
    close = (err.get("ctx") or {}).get("suggestion")
    hint = f"did you mean {close}?" if close else "Python specs take snake_case keyword arguments"
    return Diagnostic(
        code=code,
        message=message,
        file=display,
        line=line,
        column=1 if line else None,
        path=format_path(loc),
        hint=hint,
    )
