"""Python spec files: a module whose top-level ``Runtime`` / ``TrainingJob`` objects are specs.

A module is code, so it runs only where Python is allowed (``--no-python``, project
``spec.python``: :func:`not_run` otherwise), and then in a child process trainspec supervises
(:mod:`trainspec.dsl.load.python.supervisor`): time, memory, output and exit are bounded there, and whatever
the module does, it changes this run only through the diagnostics made here. What the child hands
back is plain data; each spec document is validated again through the spec models, as a YAML
document is, and located at the line of its constructor call. Which names hold specs:
:func:`trainspec.dsl.load.python.execute.collect`.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Related, Severity, format_path
from trainspec.dsl.framework.modeling import ValidationError
from trainspec.dsl.load.loaded import DEFAULT_PYTHON_TIMEOUT, LoadedSpec, spec_problems
from trainspec.dsl.load.strict_yaml import Mark
from trainspec.dsl.load.validation import _CODE_BY_ERROR, _clean_loc, _message
from trainspec.dsl.spec.models import Runtime, TrainingJob
from trainspec.dsl.spec.pipeline_spec import Pipeline

if TYPE_CHECKING:
    from trainspec.dsl.load.python.protocol import FieldError, ModuleError, Payload, SpecData
    from trainspec.dsl.load.python.supervisor import Outcome

#: Notes (output lines) shown for a module that wrote output, and the width of each.
MAX_OUTPUT_NOTES = 10
_NOTE_WIDTH = 200
#: Children run at once for a directory of modules (at most one per CPU).
MAX_PARALLEL = 8

Loaded = tuple[list[LoadedSpec], list[Diagnostic]]

_HINTS: dict[str, str] = {
    codes.PYTHON_ENDED: "a spec module must run to its end and leave its process's descriptors alone: no os._exit(), "
    "no signal to itself, no crash in C code (what it wrote, if anything, is in the notes)",
    codes.PYTHON_RESULT_TOO_LARGE: "split the module, or build fewer specs in it",
    codes.PYTHON_LEFTOVER_PROCESSES: "wait for the processes the module starts (subprocess.run), and start no daemons",
}


def load_python(path: Path, display: str, *, timeout: float | None = DEFAULT_PYTHON_TIMEOUT) -> Loaded:
    """Run the module at ``path`` in a supervised child and collect its specs; a failure is a located diagnostic.

    ``timeout``: seconds the module may run (None or 0: no limit), else TS115.
    """
    from trainspec.dsl.load.python.supervisor import run_child

    refused = _refuse(path, display)
    if refused is not None:
        return [], [refused]
    outcome = run_child(str(path.resolve()), timeout=timeout or None, run_name=f"trainspec_spec_{path.stem}")
    return from_outcome(outcome, display, timeout)


def load_python_many(items: list[tuple[Path, str]], *, timeout: float | None = DEFAULT_PYTHON_TIMEOUT) -> list[Loaded]:
    """:func:`load_python` of each ``(path, display)``, a few children at a time, results in order."""
    if len(items) <= 1:
        return [load_python(path, display, timeout=timeout) for path, display in items]
    from concurrent.futures import ThreadPoolExecutor

    from trainspec.dsl.load.python.supervisor import kill_running

    pool = ThreadPoolExecutor(max_workers=min(len(items), _cpus(), MAX_PARALLEL), thread_name_prefix="trainspec-py")
    try:
        futures = [pool.submit(load_python, path, display, timeout=timeout) for path, display in items]
        return [future.result() for future in futures]
    except BaseException:  # interrupted: no child may outlive this run
        kill_running()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def not_run(display: str, severity: Severity, reason: str) -> Diagnostic:
    """TS123: a Python spec module this run does not execute (``--no-python``, ``spec.python``)."""
    return Diagnostic(
        code=codes.PYTHON_NOT_RUN,
        message=f"Python spec module not run: {reason}; its specs are not read",
        severity=severity,
        file=display,
        line=1,
        column=1,
        hint="write the spec in YAML, or check it where Python specs are allowed (a trusted change, "
        "without --no-python, project spec.python: allow)",
    )


def from_outcome(outcome: Outcome, display: str, timeout: float | None) -> Loaded:
    """Specs and diagnostics of a child's outcome; the specs validated again through the models."""
    payload = outcome.payload
    if payload is None:
        return [], [_failure(outcome, display, timeout)]
    problems = _output_warning(payload, outcome, display)
    if payload.error is not None:
        return [], [*problems, *_error_diagnostics(payload.error, display)]
    specs, found = _rebuild(payload, display)
    problems.extend(found)
    if not payload.specs:
        problems.append(
            Diagnostic(
                code=codes.PYTHON_NO_SPECS,
                message="no TrainingJob, Runtime or Pipeline objects found",
                severity=Severity.WARNING,
                file=display,
                line=1,
                column=1,
                hint="assign them to module-level names (job = TrainingJob(...)) or put them in a module-level list, "
                "tuple or dict; names starting with '_' and code under if __name__ == '__main__' are not read",
            )
        )
    if outcome.leftovers:
        count = outcome.leftovers
        message = f"the spec module left {count} process{'es' * (count != 1)} running after it ended; killed"
        problems.append(
            Diagnostic(
                codes.PYTHON_LEFTOVER_PROCESSES,
                message,
                file=display,
                line=1,
                column=1,
                hint=_HINTS[codes.PYTHON_LEFTOVER_PROCESSES],
            )
        )
    problems.extend(d for s in specs for d in spec_problems(s))
    return specs, problems


