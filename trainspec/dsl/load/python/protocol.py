"""What the child process that runs a Python spec module hands back, and how trainspec reads it.

The child (:mod:`trainspec.dsl.load.python.child`) runs the module; trainspec (:mod:`trainspec.dsl.load.python.supervisor`)
supervises it. Nothing but bytes crosses between them, over three channels:

* **result** (a pipe): the line :data:`READY` once the child is about to run the module (the time
  limit starts then), and at the end exactly one frame, ``trainspec-result <n>\\n`` followed by
  ``n`` bytes of UTF-8 JSON (:func:`encode`). At most :data:`MAX_RESULT_BYTES` are read.
* **output**: the child's descriptors 1 and 2 are one pipe that trainspec drains to the end, keeping
  the first :data:`MAX_RAW_OUTPUT` bytes (writes through ``os.write``, C code, subprocesses).
  Standard input is ``/dev/null``.
* **trace** (a pipe): :mod:`faulthandler` tracebacks (the time limit, a crash) and
  ``trainspec-exit`` records (:data:`EXIT_RECORD`), which only locate how a module ended; at most
  :data:`MAX_TRACE_BYTES` are kept.

A result is *complete* when the result channel holds :data:`READY`, then one whole frame and
nothing else, the JSON is an object of the shape :func:`decode` checks, and the child then
exited with status 0. Anything else is a diagnostic, never a pass. The JSON is plain data (never
pickle): the specs as their documents (the fields the module set, YAML names), the line of each
constructor call, what the module raised, and what it wrote through ``sys.stdout``/``sys.stderr``;
trainspec validates the documents again through the spec models.
"""

from __future__ import annotations

import json
from typing import Any

from trainspec.dsl.kube_facts import INT32_MAX
from trainspec.dsl.record import Record

#: The first line on the result channel: the module starts running (and its time limit with it).
READY = b"trainspec-child 1 ready\n"
#: The frame header; the decimal length of the JSON body and a newline follow.
FRAME = b"trainspec-result "
#: Bytes of JSON a module may hand back (about 10,000 specs), TS121 beyond.
MAX_RESULT_BYTES = 32 << 20
#: Bytes of descriptor-level output kept (the rest is read and counted, so writers never block).
MAX_RAW_OUTPUT = 2000
#: Bytes of the trace channel kept: enough for a traceback of every thread.
MAX_TRACE_BYTES = 64 << 10
#: Environment variable carrying a random token per child: processes that left its group keep it.
TOKEN_VARIABLE = "TRAINSPEC_SPEC_RUN"  # noqa: S105 (the name of a variable, no secret)
#: Prefix of a line on the trace channel: ``trainspec-exit <pid> <event> <spec line or 0>``.
EXIT_RECORD = "trainspec-exit"

_HEADER_MAX = len(FRAME) + 12  # the header line, digits and newline included
_MAX_TEXT = 2000  # characters of any one text the child hands back (messages, output pieces)
_STREAMS = ("stdout", "stderr")


class SpecData(Record):
    """One spec as plain data: its kind, the line of its constructor call, its document."""

    kind: str
    line: int | None
    data: dict


class FieldError(Record):
    """One error of a :class:`~trainspec.dsl.errors.ValidationError` the module raised."""

    loc: tuple
    type: str
    message: str
    suggestion: str | None


class ModuleError(Record):
    """What stopped the module: an exception's type, text and the spec line it came from."""

    type: str
    message: str
    line: int | None
    column: int | None
    syntax: bool
    validation: tuple[FieldError, ...] | None


class Piece(Record):
    """Text the module wrote through ``sys.stdout``/``sys.stderr`` and the spec line that wrote it."""

    line: int | None
    stream: str
    text: str


class Payload(Record):
    """A complete result: the specs (when the module ran through), its error, what it printed."""

    specs: tuple[SpecData, ...]
    error: ModuleError | None
    pieces: tuple[Piece, ...]
    dropped: int


def encode(payload: dict[str, Any]) -> bytes:
    """One frame holding ``payload`` (plain data) as JSON."""
    body = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return FRAME + str(len(body)).encode("ascii") + b"\n" + body


