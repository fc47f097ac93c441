"""Fields of the spec models: :func:`field`, the field specifier type checkers know
(``typing.dataclass_transform``), the :class:`FieldInfo` it records, and the names the
validators of :mod:`trainspec.dsl.framework.modeling` share (:data:`MISSING`, :data:`REJECTED`, :data:`STRICT`).

Standard library only, like the layer it belongs to; :mod:`trainspec.dsl.framework.modeling` re-exports it all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

__all__ = ["MISSING", "REJECTED", "STRICT", "Errors", "FieldInfo", "Loc", "Validator", "field", "to_camel"]

_T = TypeVar("_T")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: No default: the field is required.
MISSING: Any = _Missing()
#: Returned by a validator that recorded an error.
REJECTED: Any = _Missing()
#: ``Annotated`` marker: bool and float fields take only their own type (int fields always do).
STRICT = "strict"

Loc = tuple[Any, ...]
#: Errors collected by a validation: :func:`error_dict` entries.
Errors = list[dict[str, Any]]
Validator = Callable[[Any, Loc, Errors], Any]


class FieldInfo:
    """One declared field; ``name``, ``alias``, ``annotation`` and ``validate`` are set on first use."""

    __slots__ = (
        "name",
        "alias",
        "annotation",
        "default",
        "default_factory",
        "description",
        "ge",
        "le",
        "min_length",
        "max_length",
        "pattern",
        "validate",
    )

    def __init__(
        self,
        default: Any = MISSING,
        *,
        default_factory: Callable[[], Any] | None = None,
        alias: str | None = None,
        description: str | None = None,
        ge: float | None = None,
        le: float | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
        pattern: str | None = None,
    ) -> None:
        if default is not MISSING and default_factory is not None:
            raise TypeError("give default or default_factory, not both")
        self.default, self.default_factory, self.description = default, default_factory, description
        #: The YAML name ("" until the table is built: then the camelCase of ``name`` unless given).
        self.alias: str = alias or ""
        self.ge, self.le, self.min_length, self.max_length, self.pattern = ge, le, min_length, max_length, pattern
        self.name: str = ""
        self.annotation: Any = None
        self.validate: Validator | None = None

    @property
    def required(self) -> bool:
        return self.default is MISSING and self.default_factory is None

    def get_default(self) -> Any:
        return self.default_factory() if self.default_factory is not None else self.default

    def __repr__(self) -> str:
        return f"FieldInfo(name={self.name!r}, alias={self.alias!r}, required={self.required})"


@overload
def field(
    default: _T,
    *,
    yaml_name: str | None = None,
    description: str | None = None,
    ge: float | None = None,
    le: float | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
) -> _T: ...
@overload
def field(
    *,
    default_factory: Callable[[], _T],
    yaml_name: str | None = None,
    description: str | None = None,
    ge: float | None = None,
    le: float | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
) -> _T: ...
@overload
def field(
    *,
    yaml_name: str | None = None,
    description: str | None = None,
    ge: float | None = None,
    le: float | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
) -> Any: ...


def field(
    default: Any = MISSING,
    *,
    default_factory: Callable[[], Any] | None = None,
    yaml_name: str | None = None,
    description: str | None = None,
    ge: float | None = None,
    le: float | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
) -> Any:
    """Declare a field: ``default`` (shared by every instance) or ``default_factory`` (called for
    each), ``yaml_name`` (default: the camelCase name), ``description``, and the constraints ``ge``,
    ``le`` (numbers), ``min_length``, ``max_length`` (strings, lists, dicts) and ``pattern``.

    Type checkers know it as the field specifier of :class:`Model` (``typing.dataclass_transform``):
    a field given ``default`` or ``default_factory`` is optional in the constructor. (The YAML
    name is not called ``alias``: to a type checker that would rename the keyword argument.)
    """
    return FieldInfo(
        default,
        default_factory=default_factory,
        alias=yaml_name,
        description=description,
        ge=ge,
        le=le,
        min_length=min_length,
        max_length=max_length,
        pattern=pattern,
    )


def to_camel(name: str) -> str:
    """``resources_per_node`` -> ``resourcesPerNode``."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)
