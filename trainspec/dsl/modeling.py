"""A small declarative validation layer for the spec models, standard library only.

A model declares typed fields with class annotations and :func:`field`::

    class SecretRef(Model):
        secret: ObjectName = field(description="Secret name.")
        key: str = field(min_length=1, max_length=253, description="Key inside the Secret.")

Instances are frozen and compare by field values. ``Model.model_validate(mapping)`` takes the
YAML names (camelCase aliases) or the Python names; ``Model(**kwargs)`` takes Python names.
Both collect *every* problem and raise one :class:`ValidationError` whose ``errors()`` are
dicts ``{type, loc, msg, input[, ctx]}`` (the contract of :mod:`trainspec.dsl.validation`).

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
import typing
from collections.abc import Mapping
from typing import Any, Callable

__all__ = ["MISSING", "REJECTED", "STRICT", "FieldInfo", "Invalid", "Model", "ValidationError", "error_dict", "field",
           "short_repr", "to_camel", "validator_of_model"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: No default: the field is required.
MISSING: Any = _Missing()
#: Returned by a validator that recorded an error.
REJECTED: Any = _Missing()
#: ``Annotated`` marker: bool and float fields take only their own type (int fields always do).
STRICT = "strict"

Loc = tuple
Validator = Callable[[Any, Loc, list], Any]


class Invalid(ValueError):
    """One failed check: ``type`` names the error (and so the diagnostic code), ``msg`` says it."""

    def __init__(self, type: str, msg: str, ctx: dict | None = None) -> None:
        super().__init__(msg)
        self.type, self.msg, self.ctx = type, msg, ctx

    def error(self, loc: Loc, value: Any) -> dict[str, Any]:
        return error_dict(self.type, loc, self.msg, value, self.ctx)

    def __reduce__(self) -> Any:
        return type(self), (self.type, self.msg, self.ctx)


def error_dict(kind: str, loc: Loc, msg: str, value: Any, ctx: dict | None = None) -> dict[str, Any]:
    """One entry of :meth:`ValidationError.errors`."""
    err = {"type": kind, "loc": loc, "msg": msg, "input": value}
    if ctx is not None:
        err["ctx"] = ctx
    return err


def short_repr(value: Any, limit: int = 100) -> str:
    """``repr(value)`` cut to ``limit`` characters; an int too long to print is described instead
    (printing one of more than 4300 digits raises, and takes quadratic time before that)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * limit:
        return f"<an integer of {value.bit_length()} bits>"
    shown = repr(value)
    return shown if len(shown) <= limit else f"{shown[:limit // 2 - 2]}...{shown[-(limit // 2 - 2):]}"


class ValidationError(ValueError):
    """Every problem found in one input: ``errors()`` lists them as ``{type, loc, msg, input[, ctx]}``."""

    def __init__(self, title: str, errors: list[dict[str, Any]]) -> None:
        self.title = title
        self._errors = errors
        lines = [f"{len(errors)} validation error{'s' if len(errors) != 1 else ''} for {title}"]
        for err in errors:
            if err["loc"]:
                lines.append(".".join(map(str, err["loc"])))
            shown = short_repr(err["input"])
            lines.append(f"  {err['msg']} [type={err['type']}, input_value={shown}]")
        super().__init__("\n".join(lines))

    def __reduce__(self) -> Any:
        return type(self), (self.title, self._errors)

    def errors(self, *, include_url: bool = False) -> list[dict[str, Any]]:
        return [dict(err) for err in self._errors]

    def error_count(self) -> int:
        return len(self._errors)


# -- fields ------------------------------------------------------------------------------------


class FieldInfo:
    """One declared field; ``name``, ``alias``, ``annotation`` and ``validate`` are set on first use."""

    __slots__ = ("name", "alias", "annotation", "default", "default_factory", "description",
                 "ge", "le", "min_length", "max_length", "pattern", "validate")

    def __init__(self, default: Any = MISSING, *, default_factory: Callable[[], Any] | None = None,
                 alias: str | None = None, description: str | None = None, ge: float | None = None,
                 le: float | None = None, min_length: int | None = None, max_length: int | None = None,
                 pattern: str | None = None) -> None:
        if default is not MISSING and default_factory is not None:
            raise TypeError("give default or default_factory, not both")
        self.default, self.default_factory, self.alias, self.description = default, default_factory, alias, description
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


