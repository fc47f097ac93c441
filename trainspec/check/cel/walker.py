"""The walk of :func:`.validations.check_cel`: the schema and the object together, every rule run
where the object has a value, as apiextensions-apiserver's CEL validator does.

What it costs is converting values for the engine (:func:`.typed_values.cel_value`) and the
schema defaults, so both are done only where a rule needs them:

* a subtree is walked only if it holds a rule that can run: on a create, a transition rule
  (``oldSelf``) without ``optionalOldSelf`` is skipped by the server, so subtrees holding only
  those are not walked at all (unless the caller asks which rules were skipped);
* defaults are applied level by level as the walk goes down (:func:`.defaulting.fill_level`), and
  in full only to the values a rule sees;
* a rule sees the fields of ``self`` it names: when every use of ``self`` in a node's rules (and
  their ``messageExpression``) is a field selection (``self.name``, ``self.?name``), only those
  fields are converted (a rule cannot observe the others); any other use (``self == oldSelf``,
  ``size(self)``, ``self.all(...)``) converts the whole value, as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from trainspec.check._paths import render_path
from trainspec.check.cel.engine_errors import CelCompileError, CelEvalError, CelUnsupportedError
from trainspec.check.cel.typed_values import cel_fields, cel_value, type_matches
from trainspec.check.schema.defaulting import apply_defaults, fill_level
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity

OLD_SELF = re.compile(r"\boldSelf\b")
#: The server's cap on an evaluated messageExpression (celconfig.MaxEvaluatedMessageExpressionSizeBytes).
_MAX_MESSAGE = 5 * 1024
_SELF = re.compile(r"\bself\b")
# `self.name` or `self.?name`, not a macro or method call (`self.all(...)`).
_SELF_FIELD = re.compile(r"\bself\s*\.\s*\??\s*([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\()")

MISSING = object()


def has_rules(schema: Any, live: bool = False) -> bool:
    """Does ``schema`` carry a rule anywhere below (memoised on the schema's identity)?

    ``live``: only rules that run without an old object (a transition rule runs on a create only
    with ``optionalOldSelf``), so that a create skips the subtrees holding nothing else.
    """
    if not isinstance(schema, Mapping):
        return False
    found = _HAS_RULES.get(id(schema))
    if found is None or found[0] is not schema:
        if len(_HAS_RULES) > 500_000:  # bound the memo in long-lived processes (tests, servers)
            _HAS_RULES.clear()
        found = _scan(schema)
    return found[2] if live else found[1]


def _scan(schema: Mapping[str, Any]) -> tuple[Any, bool, bool]:
    """(schema, any rule below, any rule below that runs on a create), memoised; both flags in one
    pass over the schema (a CRD has thousands of nodes: this runs once per node a process)."""
    own = schema.get("x-kubernetes-validations") or ()
    any_rule = bool(own)
    live = any_rule and any(_runs_on_create(r) for r in own)
    properties = schema.get("properties") or {}
    below = [*properties.values(), schema.get("items"), schema.get("additionalProperties")]
    below += schema.get("allOf") or ()
    for sub in below:
        if isinstance(sub, Mapping) and not (any_rule and live):
            found = _HAS_RULES.get(id(sub))
            if found is None or found[0] is not sub:
                found = _scan(sub)
            any_rule, live = any_rule or found[1], live or found[2]
    result = (schema, any_rule, live)
    _HAS_RULES[id(schema)] = result
    return result


def _runs_on_create(rule: Any) -> bool:
    if not isinstance(rule, Mapping):
        return True  # not a rule the walk can skip unseen: let it run (and fail) as before
    return not OLD_SELF.search(str(rule.get("rule", ""))) or rule.get("optionalOldSelf") is True


_HAS_RULES: dict[int, tuple[Any, bool, bool]] = {}


def _fields_named(text: str) -> frozenset[str] | None:
    """The fields of ``self`` that CEL ``text`` selects; None when it uses ``self`` otherwise."""
    uses = len(_SELF.findall(text))
    names = _SELF_FIELD.findall(text)
    return frozenset(names) if len(names) == uses else None


class _Context:
    """The activations of one schema node: ``self`` (and ``oldSelf``) converted once for all
    the node's rules, so an engine may also convert them once."""

    def __init__(self, walker: Walker, schema: Mapping[str, Any], value: Any, old: Any, root: bool) -> None:
        self.walker, self.schema, self.value, self.old, self.root = walker, schema, value, old, root
        self.has_old = old is not MISSING and old is not None
        self._activation: dict[str, Any] | None = None
        self._with_old: dict[str, Any] | None = None

    def fields(self, rules: Any) -> frozenset[str] | None:
        """The fields of ``self`` the rules that run here select (None: all of ``self``)."""
        named: set[str] = set()
        for rule in rules:
            if not isinstance(rule, Mapping):
                return None
            text = str(rule.get("rule", ""))
            if OLD_SELF.search(text) and (self.has_old or rule.get("optionalOldSelf") is not True):
                if self.has_old:
                    return None  # compared with oldSelf: the whole value
                continue  # skipped on a create
            for source in (text, rule.get("messageExpression")):
                found = _fields_named(str(source)) if source else frozenset()
                if found is None:
                    return None
                named |= found
        return frozenset(named)

    def activation(self, rules: Any) -> dict[str, Any]:
        if self._activation is None:
            walker, value = self.walker, self.value
            fields = self.fields(rules) if isinstance(value, dict) else None
            if fields is None:
                full = apply_defaults(self.schema, value) if walker.defaults else value
                converted = cel_value(self.schema, full, root=self.root, memo=walker.memo)
            else:
                fill = apply_defaults if walker.defaults else None
                converted = cel_fields(self.schema, value, fields, root=self.root, memo=walker.memo, fill=fill)
            self._activation = {"self": converted}
        return self._activation

    def with_old(self, rules: Any) -> dict[str, Any]:
        if self._with_old is None:
            old = cel_value(self.schema, self.old, root=self.root, memo=self.walker.memo)
            self._with_old = {**self.activation(rules), "oldSelf": old}
        return self._with_old


class Walker:
    """One walk: ``visit`` the root, then read ``out``. ``defaults``: fill in the schema defaults
    of the object as the walk goes (the old object comes defaulted already)."""

    def __init__(self, engine: Any, skipped: list[tuple[str, str]] | None, defaults: bool = True) -> None:
        self.engine, self.skipped, self.defaults = engine, skipped, defaults
        self.out: list[Diagnostic] = []
        # Converted values, shared by the nodes' activations (cel_value's memo); lives for one walk.
        self.memo: dict[Any, Any] = {}

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
        # Without an old object (a create) and nobody asking which rules were skipped, a subtree of
        # transition rules only has nothing to run: not walked.
        live = self.skipped is None and (old is MISSING or old is None)
        if value is None or not type_matches(node, value) or not has_rules(rules, live):
            return
        if self.defaults:
            value = fill_level(node, value)
        here = rules.get("x-kubernetes-validations") or ()
        if here:
            context = _Context(self, node, value, old, root)
            for rule in here:
                self.run(rule, context, path, here)
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
            prior = old.get(key, MISSING) if correlate else MISSING
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
            return [MISSING] * len(value)
        by_key = {tuple(repr(o.get(k)) for k in keys): o for o in old if isinstance(o, dict)}
        return [
            by_key.get(tuple(repr(v.get(k)) for k in keys), MISSING) if isinstance(v, dict) else MISSING for v in value
        ]

    def run(self, rule: Mapping[str, Any], context: _Context, path: tuple[str | int, ...], rules: Any) -> None:
        """Run ``rule`` (one of the node's ``rules``) in ``context``."""
        text = str(rule.get("rule", ""))
        if not text.strip():
            return  # an empty rule has no program on the server either
        where = render_path(path)
        with_old = False
        if OLD_SELF.search(text):
            optional = rule.get("optionalOldSelf") is True
            if not context.has_old:
                if not optional:
                    if self.skipped is not None:
                        self.skipped.append((where, text))
                    return  # a transition rule on a create: the API server skips it as well
                text = f"cel.bind(oldSelf, optional.none(), (\n{text}\n))"
            else:
                with_old = True
                if optional:
                    text = f"cel.bind(oldSelf, optional.of(oldSelf), (\n{text}\n))"
        # Converted only for a rule that runs (not for the skipped transition rules).
        activation = context.with_old(rules) if with_old else context.activation(rules)
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
        """A TS501: the server rejects the object with ``message``."""
        self.out.append(
            Diagnostic(code=codes.CRD_RULE, message=message, path=where, hint=f"CEL rule: {rule.get('rule')}")
        )

    def warn(self, where: str, rule: Mapping[str, Any], problem: str) -> None:
        """A TS502: the offline engine could not judge the rule (said, never passed)."""
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
