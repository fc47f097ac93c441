"""CEL validation rules (``x-kubernetes-validations``), evaluated offline as kube-apiserver does.

The walk follows the schema and the object together, as apiextensions-apiserver's CEL
validator does: at every schema node that carries rules (its own, and those of its ``allOf``
branches) and where the object has a non-null value, each rule runs with ``self`` bound to
that value, converted by :mod:`.typed_values`. Schema defaults are applied first, on a copy.

Verdicts, in the server's words:

* a rule that evaluates to false is a TS501 at the node (plus the rule's ``fieldPath``), with
  the rule's ``message``, else its evaluated ``messageExpression``, else ``failed rule: <rule>``;
* a rule whose evaluation fails is a rejection too (TS501): reading a field the object lacks
  is ``no such key: <field> evaluating rule: <message or rule>``; a runtime overload mismatch
  (int-or-string values) is ``'no such overload': call arguments did not match ...``;
* transition rules (those that mention ``oldSelf``) need an old object: on a create, which is
  what ``trainspec check`` answers, the server skips them and so does this (``skipped=`` lists
  them). With ``optionalOldSelf: true`` the rule runs with ``oldSelf`` = ``optional.none()``;
* a rule the offline engine cannot compile or evaluate faithfully is a TS502 warning naming
  the rule, never passed silently (the server compiled it when the CRD was installed).

Not modelled: the CEL cost budget (the server's estimated and runtime cost limits), ratcheting
(updates only), and order-insensitive equality of ``x-kubernetes-list-type: set/map`` lists
(it only matters to transition rules).

Engines sit behind :class:`CelEngine` (compile, evaluate). :func:`default_engine` takes
cel-expr-python (:mod:`.expr_engine`, the official C++ CEL), else cel-python (:mod:`.celpy_engine`);
``$TRAINSPEC_CEL_ENGINE`` (``cel-expr``, ``celpy``) forces one.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from trainspec.check._paths import render_path
from trainspec.check.cel.celpy_engine import CelPyEngine
from trainspec.check.cel.engine_errors import CelCompileError, CelEvalError, CelUnsupportedError
from trainspec.check.cel.typed_values import cel_value, escape_property, type_matches
from trainspec.check.schema.defaulting import apply_defaults
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity

__all__ = [
    "CelCompileError",
    "CelEngine",
    "CelEvalError",
    "CelPyEngine",
    "CelUnsupportedError",
    "ENV_ENGINE",
    "cel_value",
    "check_cel",
    "default_engine",
    "escape_property",
    "iter_rules",
]

ENV_ENGINE = "TRAINSPEC_CEL_ENGINE"
_OLD_SELF = re.compile(r"\boldSelf\b")
#: The server's cap on an evaluated messageExpression (celconfig.MaxEvaluatedMessageExpressionSizeBytes).
_MAX_MESSAGE = 5 * 1024


class CelEngine(Protocol):
    """What the checker needs from a CEL implementation.

    ``activation`` maps variable names (``self``, ``oldSelf``) to the plain values of
    :func:`cel_value`. ``evaluate`` raises :class:`CelEvalError` for an error CEL defines
    (the server rejects the object with it; ``overload=True`` for a runtime overload mismatch)
    and :class:`CelUnsupportedError` when the engine itself cannot evaluate the rule. An engine
    may also offer ``evaluate_message(program, activation) -> str`` for ``messageExpression``.
    """

    def compile(self, rule: str) -> Any:
        """Compile ``rule``; raise :class:`CelCompileError`."""
        ...

    def evaluate(self, program: Any, activation: Mapping[str, Any]) -> bool:
        """Run a compiled rule; raise :class:`CelEvalError` on errors or non-bool results."""
        ...


_DEFAULT: CelEngine | None = None
_DEFAULT_LOCK = threading.Lock()


def make_engine(name: str = "") -> CelEngine:
    """A new engine: ``cel-expr`` (cel-expr-python), ``celpy`` (cel-python), or the first
    installed of the two for ``""``/``auto``. Raises ImportError when none is installed."""
    choice = (name or "auto").strip().lower()
    if choice in ("cel-expr", "cel-expr-python", "auto"):
        try:
            from trainspec.check.cel.expr_engine import CelExprEngine

            return CelExprEngine()
        except ImportError:
            if choice != "auto":
                raise
    if choice in ("celpy", "cel-python", "auto"):
        return CelPyEngine()
    raise ImportError(f"unknown CEL engine {name!r} (${ENV_ENGINE}): use cel-expr or celpy")


def default_engine() -> CelEngine:
    """The shared engine of :func:`make_engine` for ``$TRAINSPEC_CEL_ENGINE`` (built once)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = make_engine(os.environ.get(ENV_ENGINE, ""))
        return _DEFAULT


# -- rules in a schema -------------------------------------------------------------------------


