"""CEL validation rules (``x-kubernetes-validations``), evaluated offline.

The walk follows the schema and the object together. At every schema node that carries rules
and where the object has a value, each rule runs with ``self`` bound to that value, converted
the way the API server does it: by the schema (``integer`` -> int, ``number`` -> double,
unknown fields pruned, property names escaped). Schema defaults are applied first, on a copy.

Transition rules (those that mention ``oldSelf``) only run when an old object is given and the
node can be correlated with it (same property, same map key, same list-map key); on create the
API server skips them too. A rule that cannot be compiled or evaluated is reported as a TS502
warning naming the rule, never passed silently; a rule that evaluates to false is a TS501.

The engine is behind a two-method protocol so that a faster CEL implementation can be swapped
in; :class:`CelPyEngine` uses cel-python (``celpy``), imported lazily.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.wellknown import INT64_MAX

from ._paths import render_path
from .defaults import apply_defaults

_OLD_SELF = re.compile(r"\boldSelf\b")
# Words CEL reserves; a property with such a name is reachable as ``__name__``.
_CEL_RESERVED = frozenset(
    "true false null in as break const continue else for function if import let loop package "
    "namespace return var".split()
)
_MACROS = frozenset({"has", "dyn", "all", "exists", "exists_one", "map", "filter", "reduce", "min"})


class CelCompileError(Exception):
    """The rule text cannot be compiled by the engine."""


class CelEvalError(Exception):
    """The rule raised an error during evaluation (or did not yield a bool)."""


class CelEngine(Protocol):
    """What the checker needs from a CEL implementation.

    ``activation`` maps variable names (``self``, ``oldSelf``) to plain Python values already
    normalised by the schema: ``bool``, ``int`` (CEL int), ``float`` (CEL double), ``str``,
    ``list``, ``dict`` with string keys, ``None``. An engine may also offer
    ``evaluate_message(program, activation) -> str`` for ``messageExpression``.
    """

    def compile(self, rule: str) -> Any:
        """Compile ``rule``; raise :class:`CelCompileError`."""
        ...

    def evaluate(self, program: Any, activation: Mapping[str, Any]) -> bool:
        """Run a compiled rule; raise :class:`CelEvalError` on errors or non-bool results."""
        ...


def _clean_error(exc: BaseException) -> str:
    # celpy error texts embed the whole activation; keep the first line of the reason.
    text = str(exc.args[0]) if exc.args else str(exc)
    text = text.split(" (in activation", 1)[0].splitlines()[0] if text else type(exc).__name__
    return text[:200]


class CelPyEngine:
    """:class:`CelEngine` on cel-python 0.5, with the Kubernetes library shims of .cel_lib.

    Compiled programs (and compile failures) are cached per rule text: parsing is the slow
    part (milliseconds), evaluation is ~0.1 ms.
    """

    def __init__(self) -> None:
        import celpy  # lazy: ~0.1 s, only when a rule is actually checked

        from . import cel_lib

        self._celpy = celpy
        self._env = celpy.Environment()
        self._functions = cel_lib.FUNCTIONS
        self._known = frozenset(celpy.evaluation.base_functions) | frozenset(cel_lib.FUNCTIONS) | _MACROS
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
            raise CelCompileError(
                f"undeclared function(s) {', '.join(unknown)} (not supported by the offline engine)"
            )
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
        types = self._celpy.celtypes
        if value is None:
            return None
        if isinstance(value, bool):
            return types.BoolType(value)
        if isinstance(value, int):
            if not -INT64_MAX - 1 <= value <= INT64_MAX:
                # Beyond int64 the API server decodes a JSON number as a double (and the
                # structural schema reports an int field); CEL has no wider integer.
                return types.DoubleType(float(value)) if value.bit_length() <= 1023 else types.DoubleType(
                    float("inf") if value > 0 else float("-inf"))
            return types.IntType(value)
        if isinstance(value, float):
            return types.DoubleType(value)
        if isinstance(value, str):
            return types.StringType(value)
        if isinstance(value, (list, tuple)):
            return types.ListType([self._to_cel(v) for v in value])
        if isinstance(value, Mapping):
            return types.MapType({types.StringType(str(k)): self._to_cel(v) for k, v in value.items()})
        return value

    def _run(self, program: Any, activation: Mapping[str, Any]) -> Any:
        context = {name: self._to_cel(value) for name, value in activation.items()}
        try:
            return program.evaluate(context)
        except Exception as exc:  # CELEvalError, and any bug surfacing from a shim
            raise CelEvalError(_clean_error(exc)) from exc

    def evaluate(self, program: Any, activation: Mapping[str, Any]) -> bool:
        result = self._run(program, activation)
        if not isinstance(result, (bool, self._celpy.celtypes.BoolType)):
            raise CelEvalError(f"rule evaluated to {type(result).__name__}, not bool")
        return bool(result)

    def evaluate_message(self, program: Any, activation: Mapping[str, Any]) -> str:
        """Evaluate a ``messageExpression``; it must yield a string."""
        result = self._run(program, activation)
        if not isinstance(result, str):
            raise CelEvalError("messageExpression did not evaluate to a string")
        return str(result)


_DEFAULT: CelEngine | None = None
_DEFAULT_LOCK = threading.Lock()


def default_engine() -> CelEngine:
    """The shared :class:`CelPyEngine` (raises ImportError when cel-python is missing)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = CelPyEngine()
        return _DEFAULT


