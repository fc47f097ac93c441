""":class:`CelEngine` on cel-python (``celpy``): the fallback where cel-expr-python has no wheel.

cel-python is pure Python (any platform, Python 3.10). Where it departs from the CEL the API
server runs, the checker says "not evaluable" (TS502) rather than give a wrong verdict:

* a runtime type mismatch (celpy has no heterogeneous numeric comparison: ``1 < 1.5`` fails)
  is reported as not evaluable, not as the server's overload rejection;
* ``has(a.b)`` where ``a`` itself is absent is false in celpy, an error (a rejection) on the
  server: rules written that way can pass offline and fail on the cluster;
* no optionals (``.?``, ``optional.*``, so no ``optionalOldSelf``), no ``cel.bind``, no
  dotted library functions (``sets.*``, ``strings.quote``, ``ip.isCanonical``) and no format
  library: such rules do not compile (TS502).

Building celpy's parser costs ~0.25 s, once per process; compiled programs are cached per rule.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from trainspec.check.cel.engine_errors import CelCompileError, CelEvalError, CelUnsupportedError

_MACROS = frozenset({"has", "dyn", "all", "exists", "exists_one", "map", "filter", "reduce", "min"})


def _clean_error(exc: BaseException) -> str:
    # celpy error texts embed the whole activation; keep the first line of the reason.
    text = str(exc.args[0]) if exc.args else str(exc)
    text = text.split(" (in activation", 1)[0].splitlines()[0] if text else type(exc).__name__
    return text[:200]


class CelPyEngine:
    """cel-python 0.5 with the Kubernetes libraries of :mod:`.k8s_library` as celpy functions."""

    name = "cel-python"

    def __init__(self) -> None:
        import celpy  # lazy: only when a rule is actually checked

        self._celpy = celpy
        self._env = celpy.Environment()
        self._functions = celpy_functions()
        self._known = frozenset(celpy.evaluation.base_functions) | frozenset(self._functions) | _MACROS
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    def compile(self, rule: str) -> Any:
        with self._lock:
            found = self._cache.get(rule)
            if found is None:
                try:
                    found = self._compile(rule)
                except CelCompileError as exc:
                    found = exc
                self._cache[rule] = found
        if isinstance(found, CelCompileError):
            raise found
        return found

    def _compile(self, rule: str) -> Any:
        try:
            ast = self._env.compile(rule)
        except Exception as exc:  # CELParseError and lark errors
            raise CelCompileError(f"syntax error: {_clean_error(exc)}") from exc
        # celpy resolves functions only when they are called, so an unsupported library
        # function would pass every rule whose branch does not reach it. Check names now.
        unknown = sorted(self._called_names(ast) - self._known)
        if unknown:
            raise CelCompileError(f"undeclared function(s) {', '.join(unknown)} (not supported by cel-python)")
        return self._env.program(ast, functions=self._functions)

    @staticmethod
    def _called_names(ast: Any) -> set[str]:
        names: set[str] = set()
        for node in ast.iter_subtrees():
            if node.data in ("ident_arg", "dot_ident_arg") and node.children:
                names.add(str(node.children[0]))
            elif node.data == "member_dot_arg" and len(node.children) >= 2:
                names.add(str(node.children[1]))
        return names

    def _to_cel(self, value: Any) -> Any:
        return to_celpy(self._celpy.celtypes, value)

    def _run(self, program: Any, activation: Mapping[str, Any]) -> Any:
        context = {name: self._to_cel(value) for name, value in activation.items()}
        try:
            result = program.evaluate(context)
        except Exception as exc:  # CELEvalError, and any bug surfacing from a library function
            raise _classify(exc) from exc
        if isinstance(result, self._celpy.evaluation.CELEvalError):
            raise _classify(result)
        return result

    def evaluate(self, program: Any, activation: Mapping[str, Any]) -> bool:
        result = self._run(program, activation)
        # The server treats anything but true as a failed rule.
        return isinstance(result, (bool, self._celpy.celtypes.BoolType)) and bool(result)

    def evaluate_message(self, program: Any, activation: Mapping[str, Any]) -> str:
        """Evaluate a ``messageExpression``; it must yield a string."""
        result = self._run(program, activation)
        if not isinstance(result, str):
            raise CelEvalError("messageExpression failed to convert to string")
        return str(result)


def _classify(exc: BaseException) -> CelEvalError:
    """A celpy error as the server words it, or "not evaluable" where celpy is not CEL."""
    from trainspec.check.cel.k8s_library import LibraryError

    args: tuple[Any, ...] = exc.args
    kind = args[1] if len(args) > 1 and isinstance(args[1], type) else type(exc)
    text = _clean_error(exc)
    if issubclass(kind, LibraryError) or isinstance(exc, LibraryError):
        detail = args[2][0] if len(args) > 2 and args[2] else text
        return CelEvalError(str(detail))
    if issubclass(kind, KeyError):
        key = text.rpartition(": ")[2].strip("'\"")
        return CelEvalError(f"no such key: {key}")
    if issubclass(kind, ZeroDivisionError):
        return CelEvalError("division by zero")
    if issubclass(kind, IndexError):
        return CelEvalError("index out of bounds")
    if issubclass(kind, ValueError) and "overflow" in text:
        return CelEvalError("integer overflow")
    return CelUnsupportedError(text)


def to_celpy(types: Any, value: Any) -> Any:
    """A plain value (:mod:`.typed_values`) as celpy's typed value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return types.BoolType(value)
    if isinstance(value, int):
        return types.IntType(value)
    if isinstance(value, float):
        return types.DoubleType(value)
    if isinstance(value, str):
        return types.StringType(value)
    if isinstance(value, bytes):
        return types.BytesType(value)
    if isinstance(value, (list, tuple)):
        return types.ListType([to_celpy(types, v) for v in value])
    if isinstance(value, Mapping):
        return types.MapType({types.StringType(str(k)): to_celpy(types, v) for k, v in value.items()})
    import datetime as dt

    if isinstance(value, dt.datetime):
        return types.TimestampType(value)
    if isinstance(value, dt.timedelta):
        return types.DurationType(value)
    return value  # library objects (Quantity, URL, IP, CIDR) travel as they are


