""":class:`CelEngine` on cel-expr-python, the Python bindings of the official C++ CEL.

Chosen over cel-python (see docs/check.md, "The CEL engine"): it implements the CEL spec the
API server's cel-go implements (``has()`` of a field of an absent object is ``no such key``,
errors absorbed by ``||``/``&&`` and macros, heterogeneous numeric comparison, optionals,
``cel.bind``), imports in ~2 ms and compiles a rule in ~0.1 ms, where cel-python builds a LALR
parser for ~0.25 s first.

The Kubernetes libraries (:mod:`.k8s_library`) are declared as Python functions. Their object
types (Quantity, URL, IP, CIDR, named format) are protobuf messages with one string field,
built only when a rule names one of those libraries (``protobuf`` is then imported, ~15 ms):
rules without them run in a smaller environment. The bindings cannot hand an optional value
across the Python boundary, so the format library's two optional-returning calls are
rewritten into CEL before compiling (:mod:`.rewrite`).
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from trainspec.check.cel import k8s_library as cel_lib
from trainspec.check.cel.engine_errors import CelCompileError, CelEvalError, CelUnsupportedError
from trainspec.check.cel.rewrite import rewrite_format_calls

#: Identifiers that need the object-typed libraries (and so the larger environment).
_OBJECT_LIBRARIES = re.compile(r"\b(?:isQuantity|quantity|isURL|url|isIP|ip|isCIDR|cidr|format)\b")
_STATUS = re.compile(r"^[A-Z_]+: ")
_NO_KEY = re.compile(r'^Key not found in map : "?(.*?)"?$')
_INDEX = re.compile(r"^Index error: index=(-?\d+)")


class _Failure(threading.local):
    """A library function that failed for a reason CEL does not define (a bug, not a verdict)."""

    problem: str | None = None


_FAILURE = _Failure()


def _guard(impl: Callable[..., Any], inputs: Callable[[Any], Any], output: Callable[[Any], Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        try:
            return output(impl(*(inputs(a) for a in args)))
        except cel_lib.LibraryError:
            raise
        except Exception as exc:
            _FAILURE.problem = f"{type(exc).__name__}: {exc}"
            raise

    return call


class CelExprEngine:
    """The default engine. Compiled programs (and failures) are cached per rule text."""

    name = "cel-expr-python"

    def __init__(self) -> None:
        from cel_expr_python import cel  # lazy: only when a rule is actually checked

        self._cel = cel
        self._envs: dict[bool, Any] = {}
        self._types: Any = None
        self._programs: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._last: tuple[Mapping[str, Any], dict[str, Any]] | None = None

    # -- environments ------------------------------------------------------------------------

    def _env(self, objects: bool) -> Any:
        with self._lock:
            env = self._envs.get(objects)
            if env is None:
                env = self._envs[objects] = self._build(objects)
            return env

    def _build(self, objects: bool) -> Any:
        from cel_expr_python.ext import ext_bindings, ext_math, ext_optional

        cel = self._cel
        try:
            types = self._object_types() if objects else None
        except ImportError as exc:  # protobuf carries the library's object types
            raise CelCompileError(f"the Kubernetes quantity/URL/IP/format libraries need protobuf: {exc}") from exc
        declarations = _declarations(cel, types)
        extensions = [ext_optional.ExtOptional(), ext_bindings.ExtBindings(), ext_math.ExtMath()]
        pool = self._types.pool if objects else None
        return cel.NewEnv(
            pool,
            variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
            extensions=extensions,
            functions=declarations,
        )

    def _object_types(self) -> Any:
        if self._types is None:
            from trainspec.check.cel.expr_overloads import ObjectTypes

            self._types = ObjectTypes(self._cel)
        return self._types

    # -- the engine protocol ----------------------------------------------------------------

    def compile(self, rule: str) -> Any:
        with self._lock:
            found = self._programs.get(rule)
            if found is None:
                try:
                    found = self._compile(rule)
                except CelCompileError as exc:
                    found = exc
                self._programs[rule] = found
        if isinstance(found, CelCompileError):
            raise found
        return found

    def _compile(self, rule: str) -> Any:
        objects = bool(_OBJECT_LIBRARIES.search(rule))
        text = rewrite_format_calls(rule) if objects else rule
        env = self._env(objects)
        try:
            return env.compile(text)
        except Exception as exc:  # RuntimeError with the checker's report
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            detail = _STATUS.sub("", lines[0]).removeprefix("ERROR: ") if lines else type(exc).__name__
            raise CelCompileError(detail[:300]) from exc

    def _data(self, activation: Mapping[str, Any]) -> dict[str, Any]:
        # The walker hands the same activation to every rule of a node: convert it once.
        last = self._last
        if last is not None and last[0] is activation:
            return last[1]
        try:
            data = {name: _native(value) for name, value in activation.items()}
        except ImportError as exc:  # timestamps and durations travel as protobuf messages
            raise CelUnsupportedError(f"date-time and duration fields need protobuf: {exc}") from exc
        self._last = (activation, data)
        return data

    def _run(self, program: Any, activation: Mapping[str, Any]) -> Any:
        _FAILURE.problem = None
        try:
            result = program.eval(data=self._data(activation))
        except Exception as exc:  # a value the bindings cannot convert, or an internal error
            raise CelUnsupportedError(str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__) from exc
        kind = result.type().name()
        if kind == "ERROR":
            if _FAILURE.problem is not None:
                raise CelUnsupportedError(f"a Kubernetes library function failed: {_FAILURE.problem}")
            raise _eval_error(str(result.value()))
        return kind, result

    def evaluate(self, program: Any, activation: Mapping[str, Any]) -> bool:
        kind, result = self._run(program, activation)
        # The server treats anything but true as a failed rule (rules are type-checked as bool).
        return kind == "BOOL" and result.value() is True

    def evaluate_message(self, program: Any, activation: Mapping[str, Any]) -> str:
        """Evaluate a ``messageExpression``; it must yield a string."""
        kind, result = self._run(program, activation)
        if kind != "STRING":
            raise CelEvalError("messageExpression failed to convert to string")
        return str(result.value())


def _native(value: Any) -> Any:
    """Plain values as the bindings take them: timestamps and durations as protobuf messages."""
    if isinstance(value, dict):
        return {k: _native(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_native(v) for v in value]
    if isinstance(value, (dt.datetime, dt.timedelta)):
        from google.protobuf import duration_pb2, timestamp_pb2

        if isinstance(value, dt.datetime):
            stamp = timestamp_pb2.Timestamp()
            stamp.FromDatetime(value.astimezone(dt.timezone.utc).replace(tzinfo=None))
            return stamp
        duration = duration_pb2.Duration()
        duration.FromTimedelta(value)
        return duration
    return value


def _eval_error(text: str) -> CelEvalError:
    """An error value of the C++ runtime in cel-go's words (the API server's messages)."""
    detail = _STATUS.sub("", text)
    if detail.startswith("No matching overloads found") or detail == "no such overload":
        return CelEvalError("no such overload", overload=True)
    found = _NO_KEY.match(detail)
    if found:
        return CelEvalError(f"no such key: {found.group(1)}")
    found = _INDEX.match(detail)
    if found:
        return CelEvalError(f"index out of bounds: {found.group(1)}")
    if detail == "divide by zero":
        return CelEvalError("division by zero")
    if detail == "Applying SELECT to non-message type":
        return CelEvalError("no such overload", overload=True)
    return CelEvalError(detail)


# -- declarations ---------------------------------------------------------------------------------


def _declarations(cel: Any, types: Any) -> list[Any]:
    """The Kubernetes library as FunctionDecls; object-typed ones only when ``types`` is given."""
    from trainspec.check.cel.expr_overloads import library_overloads

    by_name: dict[str, list[Any]] = {}
    for name, overload_id, result, params, member, impl, inputs, output in library_overloads(cel, types):
        by_name.setdefault(name, []).append(
            cel.Overload(overload_id, result, params, is_member=member, impl=_guard(impl, inputs, output))
        )
    return [cel.FunctionDecl(name, overloads) for name, overloads in sorted(by_name.items())]
