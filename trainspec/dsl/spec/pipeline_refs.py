"""A pipeline's run-time references and conditions, read once for every command that runs one.

``$(params.x)``, ``$(outputs.x)``, ``$(steps.s.outputs.x)`` and ``$(steps.s.status)`` are parsed
into :class:`Ref`; a step's ``when`` into :class:`Condition` (``LEFT OP RIGHT`` with ``==``,
``!=``, ``<``, ``<=``, ``>``, ``>=``, each side a reference or a literal). The Kubeflow Pipelines
compiler turns them into pipeline inputs, task outputs and ``dsl.If``; the local runner
substitutes and evaluates them. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from trainspec.dsl.record import TupleRecord
from trainspec.dsl.spec.pipeline_spec import REFERENCE

#: The comparison operators of ``when``, longest first (so ``>=`` is not read as ``>``).
OPERATORS: Final = ("==", "!=", "<=", ">=", "<", ">")
_CONDITION: Final = re.compile(r"^\s*(.+?)\s*(==|!=|<=|>=|<|>)\s*(.+?)\s*$")


class Ref(TupleRecord):
    """One reference: ``kind`` is ``param``, ``output`` (this step's), ``step-output`` or ``status``."""

    kind: str
    name: str  # the parameter or output name ("" for a status)
    step: str = ""  # the step read (step-output, status)


class Condition(TupleRecord):
    """``left op right``; each side a :class:`Ref` or a literal (text, number or boolean)."""

    left: Ref | str | int | float | bool
    op: str
    right: Ref | str | int | float | bool


def parse_ref(inner: str) -> Ref | None:
    """The reference written ``$(inner)``, or None for a form that is not one."""
    parts = inner.split(".")
    if len(parts) == 2 and parts[0] == "params":
        return Ref("param", parts[1])
    if len(parts) == 2 and parts[0] == "outputs":
        return Ref("output", parts[1])
    if len(parts) == 4 and parts[0] == "steps" and parts[2] == "outputs":
        return Ref("step-output", parts[3], parts[1])
    if len(parts) == 3 and parts[0] == "steps" and parts[2] == "status":
        return Ref("status", "", parts[1])
    return None


def refs_in(text: str) -> list[Ref | None]:
    """Every ``$(...)`` of ``text``, in order (None for one that is not a reference)."""
    return [parse_ref(match.group(1)) for match in REFERENCE.finditer(text)]


def substitute(text: str, value_of: Callable[[Ref], str]) -> str:
    """``text`` with every reference replaced by ``value_of(ref)`` (one that is not a reference
    is left as written)."""

    def replace(match: re.Match[str]) -> str:
        ref = parse_ref(match.group(1))
        return match.group(0) if ref is None else value_of(ref)

    return REFERENCE.sub(replace, text)


def parse_condition(text: str) -> Condition:
    """A ``when`` condition; ValueError (saying what is expected) for anything else."""
    match = _CONDITION.match(text)
    if match is None:
        raise ValueError(
            f"{text!r} is not a condition: write LEFT OP RIGHT, OP one of {', '.join(OPERATORS)}, "
            "e.g. $(steps.evaluate.outputs.score) >= 0.9"
        )
    return Condition(_side(match.group(1)), match.group(2), _side(match.group(3)))


def _side(text: str) -> Ref | str | int | float | bool:
    whole = REFERENCE.fullmatch(text)
    if whole is not None:
        ref = parse_ref(whole.group(1))
        if ref is None:
            raise ValueError(f"{text} is not a reference: $(params.x), $(steps.s.outputs.x) or $(steps.s.status)")
        return ref
    if "$(" in text:
        raise ValueError(f"{text!r}: a side of a condition is one reference or one literal")
    return literal(text)


def literal(text: str) -> str | int | float | bool:
    """A literal as written: a number, ``true``/``false``, else text (quotes removed)."""
    stripped = text.strip()
    if stripped in ("true", "false"):
        return stripped == "true"
    for kind in (int, float):
        try:
            return kind(stripped)
        except ValueError:
            continue
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "'\"":
        return stripped[1:-1]
    return stripped


def holds(condition: Condition, value_of: Callable[[Ref], str]) -> bool:
    """Whether ``condition`` holds, each reference read as text by ``value_of`` and compared as
    numbers when both sides are numbers (``0.93 >= 0.9``), else as text."""
    left, right = (literal(value_of(s)) if isinstance(s, Ref) else s for s in (condition.left, condition.right))
    if _number(left) and _number(right):
        return _compare(float(left), condition.op, float(right))
    if condition.op not in ("==", "!=") and (_number(left) or _number(right)):
        return False  # a number and a text are never ordered
    return _compare(str(left), condition.op, str(right))


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _compare(a: float | str, op: str, b: float | str) -> bool:
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if op == "<":
        return a < b  # type: ignore[operator]
    if op == "<=":
        return a <= b  # type: ignore[operator]
    if op == ">":
        return a > b  # type: ignore[operator]
    return a >= b  # type: ignore[operator]


__all__ = ["OPERATORS", "Condition", "Ref", "holds", "literal", "parse_condition", "parse_ref", "refs_in", "substitute"]
