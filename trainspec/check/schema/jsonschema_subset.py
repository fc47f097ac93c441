"""jsonschema's semantics, as far as the compiled validator (:mod:`.compiled`) needs them.

What makes its answers jsonschema's: the error record with the attributes :mod:`.structural`
reads (:class:`Problem`), the Draft 7 type tests as :mod:`.structural` extends them
(:data:`TYPES`), the set of Draft 7 keywords (every other key of a schema is ignored), and the
equality ``enum`` and ``uniqueItems`` use (``True`` is not ``1``). Standard library only, so
the compiled path never imports jsonschema.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from trainspec.dsl.errors import TrainspecError

#: A compiled check: ``(instance, path, errors out)``; a path is a ``(parent path, key)`` link or None.
Check = Callable[[Any, Any, list["Problem"]], None]


class Unsupported(TrainspecError):
    """The schema uses something outside the compiled subset: validate with jsonschema (caught
    by :class:`.structural.StructuralValidator`, never raised to its callers)."""


class Lazy:
    """A sub-schema still in the CRD's OpenAPI form, converted when first reached."""

    __slots__ = ("node",)

    def __init__(self, node: Mapping[str, Any]) -> None:
        self.node = node


class Problem:
    """One error, with the ``jsonschema.ValidationError`` attributes the diagnostics use."""

    __slots__ = ("validator", "validator_value", "instance", "schema", "message", "_path")

    def __init__(self, keyword: Any, value: Any, instance: Any, schema: Any, message: str, path: Any) -> None:
        self.validator, self.validator_value, self.instance = keyword, value, instance
        self.schema, self.message, self._path = schema, message, path

    @property
    def absolute_path(self) -> list[Any]:
        """The keys from the root to the instance."""
        parts: list[Any] = []
        link = self._path
        while link is not None:
            link, key = link
            parts.append(key)
        parts.reverse()
        return parts


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Number)


#: Draft 7's type checker as :mod:`.structural` extends it (``integer`` excludes ``1.0``).
TYPES: dict[str, Callable[[Any], bool]] = {
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "null": lambda v: v is None,
    "number": _is_number,
    "object": lambda v: isinstance(v, dict),
    "string": lambda v: isinstance(v, str),
}
is_number = _is_number

#: Draft 7's keywords: jsonschema runs these and ignores every other key of a schema.
DRAFT7 = frozenset(
    (
        *("$ref", "additionalItems", "additionalProperties", "allOf", "anyOf", "const", "contains", "dependencies"),
        *("enum", "exclusiveMaximum", "exclusiveMinimum", "format", "if", "items", "maxItems", "maxLength"),
        *("maxProperties", "maximum", "minItems", "minLength", "minProperties", "minimum", "multipleOf", "not"),
        *("oneOf", "pattern", "patternProperties", "properties", "propertyNames", "required", "type", "uniqueItems"),
    )
)


def _unbool(value: Any, true: object = object(), false: object = object()) -> Any:
    return true if value is True else false if value is False else value


def equal(one: Any, two: Any) -> bool:
    """jsonschema's equality (``True`` is not ``1``, recursively)."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(equal(i, j) for i, j in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(key in two and equal(value, two[key]) for key, value in one.items())
    return bool(_unbool(one) == _unbool(two))


def unique(items: list[Any]) -> bool:
    """jsonschema's ``uniqueItems`` test."""
    try:
        ordered = sorted(_unbool(i) for i in items)
        return not any(equal(i, j) for i, j in itertools.pairwise(ordered))
    except (NotImplementedError, TypeError):
        seen: list[Any] = []
        for item in items:
            item = _unbool(item)
            if any(equal(other, item) for other in seen):
                return False
            seen.append(item)
        return True


def number(value: Any) -> bool:
    """A keyword bound that jsonschema compares with numbers (not a bool, not a string)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def schema_like(value: Any) -> bool:
    """A value that can stand where a sub-schema goes."""
    return isinstance(value, (bool, Mapping, Lazy))


def path_from(parts: Sequence[Any], path: Any = None) -> Any:
    """The linked path of ``parts`` below ``path``."""
    for key in parts:
        path = (path, key)
    return path
