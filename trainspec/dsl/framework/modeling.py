"""A small declarative validation layer for the spec models, standard library only.

A model declares typed fields with class annotations and :func:`field`::

    class SecretRef(Model):
        secret: ObjectName = field(description="Secret name.")
        key: str = field(min_length=1, max_length=253, description="Key inside the Secret.")

Instances are frozen and compare by field values. ``Model.model_validate(mapping)`` takes the
YAML names (camelCase aliases) or the Python names; ``Model(**kwargs)`` takes Python names.
Both collect *every* problem and raise one :class:`ValidationError` whose ``errors()`` are
dicts ``{type, loc, msg, input[, ctx]}`` (the contract of :mod:`trainspec.dsl.load.validation`).

Nothing is built at import: a class's field table and its validator functions are made on its
first validation (``typing.get_type_hints`` resolves the annotations then), which keeps the
start-up of the command line cheap.

Types a field may have: ``str``; ``int`` (strict: a whole number, not a bool, float or
string); ``bool`` and ``float`` (lax as before: ``"yes"``, ``1``, ``"2.5"``; strict when
annotated with :data:`STRICT`); ``Literal``; ``Enum`` (by value); ``Optional``; ``list[X]``;
``dict[K, V]`` (keys validated too); nested models; and value types, either a class or an
``Annotated`` marker with ``__validate__(raw) -> value`` (raising :class:`Invalid`) and
``__json_schema__() -> dict``. A model-wide rule goes in ``_check(self)``, which runs once
every field is valid and raises :class:`Invalid`; its error is located at the model.
"""

from __future__ import annotations

import enum
import sys
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from trainspec.dsl.errors import Invalid, ValidationError, error_dict, short_repr, suggest
from trainspec.dsl.framework.fieldchecks import validator_for, validator_of_model
from trainspec.dsl.framework.fields import MISSING, REJECTED, STRICT, Errors, FieldInfo, Loc, Validator, field, to_camel

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10 runs without it; type checkers take the 3.11 branch

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda cls: cls


__all__ = [
    "MISSING",
    "REJECTED",
    "STRICT",
    "FieldInfo",
    "Invalid",
    "Model",
    "ValidationError",
    "error_dict",
    "field",
    "short_repr",
    "to_camel",
]


class _ClassProperty:
    def __init__(self, fget: Callable[[Any], Any]) -> None:
        self.fget = fget

    def __get__(self, obj: Any, owner: type) -> Any:
        return self.fget(owner)