# -- schema-driven value conversion ------------------------------------------------------------


def escape_property(name: str) -> str:
    """How a CEL rule spells property ``name`` (``a-b`` -> ``a__dash__b``), as in Kubernetes."""
    if name in _CEL_RESERVED:
        return f"__{name}__"
    return (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )


def _type_ok(schema: Mapping[str, Any], value: Any) -> bool:
    """Does ``value`` have the schema's type? (Mismatches are TS500s; rules there are skipped.)"""
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
    expected = schema.get("type")
    checks = {
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }
    return expected not in checks or checks[expected](value)


def cel_value(schema: Mapping[str, Any], value: Any, *, root: bool = False) -> Any:
    """``value`` as the API server shows it to CEL: typed, pruned and escaped by ``schema``."""
    if value is None or schema.get("x-kubernetes-int-or-string"):
        return value
    kind = schema.get("type")
    if kind == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind == "array" and isinstance(value, list):
        items = schema.get("items") or {}
        return [cel_value(items, v) for v in value]
    if isinstance(value, dict) and (kind == "object" or "properties" in schema):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        keep_all = schema.get("x-kubernetes-preserve-unknown-fields") is True
        embedded = root or schema.get("x-kubernetes-embedded-resource") is True
        out: dict[str, Any] = {}
        for key, item in value.items():
            if embedded and key == "metadata" and isinstance(item, dict):
                # Rules see only name and generateName of an object's metadata.
                out[key] = {k: item[k] for k in ("name", "generateName") if isinstance(item.get(k), str)}
            elif embedded and key in ("apiVersion", "kind"):
                out[key] = item
            elif key in properties:
                out[escape_property(key)] = cel_value(properties[key], item)
            elif isinstance(extra, Mapping):
                out[key] = cel_value(extra, item)
            elif keep_all or extra is True:
                out[key] = item
        return out
    return value


# -- the walk ----------------------------------------------------------------------------------