def _rebuild(payload: Payload, display: str) -> Loaded:
    """Each handed-back document through the models, as a YAML document goes (a spec as data, never trusted)."""
    specs: list[LoadedSpec] = []
    problems: list[Diagnostic] = []
    for item in payload.specs:
        model: Any = {"TrainingJob": TrainingJob, "Runtime": Runtime, "Pipeline": Pipeline}[item.kind]
        try:
            spec = model.model_validate(item.data)
        except ValidationError as exc:
            problems.extend(_from_validation(err, display, item.line) for err in exc.errors())
            continue
        except (RecursionError, ValueError, TypeError, OverflowError) as exc:  # data no constructor would take
            problems.append(_unreadable(item, display, exc))
            continue
        if item.line is not None:
            spec.__dict__["_created_at"] = (item.line, 1)  # where diagnostics point, as for an object built here
        specs.append(LoadedSpec(spec=spec, file=display, origin=Mark(item.line or 1, 1)))
    return specs, problems


def _unreadable(item: SpecData, display: str, exc: BaseException) -> Diagnostic:
    return Diagnostic(
        code=codes.PYTHON_ENDED,
        message=f"the spec module handed back a {item.kind} that cannot be read ({type(exc).__name__})",
        file=display,
        line=item.line or 1,
        column=1,
        hint="build specs with their constructors, and do not change them afterwards",
    )


def _failure(outcome: Outcome, display: str, timeout: float | None) -> Diagnostic:
    notes = tuple(_raw_notes(outcome, display, limit=MAX_OUTPUT_NOTES))
    line = outcome.line
    if outcome.code == codes.PYTHON_TIMEOUT:
        where = f" (stopped at line {line})" if line else ""
        return Diagnostic(
            code=codes.PYTHON_TIMEOUT,
            message=f"the spec module ran longer than {timeout or 0:g}s{where}",
            file=display,
            line=line or 1,
            column=1,
            hint="a spec module should only build objects: look for an endless loop or a blocking call "
            "here (raise the limit with --python-timeout SECONDS, or python_timeout= in the library)",
            related=notes,
        )
    code = outcome.code or codes.PYTHON_ENDED
    return Diagnostic(code, outcome.reason, file=display, line=line or 1, column=1, hint=_HINTS[code], related=notes)


def _error_diagnostics(error: ModuleError, display: str) -> list[Diagnostic]:
    if error.validation is not None:
        return [_from_field_error(err, display, error.line) for err in error.validation]
    if error.syntax:
        message, hint = f"syntax error: {error.message}", "fix the Python syntax"
    else:
        message = f"{error.type}: {error.message}" if error.message else error.type
        hint = "the spec module must import without errors"
    # Without a line of the module in its traceback (raised while trainspec collected the specs),
    # the error is located at the top of the module.
    return [
        Diagnostic(
            codes.PYTHON_IMPORT_FAILED, message, file=display, line=error.line or 1, column=error.column or 1, hint=hint
        )
    ]