# -- models ------------------------------------------------------------------------------------


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field, FieldInfo))
class Model:
    """Base of the spec models: declarative, validated, frozen, equal by field values.

    To type checkers a subclass is a frozen, keyword-only dataclass whose fields are its
    annotations (``typing.dataclass_transform``), so an unknown keyword, a value of the wrong
    type or a missing required field is an error before anything runs. At run time the
    constructor validates (and converts: ``"64Gi"`` to a :class:`Quantity`), collecting every
    problem into one :class:`ValidationError`.
    """

    if not TYPE_CHECKING:  # type checkers see the synthesized keyword-only signature instead

        def __init__(self, **data: Any) -> None:
            errors: list[dict[str, Any]] = []
            if not self._fill(data, (), errors):
                raise ValidationError(type(self).__name__, errors)

    #: What ``help()`` and ``inspect.signature`` show: the fields as keyword-only parameters
    #: (built on first use, like the field table).
    __signature__ = _ClassProperty(lambda cls: cls._signature())

    @classmethod
    def _signature(cls) -> Any:
        import inspect

        hints = typing.get_type_hints(cls)  # without Annotated metadata: what a reader wants to see
        return inspect.Signature([_parameter(f, hints.get(f.name, Any)) for f in cls._fields()], return_annotation=None)

    @classmethod
    def model_validate(cls: type[_M], data: Any) -> _M:
        """An instance from a mapping (YAML or Python names), or ``data`` if it already is one."""
        errors: list[dict[str, Any]] = []
        value = validator_of_model(cls)(data, (), errors)
        if errors:
            raise ValidationError(cls.__name__, errors)
        return typing.cast(_M, value)

    @classmethod
    def _table(cls) -> _Table:
        table = cls.__dict__.get("_field_table")
        if table is None:
            table = _Table(cls)
            setattr(cls, "_field_table", table)  # noqa: B010 (undeclared: set on this class only, a subclass builds its own)
        return table

    @classmethod
    def _fields(cls) -> tuple[FieldInfo, ...]:
        return cls._table().fields

    #: Field name -> :class:`FieldInfo` (with ``alias`` and ``annotation``), in declaration order.
    model_fields = _ClassProperty(lambda cls: cls._table().by_name)

    @classmethod
    def _from_mapping(cls, data: Mapping[Any, Any], loc: Loc, errors: Errors) -> Any:
        obj = cls.__new__(cls)
        return obj if obj._fill(data, loc, errors) else REJECTED

    def _fill(self, data: Mapping[Any, Any], loc: Loc, errors: Errors) -> bool:
        start = len(errors)
        table = self._table()
        values: dict[str, Any] = {}
        given: set[str] = set()
        for name, alias, validate, default, factory in table.steps:
            if alias in data:
                key = alias
            elif name in data:
                key = name
            elif default is not MISSING:
                values[name] = default
                continue
            elif factory is not None:
                values[name] = factory()
                continue
            else:
                errors.append(error_dict("required", (*loc, alias), "Field required", data))
                continue
            values[name] = validate(data[key], (*loc, key), errors)
            given.add(name)
        if len(given) != len(data):  # unknown keys, or a field given by both of its names (the alias counts)
            errors.extend(
                table.unknown(key, (*loc, key), value) for key, value in data.items() if not table.takes(key, data)
            )
        if len(errors) > start:
            return False
        values["_fields_set"] = given
        self.__dict__.update(values)
        try:
            self._check()
        except Invalid as exc:
            errors.append(exc.error(loc, data))
            return False
        return True

    def _check(self) -> None:
        """Rules over several fields; runs once every field is valid and raises :class:`Invalid`."""

    @property
    def model_fields_set(self) -> set[str]:
        """Names of the fields the input gave (the others have their defaults)."""
        return typing.cast("set[str]", self.__dict__["_fields_set"])

    def model_copy(self: _M, *, update: Mapping[str, Any] | None = None) -> _M:
        """A shallow copy with ``update`` (Python names) applied as given, without validation."""
        new = object.__new__(type(self))
        state = dict(self.__dict__)
        if update:
            unknown = set(update) - {f.name for f in self._fields()}
            if unknown:
                raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
            state.update(update)
            state["_fields_set"] = state["_fields_set"] | set(update)
        new.__dict__.update(state)
        return new

    def model_dump(
        self,
        *,
        mode: str = "python",
        by_alias: bool = False,
        exclude_none: bool = False,
        exclude_defaults: bool = False,
    ) -> dict[str, Any]:
        """The fields as a dict, nested models too; ``mode="json"`` makes it plain JSON data (enums
        by value, value types by their ``__json__()``)."""
        options = {
            "mode": mode,
            "by_alias": by_alias,
            "exclude_none": exclude_none,
            "exclude_defaults": exclude_defaults,
        }
        out: dict[str, Any] = {}
        for f in self._fields():
            value = self.__dict__[f.name]
            if (exclude_none and value is None) or (exclude_defaults and not f.required and value == f.get_default()):
                continue
            out[f.alias if by_alias else f.name] = _dump(value, options)
        return out

    def _values(self) -> tuple[Any, ...]:
        return tuple(self.__dict__[f.name] for f in self._fields())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Model):
            return NotImplemented
        return type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={self.__dict__[f.name]!r}" for f in self._fields())
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise ValidationError(type(self).__name__, [error_dict("frozen_instance", (name,), _FROZEN, value)])

    def __delattr__(self, name: str) -> None:
        raise ValidationError(type(self).__name__, [error_dict("frozen_instance", (name,), _FROZEN, None)])