def field(default: Any = MISSING, **options: Any) -> Any:
    """Declare a field: ``default`` (shared by every instance) or ``default_factory`` (called for
    each), ``alias`` (default: the camelCase name), ``description``, and the constraints ``ge``,
    ``le`` (numbers), ``min_length``, ``max_length`` (strings, lists, dicts) and ``pattern``."""
    return FieldInfo(default, **options)


def to_camel(name: str) -> str:
    """``resources_per_node`` -> ``resourcesPerNode``."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


class _ClassProperty:
    def __init__(self, fget: Callable[[type], Any]) -> None:
        self.fget = fget

    def __get__(self, obj: Any, owner: type) -> Any:
        return self.fget(owner)


# -- models ------------------------------------------------------------------------------------


class Model:
    """Base of the spec models: declarative, validated, frozen, equal by field values."""

    def __init__(self, **data: Any) -> None:
        errors: list[dict[str, Any]] = []
        if not self._fill(data, (), errors):
            raise ValidationError(type(self).__name__, errors)

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        """An instance from a mapping (YAML or Python names), or ``data`` if it already is one."""
        errors: list[dict[str, Any]] = []
        value = validator_of_model(cls)(data, (), errors)
        if errors:
            raise ValidationError(cls.__name__, errors)
        return value

    @classmethod
    def _table(cls) -> _Table:
        table = cls.__dict__.get("_field_table")
        if table is None:
            table = _Table(cls)
            cls._field_table = table
        return table

    @classmethod
    def _fields(cls) -> tuple[FieldInfo, ...]:
        return cls._table().fields

    #: Field name -> :class:`FieldInfo` (with ``alias`` and ``annotation``), in declaration order.
    model_fields = _ClassProperty(lambda cls: cls._table().by_name)

    @classmethod
    def _from_mapping(cls, data: Mapping, loc: Loc, errors: list) -> Any:
        obj = cls.__new__(cls)
        return obj if obj._fill(data, loc, errors) else REJECTED

    def _fill(self, data: Mapping, loc: Loc, errors: list) -> bool:
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
                errors.append(error_dict("missing", (*loc, alias), "Field required", data))
                continue
            values[name] = validate(data[key], (*loc, key), errors)
            given.add(name)
        if len(given) != len(data):  # unknown keys, or a field given by both of its names (the alias counts)
            errors.extend(error_dict("extra_forbidden", (*loc, key), "Extra inputs are not permitted", value)
                          for key, value in data.items() if not table.takes(key, data))
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
        return self.__dict__["_fields_set"]

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Any:
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

    def model_dump(self, *, mode: str = "python", by_alias: bool = False, exclude_none: bool = False,
                   exclude_defaults: bool = False) -> dict[str, Any]:
        """The fields as a dict, nested models too; ``mode="json"`` makes it plain JSON data (enums
        by value, value types by their ``__json__()``)."""
        options = dict(mode=mode, by_alias=by_alias, exclude_none=exclude_none, exclude_defaults=exclude_defaults)
        out: dict[str, Any] = {}
        for f in self._fields():
            value = self.__dict__[f.name]
            if (exclude_none and value is None) or (exclude_defaults and not f.required and value == f.get_default()):
                continue
            out[f.alias if by_alias else f.name] = _dump(value, options)
        return out

    def _values(self) -> tuple:
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
        from trainspec.dsl.fieldchecks import validator_for  # it builds on this module

        try:
            hints = typing.get_type_hints(cls, include_extras=True)
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
        self.steps = tuple((f.name, f.alias, f.validate, f.default, f.default_factory) for f in fields)
        self.by_name = {f.name: f for f in fields}
        self.by_key = {**self.by_name, **{f.alias: f for f in fields}}

    def takes(self, key: Any, data: Mapping) -> bool:
        """Whether ``key`` of ``data`` is a field's name (and not a second spelling of a field given by alias)."""
        f = self.by_key.get(key)
        return f is not None and (key == f.alias or f.alias not in data)


def validator_of_model(cls: type[Model]) -> Validator:
    """Takes an instance of ``cls`` as it is and validates a mapping into one."""
    message = f"Input should be a valid dictionary or instance of {cls.__name__}"

    def check(value: Any, loc: Loc, errors: list) -> Any:
        if type(value) is dict:
            return cls._from_mapping(value, loc, errors)
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            return cls._from_mapping(value, loc, errors)
        errors.append(error_dict("model_type", loc, message, value, {"class_name": cls.__name__}))
        return REJECTED

    return check
