"""Inside the child process: run one Python spec module and describe what it built as plain data.

The child (:mod:`trainspec.dsl.load.python.child`) calls :func:`run_module`, which returns the payload of
:mod:`trainspec.dsl.load.python.protocol`. Around the module:

* ``sys.stdout`` and ``sys.stderr`` are replaced: each write is kept with the spec line that made
  it (the first :data:`MAX_CAPTURED` characters; the rest is counted), for TS116 notes. What is
  written below Python (``os.write``, C code, subprocesses) reaches descriptors 1 and 2, which
  trainspec drains itself.
* Whatever the module raises (``SystemExit`` and ``KeyboardInterrupt`` too) is described by its
  type, its text and the innermost line of the spec file in its traceback.
* Specs are collected from module-level names that do not start with ``_``: a spec itself, or a
  list, tuple or dict of specs (``jobs = [TrainingJob(...), ...]``); an object reachable under
  several names counts once. Each becomes its document: the fields the module set (or changed
  after construction), with their YAML names, as JSON values. trainspec validates that document
  again through the models, so an object altered behind the models' back (``object.__setattr__``)
  is a located error there, not a value trusted here.

Nothing here is restored afterwards: the process ends when the result is handed back.
"""

from __future__ import annotations

import enum
import io
import sys
import traceback
from typing import TYPE_CHECKING, Any

# Bound before the module runs, so that what it does to sys.modules or to these modules' names
# does not change what is collected (it may still tamper with the objects: they are re-validated).
from trainspec.dsl.framework.modeling import Model, ValidationError
from trainspec.dsl.kube_facts import SEED_MAX
from trainspec.dsl.spec.models import Runtime, TrainingJob
from trainspec.dsl.spec.pipeline_spec import Pipeline

if TYPE_CHECKING:
    from types import FrameType

#: Characters of Python-level output kept from a spec module (the rest is counted).
MAX_CAPTURED = 2000
#: Nesting beyond any spec's (a cycle made behind the models' back ends here).
_MAX_DEPTH = 64
#: Integers are clamped to this magnitude: past every bound a field has (the largest is a uint64
#: seed), and always printable.
_INT_CLAMP = SEED_MAX + 1


class Captured:
    """What a module wrote through Python: pieces with their spec line, and how much was dropped."""

    def __init__(self) -> None:
        self.pieces: list[list[Any]] = []  # [line, stream, text]
        self.kept = 0
        self.dropped = 0

    def add(self, stream: str, text: str, line: int | None) -> None:
        room = MAX_CAPTURED - self.kept
        piece = text[: max(room, 0)]
        self.dropped += len(text) - len(piece)
        if not piece:
            return
        self.kept += len(piece)
        last = self.pieces[-1] if self.pieces else None
        if last is not None and last[0] == line and last[1] == stream and not last[2].endswith("\n"):
            last[2] += piece
        else:
            self.pieces.append([line, stream, piece])


