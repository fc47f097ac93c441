"""The resolved annotations of a spec model class, as ``typing.get_type_hints`` gives them, cheaper.

:func:`type_hints` is ``typing.get_type_hints(cls, include_extras=True)`` for the classes of
:mod:`trainspec.dsl.framework.modeling`, which build their field tables from it on first validation:
the same names in the same order, each annotation string evaluated the way get_type_hints
evaluates it (the module's names before the class's). What it leaves out is the
``typing.ForwardRef`` get_type_hints makes of every annotation string: a ForwardRef calls
``compile()``, and the first ``compile()`` in a process builds CPython's AST classes, about
0.7 ms that every command's start-up paid for nothing (``eval`` of a string does not need them).
An annotation it cannot settle alone (a quoted name inside one, ``list["Job"]``) is left to
get_type_hints, so the result is always the same.
"""

from __future__ import annotations

import builtins
import keyword
import sys
import typing
from typing import Any

__all__ = ["type_hints"]


def type_hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls, include_extras=True)``; see the module docstring."""
    hints: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        annotations = base.__dict__.get("__annotations__")  # noqa: RUF063 - inspect is not imported here
        if not annotations:
            continue
        module = getattr(sys.modules.get(base.__module__), "__dict__", {})
        scope = dict(vars(base))
        for name, value in annotations.items():
            if isinstance(value, str):
                # The class's own annotation, evaluated as get_type_hints evaluates it.
                value = _evaluated(value, scope, module)
            hints[name] = type(None) if value is None else value
    if any(_unsettled(hint) for hint in hints.values()):
        return typing.get_type_hints(cls, include_extras=True)
    return hints


def _evaluated(text: str, scope: dict[str, Any], module: dict[str, Any]) -> Any:
    """``eval(text, scope, module)``. Most annotations are names joined by ``|`` (``Count``,
    ``ObjectName | None``): those are looked up as eval looks names up (the module's, the class's,
    then the builtins) and joined with ``|`` as eval joins them, without parsing the text: a
    validation's first model tables evaluate about a hundred annotations, and parsing each cost
    more than the rest of building its field."""
    names = text.split(" | ")
    # ASCII only: the parser would normalise other identifiers (NFKC) before looking them up.
    if not text.isascii() or not all(n.isidentifier() and (n == "None" or not keyword.iskeyword(n)) for n in names):
        return eval(text, scope, module)  # noqa: S307 (a class's own annotation, evaluated as typing.get_type_hints does)
    value = _named(names[0], scope, module)
    for name in names[1:]:
        value = value | _named(name, scope, module)
    return value


def _named(name: str, scope: dict[str, Any], module: dict[str, Any]) -> Any:
    if name == "None":
        return None
    for namespace in (module, scope, builtins.__dict__):
        if name in namespace:
            return namespace[name]
    raise NameError(f"name {name!r} is not defined", name=name)


def _unsettled(hint: Any) -> bool:
    """Whether an evaluated annotation still holds a forward reference (``list["Job"]``)."""
    if isinstance(hint, (str, typing.ForwardRef)):
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Literal:  # its arguments are values, strings among them
        return False
    args = typing.get_args(hint)
    if origin is typing.Annotated:  # what follows the type is metadata (markers), not types
        args = args[:1]
    return any(_unsettled(arg) for arg in args)
