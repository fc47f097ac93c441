"""Python spec files: a module whose top-level ``Runtime`` / ``TrainingJob`` objects are specs."""

from __future__ import annotations

import runpy
import sys
import traceback
from pathlib import Path

from trainspec.dsl.diagnostics import Diagnostic, format_path
from trainspec.dsl.modeling import ValidationError
from trainspec.dsl.models import Runtime, TrainingJob
from trainspec.dsl.sources import LoadedSpec, runtime_problems
from trainspec.dsl.validation import _CODE_BY_ERROR, _clean_loc, _message
from trainspec.dsl.yaml_loader import Mark


def load_python(path: Path, display: str) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """Run the module at ``path`` and collect its specs; a failure is a located diagnostic."""
    resolved = str(path.resolve())
    sys.path.insert(0, str(path.resolve().parent))
    try:
        namespace = runpy.run_path(resolved, run_name=f"trainspec_spec_{path.stem}")
    except ValidationError as exc:
        line = _line_in(exc, resolved)
        return [], [_from_validation(err, display, line) for err in exc.errors(include_url=False)]
    except SyntaxError as exc:
        return [], [Diagnostic(code="TS112", message=f"syntax error: {exc.msg}", file=display,
                               line=exc.lineno, column=exc.offset, hint="fix the Python syntax")]
    except BaseException as exc:  # a spec module may raise anything; never a traceback for the user
        if isinstance(exc, KeyboardInterrupt):
            raise
        line = _line_in(exc, resolved)
        return [], [Diagnostic(code="TS112", message=f"{type(exc).__name__}: {exc}", file=display, line=line,
                               column=1 if line else None, hint="the spec module must import without errors")]
    finally:
        sys.path.remove(str(path.resolve().parent))
    specs = [
        LoadedSpec(spec=value, file=display, origin=Mark(*(value.created_at or (1, 1))))
        for name, value in namespace.items()
        if isinstance(value, (Runtime, TrainingJob)) and not name.startswith("_")
    ]
    return specs, [d for s in specs if isinstance(s.spec, Runtime) for d in runtime_problems(s)]


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
    message = f"unknown field {loc[-1]!r}" if err["type"] == "extra_forbidden" else _message(err["type"], err, None)
    return Diagnostic(code=code, message=message, file=display, line=line, column=1 if line else None,
                      path=format_path(loc), hint="Python specs take snake_case keyword arguments")