_FROZEN = "Instance is frozen"
_M = TypeVar("_M", bound=Model)  # after Model: bound="Model" is a ForwardRef, whose compile() costs 0.7 ms


def _dump(value: Any, options: dict[str, Any]) -> Any:
    if isinstance(value, Model):
        return value.model_dump(**options)
    if isinstance(value, (list, tuple)):
        return [_dump(item, options) for item in value]
    if isinstance(value, dict):
        return {_dump(k, options): _dump(v, options) for k, v in value.items()}
    if options["mode"] == "json":
        if isinstance(value, enum.Enum):
            return value.value
        if hasattr(value, "__json__"):
            return value.__json__()
    return value


class _Table:
    """A model class's fields, resolved and with their validators: built on its first validation."""

    def __init__(self, cls: type) -> None:
        from trainspec.dsl.framework.hints import type_hints

        try:
            hints = type_hints(cls)
        except NameError as exc:
            raise TypeError(f"cannot resolve the annotations of {cls.__name__}: {exc}") from None
        fields = []
        for name, annotation in hints.items():
            if name.startswith("_") or typing.get_origin(annotation) is typing.ClassVar:
                continue
            declared = getattr(cls, name, MISSING)
            if hasattr(type(declared), "__get__"):
                raise TypeError(f"field {cls.__name__}.{name} clashes with a method or property of that name")
            info = declared if isinstance(declared, FieldInfo) else FieldInfo(declared)
            info.name, info.annotation = name, annotation
            info.alias = info.alias or to_camel(name)
            info.validate = validator_for(annotation, info)
            fields.append(info)
        self.fields = tuple(fields)
        #: What _fill runs through, per field: (name, alias, validate, default, default_factory).
        self.steps = tuple(
            (f.name, f.alias, typing.cast(Validator, f.validate), f.default, f.default_factory) for f in fields
        )
        self.by_name: dict[str, FieldInfo] = {f.name: f for f in fields}
        self.by_key: dict[str, FieldInfo] = {**self.by_name, **{f.alias: f for f in fields}}

    def unknown(self, key: Any, loc: Loc, value: Any) -> dict[str, Any]:
        """The error of a key this model does not have, with the closest field name (YAML names for a
        camelCase key, Python names otherwise) as its suggestion."""
        twice = self.by_key.get(key)
        if twice is not None:  # the Python name of a field also given by its YAML name
            return error_dict("unknown_field", loc, f"{key!r} repeats {twice.alias!r}: give the field once", value)
        names = [f.alias if _is_camel(key) else f.name for f in self.fields]
        close = suggest(key, names)
        hint = f"; did you mean {close!r}?" if close else ""
        return error_dict(
            "unknown_field",
            loc,
            f"unknown field {short_repr(key)}{hint}",
            value,
            {"suggestion": close} if close else None,
        )

    def takes(self, key: Any, data: Mapping[Any, Any]) -> bool:
        """Whether ``key`` of ``data`` is a field's name (and not a second spelling of a field given by alias)."""
        f = self.by_key.get(key)
        return f is not None and (key == f.alias or f.alias not in data)


def _is_camel(key: Any) -> bool:
    return isinstance(key, str) and "_" not in key and key != key.lower()


class _Factory:
    """A ``default_factory`` as ``help()`` shows it: what it makes (``{}``, ``[]``...)."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory

    def __repr__(self) -> str:
        return repr(self.factory())


def _parameter(info: FieldInfo, annotation: Any) -> Any:
    import inspect

    default = (
        inspect.Parameter.empty
        if info.required
        else _Factory(info.default_factory)
        if info.default_factory is not None
        else info.default
    )
    return inspect.Parameter(info.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