def iter_rules(schema: Mapping[str, Any], path: tuple[str | int, ...] = ()) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every ``x-kubernetes-validations`` rule in ``schema`` with its rendered path
    (``[*]`` for list items, ``[<key>]`` for map values), ``allOf`` branches included."""
    for rule in schema.get("x-kubernetes-validations") or ():
        yield render_path(path).replace("[-1]", "[*]"), rule
    for branch in schema.get("allOf") or ():
        if isinstance(branch, Mapping):
            yield from iter_rules(branch, path)
    for name, sub in (schema.get("properties") or {}).items():
        yield from iter_rules(sub, (*path, name))
    if isinstance(schema.get("items"), Mapping):
        yield from iter_rules(schema["items"], (*path, -1))
    if isinstance(schema.get("additionalProperties"), Mapping):
        yield from iter_rules(schema["additionalProperties"], (*path, "<key>"))


def _has_rules(schema: Any) -> bool:
    """Does ``schema`` carry a rule anywhere below (memoised on the schema's identity)?"""
    if not isinstance(schema, Mapping):
        return False
    key = id(schema)
    found = _HAS_RULES.get(key)
    if found is None or found[0] is not schema:
        value = bool(schema.get("x-kubernetes-validations")) or any(
            _has_rules(s)
            for s in (
                *(schema.get("properties") or {}).values(),
                schema.get("items"),
                schema.get("additionalProperties"),
                *(schema.get("allOf") or ()),
            )
        )
        found = (schema, value)
        if len(_HAS_RULES) > 500_000:  # bound the memo in long-lived processes (tests, servers)
            _HAS_RULES.clear()
        _HAS_RULES[key] = found
    return found[1]


_HAS_RULES: dict[int, tuple[Any, bool]] = {}

# -- the walk ----------------------------------------------------------------------------------

_MISSING = object()


class _Context:
    """The activations of one schema node: ``self`` (and ``oldSelf``) converted once for all
    the node's rules, so an engine may also convert them once."""

    def __init__(self, schema: Mapping[str, Any], value: Any, old: Any, root: bool) -> None:
        self.schema, self.value, self.old, self.root = schema, value, old, root
        self.has_old = old is not _MISSING and old is not None
        self._activation: dict[str, Any] | None = None
        self._with_old: dict[str, Any] | None = None

    @property
    def activation(self) -> dict[str, Any]:
        if self._activation is None:
            self._activation = {"self": cel_value(self.schema, self.value, root=self.root)}
        return self._activation

    @property
    def with_old(self) -> dict[str, Any]:
        if self._with_old is None:
            self._with_old = {**self.activation, "oldSelf": cel_value(self.schema, self.old, root=self.root)}
        return self._with_old


class _Walker:
    def __init__(self, engine: CelEngine, skipped: list[tuple[str, str]] | None) -> None:
        self.engine = engine
        self.out: list[Diagnostic] = []
        self.skipped = skipped

    def visit(
        self,
        node: Mapping[str, Any],
        rules: Mapping[str, Any],
        value: Any,
        old: Any,
        path: tuple[str | int, ...],
        root: bool,
    ) -> None:
        """``node`` types the value; ``rules`` says which rules apply (``node`` or an allOf branch)."""
        if value is None or not type_matches(node, value) or not _has_rules(rules):
            return
        here = rules.get("x-kubernetes-validations") or ()
        if here:
            context = _Context(node, value, old, root)
            for rule in here:
                self.run(rule, context, path)
        for branch in rules.get("allOf") or ():
            if isinstance(branch, Mapping):
                self.visit(node, branch, value, old, path, root)
        if isinstance(value, dict):
            self._visit_object(node, rules, value, old, path, root)
        elif isinstance(value, list) and isinstance(rules.get("items"), Mapping):
            node_items = node.get("items")
            items = node_items if isinstance(node_items, Mapping) else rules["items"]
            olds = self._correlate(node, value, old)
            for index, item in enumerate(value):
                self.visit(items, rules["items"], item, olds[index], (*path, index), False)

    def _visit_object(
        self,
        node: Mapping[str, Any],
        rules: Mapping[str, Any],
        value: dict[str, Any],
        old: Any,
        path: tuple[str | int, ...],
        root: bool,
    ) -> None:
        node_properties = node.get("properties") or {}
        rule_properties = rules.get("properties") or {}
        extra, rule_extra = node.get("additionalProperties"), rules.get("additionalProperties")
        # An atomic map is replaced as a whole: its entries have no old selves.
        correlate = isinstance(old, dict) and node.get("x-kubernetes-map-type") != "atomic"
        for key, item in value.items():
            if root and key == "metadata":
                continue
            prior = old.get(key, _MISSING) if correlate else _MISSING
            if key in node_properties:
                if key in rule_properties:
                    self.visit(node_properties[key], rule_properties[key], item, prior, (*path, key), False)
            elif isinstance(extra, Mapping) and isinstance(rule_extra, Mapping):
                self.visit(extra, rule_extra, item, prior, (*path, key), False)

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

    def run(self, rule: Mapping[str, Any], context: _Context, path: tuple[str | int, ...]) -> None:
        text = str(rule.get("rule", ""))
        if not text.strip():
            return  # an empty rule has no program on the server either
        where = render_path(path)
        activation = context.activation
        if _OLD_SELF.search(text):
            optional = rule.get("optionalOldSelf") is True
            if not context.has_old:
                if not optional:
                    if self.skipped is not None:
                        self.skipped.append((where, text))
                    return  # a transition rule on a create: the API server skips it as well
                text = f"cel.bind(oldSelf, optional.none(), (\n{text}\n))"
            else:
                activation = context.with_old
                if optional:
                    text = f"cel.bind(oldSelf, optional.of(oldSelf), (\n{text}\n))"
        try:
            program = self.engine.compile(text)
        except CelCompileError as exc:
            self.warn(where, rule, f"could not be compiled by the offline engine: {exc}")
            return
        try:
            ok = self.engine.evaluate(program, activation)
        except CelUnsupportedError as exc:
            self.warn(where, rule, f"could not be evaluated by the offline engine: {exc}")
            return
        except CelEvalError as exc:
            self.reject(where, rule, _error_message(rule, exc))
            return
        if not ok:
            field_path = str(rule.get("fieldPath") or "")
            if field_path:
                where = where + field_path if where else field_path.lstrip(".")
            self.reject(where, rule, self.message(rule, activation))

    def message(self, rule: Mapping[str, Any], activation: Mapping[str, Any]) -> str:
        """The server's detail for a false rule: messageExpression, else message, else default."""
        expression = rule.get("messageExpression")
        evaluate_message = getattr(self.engine, "evaluate_message", None)
        if expression and evaluate_message is not None:
            try:
                text = str(evaluate_message(self.engine.compile(str(expression)), activation)).strip()
            except (CelCompileError, CelEvalError):
                text = ""  # the server falls back to the message as well
            if text and "\n" not in text and len(text.encode()) <= _MAX_MESSAGE:
                return text
        return _default_message(rule)

    def reject(self, where: str, rule: Mapping[str, Any], message: str) -> None:
        self.out.append(
            Diagnostic(code=codes.CRD_RULE, message=message, path=where, hint=f"CEL rule: {rule.get('rule')}")
        )

    def warn(self, where: str, rule: Mapping[str, Any], problem: str) -> None:
        text = str(rule.get("rule"))
        self.out.append(
            Diagnostic(
                code=codes.CRD_RULE_UNEVALUATED,
                severity=Severity.WARNING,
                path=where,
                hint=f"CEL rule: {text}",
                message=f"CEL rule {text!r} {problem}",
            )
        )


def _rule_error_string(rule: Mapping[str, Any]) -> str:
    return str(rule.get("message") or "").strip() or str(rule.get("rule", "")).strip()


def _default_message(rule: Mapping[str, Any]) -> str:
    message = str(rule.get("message") or "").strip()
    return message or f"failed rule: {_rule_error_string(rule)}"


def _error_message(rule: Mapping[str, Any], exc: CelEvalError) -> str:
    """How apiextensions-apiserver words an evaluation error."""
    if exc.overload:
        return (
            f"'{exc}': call arguments did not match a supported operator, function or macro signature "
            f"for rule: {_rule_error_string(rule)}"
        )
    return f"{exc} evaluating rule: {_rule_error_string(rule)}"


def check_cel(
    obj: Any,
    schema: Mapping[str, Any],
    *,
    engine: CelEngine | None = None,
    old: Any = None,
    defaults: bool = True,
    skipped: list[tuple[str, str]] | None = None,
) -> list[Diagnostic]:
    """All CEL findings (TS501 rejections, TS502 warnings) for ``obj`` against ``schema``.

    ``schema`` is the CRD's ``openAPIV3Schema``. Pass ``old`` (the existing object) to also
    evaluate transition rules, as for an update; without it, the transition rules that were
    skipped are appended to ``skipped`` as ``(path, rule)`` when a list is given. When no
    engine is given and no CEL engine is installed, one TS502 warning says that the rules were
    not evaluated.
    """
    if not _has_rules(schema):
        return []  # nothing to evaluate: no engine is loaded for rule-less CRDs
    if engine is None:
        try:
            engine = default_engine()
        except ImportError:
            count = sum(1 for _ in iter_rules(schema))
            if not count:
                return []
            from trainspec.extras import install_hint  # here: `import trainspec.check` stays self-contained

            return [
                Diagnostic(
                    code=codes.CRD_RULE_UNEVALUATED,
                    severity=Severity.WARNING,
                    message=f"{count} CEL rule(s) not evaluated: no CEL engine (cel-expr-python or cel-python) "
                    f"is installed",
                    hint=install_hint("check"),
                )
            ]
    if defaults:
        obj = apply_defaults(schema, obj)
        old = apply_defaults(schema, old) if old is not None else None
    walker = _Walker(engine, skipped)
    walker.visit(schema, schema, obj, _MISSING if old is None else old, (), True)
    return walker.out