def split_frame(data: bytes) -> tuple[bytes | None, str | None]:
    """The JSON body of the one frame that ``data`` (what followed :data:`READY`) holds, or why not."""
    if not data:
        return None, "nothing was handed back"
    newline = data.find(b"\n", 0, _HEADER_MAX)
    if not data.startswith(FRAME) or newline < 0 or not data[len(FRAME) : newline].isdigit():
        return None, "the result does not start with its header"
    size = int(data[len(FRAME) : newline])
    body = data[newline + 1 :]
    if len(body) < size:
        return None, f"the result was cut short ({len(body)} of {size} bytes)"
    if len(body) > size:
        return None, "more data followed the result"
    return body, None


def decode(body: bytes) -> tuple[Payload | None, str | None]:
    """The payload of a frame body, checked field by field, or why it is malformed."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # ValueError: bad JSON, over-long ints
        return None, "the result is not JSON"
    try:
        return _payload(data), None
    except _Malformed as exc:
        return None, f"the result is malformed ({exc})"


class _Malformed(Exception):
    pass


def _require(ok: bool, what: str) -> None:
    if not ok:
        raise _Malformed(what)


def _payload(data: Any) -> Payload:
    _require(isinstance(data, dict), "not an object")
    specs, error, output = data.get("specs"), data.get("error"), data.get("output")
    _require(isinstance(specs, list), "specs")
    _require(error is None or isinstance(error, dict), "error")
    _require(isinstance(output, dict), "output")
    pieces, dropped = output.get("pieces"), output.get("dropped")
    _require(isinstance(pieces, list) and _is_int(dropped) and dropped >= 0, "output")
    return Payload(
        specs=tuple(_spec(item) for item in specs) if error is None else (),
        error=_error(error) if error is not None else None,
        pieces=tuple(_piece(item) for item in pieces),
        dropped=dropped,
    )


def _spec(item: Any) -> SpecData:
    _require(isinstance(item, dict), "a spec")
    kind, data = item.get("kind"), item.get("data")
    _require(kind in ("TrainingJob", "Runtime", "Pipeline") and isinstance(data, dict), "a spec")
    return SpecData(kind=kind, line=_line(item.get("line")), data=data)


def _error(item: dict) -> ModuleError:
    kind, message = item.get("type"), item.get("message")
    if not (isinstance(kind, str) and isinstance(message, str)):
        raise _Malformed("the error")
    validation = item.get("validation")
    _require(validation is None or isinstance(validation, list), "the error")
    return ModuleError(
        type=kind[:200],
        message=message[:_MAX_TEXT],
        line=_line(item.get("line")),
        column=_line(item.get("column")),
        syntax=item.get("syntax") is True,
        validation=tuple(_field_error(e) for e in validation) if validation is not None else None,
    )


def _field_error(item: Any) -> FieldError:
    _require(isinstance(item, dict), "a field error")
    loc, kind, message, suggestion = item.get("loc"), item.get("type"), item.get("message"), item.get("suggestion")
    _require(isinstance(loc, list) and all(isinstance(p, str) or _is_int(p) for p in loc), "a field path")
    _require(isinstance(kind, str) and isinstance(message, str), "a field error")
    _require(suggestion is None or isinstance(suggestion, str), "a suggestion")
    return FieldError(
        loc=tuple(loc),
        type=kind[:100],
        message=message[:_MAX_TEXT],
        suggestion=suggestion[:200] if suggestion else None,
    )


def _piece(item: Any) -> Piece:
    _require(isinstance(item, list) and len(item) == 3, "an output piece")
    line, stream, text = item
    _require(stream in _STREAMS and isinstance(text, str), "an output piece")
    return Piece(line=_line(line), stream=stream, text=text[:_MAX_TEXT])


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _line(value: Any) -> int | None:
    """A line or column number, or None (absent, not a number, out of any file's range)."""
    return value if _is_int(value) and 1 <= value <= INT32_MAX else None