def iter_rules(
    schema: Mapping[str, Any], path: tuple[str | int, ...] = ()
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every ``x-kubernetes-validations`` rule in ``schema`` with its rendered path
    (``[*]`` for list items, ``[<key>]`` for map values)."""
    for rule in schema.get("x-kubernetes-validations") or ():
        yield render_path(path).replace("[-1]", "[*]"), rule
    for name, sub in (schema.get("properties") or {}).items():
        yield from iter_rules(sub, (*path, name))
    if isinstance(schema.get("items"), Mapping):
        yield from iter_rules(schema["items"], (*path, -1))
    if isinstance(schema.get("additionalProperties"), Mapping):
        yield from iter_rules(schema["additionalProperties"], (*path, "<key>"))


_MISSING = object()


class _Walker:
    def __init__(self, engine: CelEngine) -> None:
        self.engine = engine
        self.out: list[Diagnostic] = []

    def visit(
        self, schema: Mapping[str, Any], value: Any, old: Any, path: tuple[str | int, ...], root: bool
    ) -> None:
        if value is None or not _type_ok(schema, value):
            return
        for rule in schema.get("x-kubernetes-validations") or ():
            self.run(rule, schema, value, old, path, root)
        if isinstance(value, dict):
            properties = schema.get("properties") or {}
            extra = schema.get("additionalProperties")
            for key, item in value.items():
                sub = properties.get(key, extra if key not in properties else None)
                if isinstance(sub, Mapping) and not (root and key == "metadata"):
                    prior = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
                    self.visit(sub, item, prior, (*path, key), False)
        elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
            olds = self._correlate(schema, value, old)
            for index, item in enumerate(value):
                self.visit(schema["items"], item, olds[index], (*path, index), False)

    @staticmethod
    def _correlate(schema: Mapping[str, Any], value: list[Any], old: Any) -> list[Any]:
        # Only list-type=map items can be matched with their old selves (by key).
        keys = schema.get("x-kubernetes-list-map-keys")
        if schema.get("x-kubernetes-list-type") != "map" or not keys or not isinstance(old, list):
            return [_MISSING] * len(value)
        by_key = {tuple(repr(o.get(k)) for k in keys): o for o in old if isinstance(o, dict)}
        return [
            by_key.get(tuple(repr(v.get(k)) for k in keys), _MISSING) if isinstance(v, dict) else _MISSING
            for v in value
        ]

    def run(
        self,
        rule: Mapping[str, Any],
        schema: Mapping[str, Any],
        value: Any,
        old: Any,
        path: tuple[str | int, ...],
        root: bool,
    ) -> None:
        text = str(rule.get("rule", ""))
        where = render_path(path)
        if rule.get("fieldPath"):
            field_path = str(rule["fieldPath"])
            where = where + field_path if where else field_path.lstrip(".")
        activation: dict[str, Any] = {"self": cel_value(schema, value, root=root)}
        if _OLD_SELF.search(text):
            if old is _MISSING or old is None:
                if rule.get("optionalOldSelf"):
                    self.warn(
                        where,
                        text,
                        "optionalOldSelf rules need CEL optionals, which the offline engine lacks",
                    )
                return  # a transition rule on create: the API server skips it as well
            activation["oldSelf"] = cel_value(schema, old, root=root)
        try:
            program = self.engine.compile(text)
        except CelCompileError as exc:
            self.warn(where, text, f"could not be compiled: {exc}")
            return
        try:
            ok = self.engine.evaluate(program, activation)
        except CelEvalError as exc:
            self.warn(where, text, f"could not be evaluated: {exc}")
            return
        if not ok:
            self.out.append(
                Diagnostic(
                    code="TS501", message=self.message(rule, activation), path=where, hint=f"CEL rule: {text}"
                )
            )

    def message(self, rule: Mapping[str, Any], activation: Mapping[str, Any]) -> str:
        if rule.get("message"):
            return str(rule["message"])
        expression = rule.get("messageExpression")
        evaluate_message = getattr(self.engine, "evaluate_message", None)
        if expression and evaluate_message is not None:
            try:
                return str(evaluate_message(self.engine.compile(str(expression)), activation))
            except (CelCompileError, CelEvalError):
                pass  # the API server also falls back to a generic text
        if expression:
            return f"failed rule (messageExpression: {expression})"
        return f"failed rule: {rule.get('rule')}"

    def warn(self, where: str, text: str, problem: str) -> None:
        self.out.append(
            Diagnostic(
                code="TS502",
                severity=Severity.WARNING,
                path=where,
                hint=f"CEL rule: {text}",
                message=f"CEL rule {text!r} {problem}",
            )
        )


def check_cel(
    obj: Any,
    schema: Mapping[str, Any],
    *,
    engine: CelEngine | None = None,
    old: Any = None,
    defaults: bool = True,
) -> list[Diagnostic]:
    """All CEL findings (TS501 violations, TS502 warnings) for ``obj`` against ``schema``.

    ``schema`` is the CRD's ``openAPIV3Schema``. Pass ``old`` (the existing object) to also
    evaluate transition rules, as for an update. When no engine is given and cel-python is not
    installed, one TS502 warning says that the rules were not evaluated.
    """
    if engine is None:
        try:
            engine = default_engine()
        except ImportError:
            count = sum(1 for _ in iter_rules(schema))
            if not count:
                return []
            return [
                Diagnostic(
                    code="TS502",
                    severity=Severity.WARNING,
                    message=f"{count} CEL rule(s) not evaluated: cel-python is not installed",
                    hint="pip install 'trainspec[check]'",
                )
            ]
    if defaults:
        obj = apply_defaults(schema, obj)
        old = apply_defaults(schema, old) if old is not None else None
    walker = _Walker(engine)
    walker.visit(schema, obj, _MISSING if old is None else old, (), True)
    return walker.out