class _TextSink(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` while a module runs: keeps text and the spec line writing it."""

    def __init__(self, output: Captured, stream: str, fd: int, filename: str) -> None:
        super().__init__()
        self._output, self._stream, self._fd, self._filename = output, stream, fd, filename

    @property
    def encoding(self) -> str:  # type: ignore[override]  # typeshed: a settable attribute; fixed here
        return "utf-8"

    @property
    def buffer(self) -> Any:
        return _BinarySink(self)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd  # the output pipe trainspec drains

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._output.add(self._stream, text, spec_line(self._filename, 2))
        return len(text)


class _BinarySink(io.RawIOBase):
    def __init__(self, text: _TextSink) -> None:
        super().__init__()
        self._text = text

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._text.write(bytes(data).decode("utf-8", errors="replace"))
        return len(data)


def spec_line(filename: str, skip: int = 1) -> int | None:
    """The innermost line of ``filename`` on the calling thread's stack."""
    frame: FrameType | None = sys._getframe(skip)
    while frame is not None:
        if frame.f_code.co_filename == filename:
            return frame.f_lineno
        frame = frame.f_back
    return None


def run_module(filename: str, run_name: str) -> dict[str, Any]:
    """Run the module at ``filename`` (absolute) and return the payload describing it."""
    import runpy

    output = Captured()
    sys.stdout = _TextSink(output, "stdout", 1, filename)
    sys.stderr = _TextSink(output, "stderr", 2, filename)
    error: BaseException | None = None
    specs: list[dict[str, Any]] = []
    try:
        namespace = runpy.run_path(filename, run_name=run_name)
        specs = [_spec_data(value) for value in collect(namespace)]
    except BaseException as exc:  # the module may raise anything, SystemExit and KeyboardInterrupt included
        error = exc
    described = None if error is None else describe_error(error, filename)
    return {
        "specs": specs if error is None else [],
        "error": described,
        "output": {"pieces": output.pieces, "dropped": output.dropped},
    }


def collect(namespace: dict[str, Any]) -> list[Any]:
    """Specs under public module-level names, directly or in a list, tuple or dict; each once."""
    found: list[Any] = []
    seen: set[int] = set()

    def take(value: Any) -> None:
        if isinstance(value, (Runtime, TrainingJob, Pipeline)) and id(value) not in seen:
            seen.add(id(value))
            found.append(value)

    for name, value in list(namespace.items()):
        if not isinstance(name, str) or name.startswith("_"):
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


def _spec_data(value: Any) -> dict[str, Any]:
    created = value.__dict__.get("_created_at")
    line = created[0] if isinstance(created, tuple) and created else None
    kind = value.kind  # TrainingJob, Runtime or Pipeline
    return {"kind": kind, "line": line, "data": plain(value)}


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data: a model as the fields it was given or differ from their default."""
    if depth > _MAX_DEPTH:
        return _unreadable("nesting")
    if isinstance(value, Model):
        state = value.__dict__
        given = state.get("_fields_set", ())
        out: dict[str, Any] = {}
        for spec_field in type(value)._fields():
            current = state.get(spec_field.name)
            if spec_field.name in given or current != spec_field.get_default():
                out[spec_field.alias or spec_field.name] = plain(current, depth + 1)
        return out
    if isinstance(value, enum.Enum):
        return plain(value.value, depth + 1)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)  # a plain str, whatever a subclass says
    if isinstance(value, int):
        number = int.__index__(value)
        return max(-_INT_CLAMP, min(number, _INT_CLAMP))
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, (list, tuple)):
        return [plain(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {_key(key): plain(item, depth + 1) for key, item in value.items()}
    if hasattr(type(value), "__json__"):  # value types: quantities, durations, parameter counts
        return plain(value.__json__(), depth + 1)
    return _unreadable(type(value).__name__)


def _unreadable(what: Any) -> dict[str, None]:
    """What stands for a value that is not plain data: wrong for every field (a mapping where a
    scalar or list goes, a key no mapping field takes, a null where a mapping's values go)."""
    return {f"<not plain data: {str(what)[:60]}>": None}


def _key(key: Any) -> str:
    if isinstance(key, enum.Enum):
        key = key.value
    return str.__str__(key) if isinstance(key, str) else f"<{type(key).__name__}>"


def describe_error(exc: BaseException, filename: str) -> dict[str, Any]:
    """An exception as plain data: type, text, the spec line; field errors of a ValidationError."""
    line = _line_in(exc, filename)
    described: dict[str, Any] = {"type": _name(exc), "line": line, "column": None, "syntax": False, "validation": None}
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        described.update(message=str(exc.msg), line=exc.lineno, column=exc.offset, syntax=True)
    elif isinstance(exc, ValidationError):
        described.update(message="", validation=[_field_error(err) for err in exc.errors()])
    else:
        described["message"] = _text(exc)
    return described


def _field_error(err: dict[str, Any]) -> dict[str, Any]:
    # Imported only when a module raised a ValidationError (most never do): it costs every child
    # start-up time, and at worst a module that tampered with it gets its own messages wrong.
    from trainspec.dsl.load.validation import _clean_loc, _message

    kind = str(err.get("type"))
    try:
        message = _message(kind, err, None)
    except Exception:  # a message built from the module's own values: never fail over it
        message = str(err.get("msg", ""))
    suggestion = (err.get("ctx") or {}).get("suggestion")
    loc = [part if isinstance(part, (str, int)) and not isinstance(part, bool) else str(part) for part in err["loc"]]
    return {
        "loc": list(_clean_loc(tuple(loc))),
        "type": kind,
        "message": message,
        "suggestion": suggestion if isinstance(suggestion, str) else None,
    }


def _name(exc: BaseException) -> str:
    name = type(exc).__name__
    return name if isinstance(name, str) else "Exception"


def _text(exc: BaseException) -> str:
    try:
        return str(exc)[:300]
    except BaseException:  # a __str__ of the module's own: it may raise anything
        return "(its message cannot be shown)"


def _line_in(exc: BaseException, filename: str) -> int | None:
    """The innermost line of ``filename`` in the traceback (the user's statement); no file is read."""
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == filename:
            line = lineno
    return line
