"""Base classes of every model: construction, frozenness, equality, hashing and a compact repr.

Each model is declared with :func:`model` (a keyword-only dataclass, as type checkers see it)
and inherits ``__init__``, ``__setattr__``, ``__eq__``, ``__hash__`` and ``__repr__`` from
:class:`Model`. On Python 3.11 ``dataclass`` compiles every method it writes with a separate
``exec`` (``__init__``, and ``__setattr__`` and ``__delattr__`` for a frozen class) and rebuilds a
slotted class: about 0.4 ms a class, some 60 ms of a cold ``compile``. Here those
methods are shared functions: the dataclass machinery only records the fields (``fields()``,
``replace()`` and ``is_dataclass`` work as for any dataclass) and a class costs about 50 us.
A model keeps its fields in its ``__dict__`` (the fields left out read the class's ``None``), so
one dict update builds it; it is frozen all the same. The repr also skips ``None`` fields, which
keeps a TrainJob's repr readable.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import FrozenInstanceError, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10 runs without it; type checkers take the 3.11 branch

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda cls: cls


__all__ = ["Model", "Resource"]

_M = TypeVar("_M")
_C = TypeVar("_C", bound=type)
_NAMES: dict[type, tuple[str, ...]] = {}
_GETTERS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def fields_getter(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A function returning every field value of a ``cls`` instance, in field order, in one C call
    (``attrgetter``); the serialiser and :func:`field_values` share it."""
    getter = _GETTERS.get(cls)
    if getter is None:
        names = _field_names(cls)
        if len(names) >= 2:
            getter = attrgetter(*names)
        elif names:
            single = attrgetter(names[0])
            getter = lambda obj: (single(obj),)  # noqa: E731
        else:
            getter = lambda obj: ()  # noqa: E731
        _GETTERS[cls] = getter
    return getter


def field_values(obj: Any) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """A model's field names, in order, and their values (read in one C call)."""
    cls = type(obj)
    return _field_names(cls), fields_getter(cls)(obj)


def with_fields(obj: _M, changes: dict[str, Any]) -> _M:
    """``dataclasses.replace(obj, **changes)`` for a model: a copy with the fields in ``changes``.

    Models check nothing when built (no ``__post_init__``), so the copy is made from the fields'
    dict, without the constructor's keyword handling: it runs for every object a run id is put into.
    """
    cls = type(obj)
    known = cls.__dict__.get("__model_fields__")
    if known is None:  # not declared with model(): as dataclasses does it
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    if not changes.keys() <= known:
        raise TypeError(f"{cls.__name__} has no field {sorted(changes.keys() - known)[0]!r}")
    new = object.__new__(cls)
    state = new.__dict__
    state.update(obj.__dict__)
    state.update(changes)
    return new


def given_fields(obj: Any) -> Any:
    """The ``(name, value)`` pairs of the fields a model was given (those left out read ``None``);
    every field of another dataclass."""
    state = getattr(obj, "__dict__", None)
    if state is None:
        names, values = field_values(obj)
        return zip(names, values, strict=True)
    return state.items()


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def model(cls: _C) -> _C:
    """Declares a model class: its annotated fields, keyword-only, frozen (see the module docstring)."""
    made: Any = dataclasses.dataclass(init=False, eq=False, repr=False, kw_only=True)(cls)
    declared = fields(made)
    for f in declared:  # Model.__init__ stores what it is given: a default must be a class attribute
        if f.default_factory is not dataclasses.MISSING:
            raise TypeError(
                f"{made.__name__}: field {f.name!r} has a default_factory; a model field defaults to a value"
            )
    made.__model_fields__ = frozenset(f.name for f in declared)
    made.__model_required__ = frozenset(f.name for f in declared if f.default is dataclasses.MISSING)
    return made  # the class it was given, with its dataclass fields


class Model:
    """Base of all models: keyword construction, frozen fields, value equality and hashing over
    the dataclass fields, in order."""

    __slots__ = ()
    __model_fields__: ClassVar[frozenset[str]] = frozenset()
    __model_required__: ClassVar[frozenset[str]] = frozenset()

    if not TYPE_CHECKING:  # type checkers synthesize a typed __init__ from the annotations

        def __init__(self, **values: Any) -> None:
            cls = type(self)
            given = values.keys()
            if not (given <= cls.__model_fields__ and cls.__model_required__ <= given):
                raise TypeError(_bad_arguments(cls, given))
            self.__dict__.update(values)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> tuple[Any, ...]:
        return field_values(self)[1]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Model) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        # Like a frozen dataclass: raises TypeError if a field holds a list or dict.
        return hash((self.__class__, self._values()))

    def __repr__(self) -> str:
        parts = []
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={value!r}")
        return f"{type(self).__qualname__}({', '.join(parts)})"


class Resource(Model):
    """Base of top-level resources: subclasses set the ``api_version`` and ``kind`` constants.

    The serialiser emits them first, as ``apiVersion`` and ``kind``.
    """

    __slots__ = ()
    api_version: ClassVar[str]
    kind: ClassVar[str]


def _bad_arguments(cls: type[Model], given: Any) -> str:
    """What a dataclass's ``__init__`` says of the same call."""
    unknown = sorted(set(given) - cls.__model_fields__)
    if unknown:
        return f"{cls.__name__}.__init__() got an unexpected keyword argument {unknown[0]!r}"
    missing = sorted(cls.__model_required__ - set(given))
    shown = " and ".join(repr(name) for name in missing)
    plural = "s" if len(missing) > 1 else ""
    return f"{cls.__name__}.__init__() missing {len(missing)} required keyword-only argument{plural}: {shown}"