def _plain(value: Any) -> Any:
    """celpy's typed values as plain Python, for :mod:`.k8s_library`."""
    from celpy import celtypes

    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, (celtypes.IntType, celtypes.UintType)):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    return value


def _wrapped(impl: Callable[..., Any]) -> Callable[..., Any]:
    from celpy import celtypes

    def call(*args: Any) -> Any:
        return to_celpy(celtypes, impl(*(_plain(a) for a in args)))

    return call


def celpy_functions() -> dict[str, Any]:
    """name -> implementation, for celpy's ``Environment.program(functions=...)``.

    celpy dispatches by name only, so functions shared by several receivers (``indexOf`` on
    strings and lists, ``ip`` of a string or a CIDR) decide by the argument.
    """
    from trainspec.check.cel import k8s_library as lib

    def ip(value: Any) -> Any:
        return value.address if isinstance(value, lib.CIDR) else lib.ip(value)

    def add(a: Any, b: Any) -> Any:
        return lib.Quantity(a.value + lib._operand(b))

    def sub(a: Any, b: Any) -> Any:
        return lib.Quantity(a.value - lib._operand(b))

    functions: dict[str, Callable[..., Any]] = {
        "isQuantity": lib.is_quantity,
        "quantity": lib.quantity,
        "sign": lambda q: (q.value > 0) - (q.value < 0),
        "isInteger": lambda q: lib._is_int64(q.value),
        "asInteger": lib.as_integer,
        "asApproximateFloat": lambda q: float(q.value),
        "add": add,
        "sub": sub,
        "isGreaterThan": lambda a, b: lib.compare(a, b) > 0,
        "isLessThan": lambda a, b: lib.compare(a, b) < 0,
        "compareTo": lib.compare,
        "isURL": lib.is_url,
        "url": lib.url,
        "getScheme": lambda u: u.parts.scheme,
        "getHost": lib.url_host,
        "getHostname": lib.url_hostname,
        "getPort": lib.url_port,
        "getEscapedPath": lambda u: u.parts.path,
        "getQuery": lib.url_query,
        "isIP": lib.is_ip,
        "ip": ip,
        "family": lambda a: a.version,
        "isUnspecified": lambda a: a.is_unspecified,
        "isLoopback": lambda a: a.is_loopback,
        "isGlobalUnicast": lib.ip_is_global_unicast,
        "isLinkLocalUnicast": lib.ip_is_link_local_unicast,
        "isLinkLocalMulticast": lib.ip_is_link_local_multicast,
        "isCIDR": lib.is_cidr,
        "cidr": lib.cidr,
        "containsIP": lib.cidr_contains_ip,
        "containsCIDR": lib.cidr_contains_cidr,
        "masked": lib.cidr_masked,
        "prefixLength": lambda c: c.length,
        "charAt": lib.char_at,
        "indexOf": lib.index_of,
        "lastIndexOf": lib.last_index_of,
        "lowerAscii": lib.lower_ascii,
        "upperAscii": lib.upper_ascii,
        "replace": lib.replace,
        "split": lib.split,
        "substring": lib.substring,
        "trim": lambda s: s.strip(),
        "join": lib.join,
        "isSorted": lib.is_sorted,
        "sum": lib.list_sum,
        "max": lib.list_max,
        "find": lib.find,
        "findAll": lib.find_all,
    }
    return {name: _wrapped(impl) for name, impl in functions.items()}