def _from_field_error(err: FieldError, display: str, line: int | None) -> Diagnostic:
    """A field error the module raised (``TrainingJob(nods=8)``), located at the module's line."""
    code = _CODE_BY_ERROR.get(err.type, codes.WRONG_TYPE)
    message = f"unknown field {err.loc[-1]!r}" if err.type == "unknown_field" and err.loc else err.message
    hint = f"did you mean {err.suggestion}?" if err.suggestion else "Python specs take snake_case keyword arguments"
    return Diagnostic(
        code=code,
        message=message,
        file=display,
        line=line,
        column=1 if line else None,
        path=format_path(err.loc),
        hint=hint,
    )


def _from_validation(err: dict, display: str, line: int | None) -> Diagnostic:
    loc = _clean_loc(err["loc"])
    code = _CODE_BY_ERROR.get(err["type"], codes.WRONG_TYPE)
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


def _output_warning(payload: Payload, outcome: Outcome, display: str) -> list[Diagnostic]:
    """TS116: what the module wrote, as notes (its text never reaches trainspec's own output)."""
    if not (payload.pieces or payload.dropped or outcome.raw or outcome.raw_dropped):
        return []
    notes: list[Related] = []
    first_line: int | None = None
    total = 0
    for piece in payload.pieces:
        first_line = first_line or piece.line
        for part in piece.text.splitlines():
            total += 1
            if len(notes) < MAX_OUTPUT_NOTES:
                notes.append(Related(f"{piece.stream}: {_clip(part)}", display, piece.line, 1 if piece.line else None))
    raw = list(_raw_notes(outcome, display, limit=None))
    total += len(raw)
    notes.extend(raw[: max(MAX_OUTPUT_NOTES - len(notes), 0)])
    dropped = payload.dropped + outcome.raw_dropped
    if total > len(notes) or dropped:
        notes.append(
            Related(
                f"... output truncated ({total - len(notes)} more lines shown here, {dropped} more characters not kept)",
                display,
            )
        )
    return [
        Diagnostic(
            code=codes.PYTHON_OUTPUT,
            message="the spec module wrote output; it is not part of trainspec's output",
            severity=Severity.WARNING,
            file=display,
            line=first_line or 1,
            column=1,
            hint="remove the print() calls (or other output) from the spec module; what it wrote is shown in the notes",
            related=tuple(notes),
        )
    ]


def _raw_notes(outcome: Outcome, display: str, *, limit: int | None) -> list[Related]:
    lines = outcome.raw.decode("utf-8", errors="replace").splitlines()
    notes = [Related(f"output (file descriptor or child process): {_clip(part)}", display) for part in lines]
    return notes if limit is None else notes[:limit]


def _clip(text: str) -> str:
    return text if len(text) <= _NOTE_WIDTH else text[:_NOTE_WIDTH] + "..."


def _cpus() -> int:
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _refuse(path: Path, display: str) -> Diagnostic | None:
    """A diagnostic when ``path`` is not a regular file: running a FIFO would wait forever."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return Diagnostic(
                code=codes.PATH_TOO_LONG,
                message="cannot read the file: its path name is too long",
                file=display,
                hint="shorten the file or directory names",
            )
        if exc.errno == errno.ELOOP:
            return Diagnostic(
                code=codes.NOT_A_REGULAR_FILE,
                message="cannot read the file: symbolic link loop",
                file=display,
                hint="point the link at a real file, or remove it",
            )
        return Diagnostic(
            code=codes.UNREADABLE_FILE,
            message=f"cannot read the file: {exc.strerror or exc}",
            file=display,
            hint="check the path and the file's permissions",
        )
    except ValueError:
        return Diagnostic(
            code=codes.UNREADABLE_FILE,
            message="cannot read the file: NUL character in the path",
            file=display,
            hint="check the path",
        )
    if not stat.S_ISREG(mode):
        from trainspec.dsl.load.discovery import file_type

        what = "a directory" if stat.S_ISDIR(mode) else file_type(mode)
        code = codes.UNREADABLE_FILE if stat.S_ISDIR(mode) else codes.NOT_A_REGULAR_FILE
        return Diagnostic(
            code=code,
            message=f"cannot run the file: it is {what}, not a regular file",
            file=display,
            hint="name a regular Python file",
        )
    return None
