"""CEL validation rules (``x-kubernetes-validations``), evaluated offline as kube-apiserver does.

The walk follows the schema and the object together, as apiextensions-apiserver's CEL
validator does: at every schema node that carries rules (its own, and those of its ``allOf``
branches) and where the object has a non-null value, each rule runs with ``self`` bound to
that value, converted by :mod:`.typed_values`, schema defaults applied (the object itself is
never changed). The walk itself, and how it keeps that cheap, is :mod:`.walker`.

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
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from trainspec.check._paths import render_path
from trainspec.check.cel.celpy_engine import CelPyEngine
from trainspec.check.cel.engine_errors import CelCompileError, CelEvalError, CelUnsupportedError
from trainspec.check.cel.typed_values import cel_value, escape_property
from trainspec.check.cel.walker import MISSING, Walker, has_rules
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
    if not has_rules(schema):
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
    if defaults and old is not None:
        old = apply_defaults(schema, old)  # the new object is defaulted as the walk goes (.walker)
    walker = Walker(engine, skipped, defaults)
    walker.visit(schema, schema, obj, MISSING if old is None else old, (), True)
    return walker.out
