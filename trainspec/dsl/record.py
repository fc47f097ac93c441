"""Records: small value classes declared like dataclasses, for the modules every command imports.

::

    class Related(Record):
        message: str
        file: str | None = None

    class CompileResult(Record, frozen=False):
        diagnostics: list[Diagnostic] = field(default_factory=list)

A record takes its fields from its annotations (in order, a parent's first) and gets what a
``@dataclass`` gets: an ``__init__`` taking the fields by position or name, ``__repr__``,
``__eq__`` over the compared fields (``eq=False``: identity), ``__hash__`` when frozen, and
``__match_args__``; frozen (the default) refuses assignment with :class:`FrozenInstanceError`.
:func:`replace` is ``dataclasses.replace`` for records (and for dataclasses, which it hands on).

Why not :mod:`dataclasses`: it writes each class's methods as source text and compiles them
when the class statement runs (about 0.4 ms a class), and importing it imports ``inspect``,
``ast``, ``dis`` and ``tokenize`` (about 5 ms). ``trainspec validate`` of one spec took about
16 ms more with the records of its import path as dataclasses. Here the methods are shared
functions, compiled once into this module's bytecode; a class costs a few microseconds.

:class:`TupleRecord` is ``typing.NamedTuple`` (which type checkers see) made without turning each
annotation into a ``typing.ForwardRef``: that calls ``compile()``, and CPython's first
``compile()`` in a process builds its AST classes (0.7 ms), which nothing else on the start-up
path needs.
"""

from __future__ import annotations

import collections
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, overload

from trainspec.dsl.errors import TrainspecError

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10 runs without it; type checkers take the 3.11 branch

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda cls: cls


__all__ = ["FrozenInstanceError", "Record", "TupleRecord", "field", "fields", "replace"]

_T = TypeVar("_T")
_R = TypeVar("_R")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError, TrainspecError):
    """Assigning to (or deleting) a field of a frozen record."""


class Field:
    """One declared field of a record (what :func:`field` returns, and :func:`fields` lists)."""

    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(
        self,
        default: Any = _MISSING,
        default_factory: Callable[[], Any] | None = None,
        compare: bool = True,
        repr: bool = True,
    ) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr

    def __repr__(self) -> str:
        return f"Field({self.name!r})"


@overload
def field(*, default: _T, compare: bool = True, repr: bool = True) -> _T: ...
@overload
def field(*, default_factory: Callable[[], _T], compare: bool = True, repr: bool = True) -> _T: ...
@overload
def field(*, compare: bool = True, repr: bool = True) -> Any: ...


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | None = None,
    compare: bool = True,
    repr: bool = True,
) -> Any:
    """A field with a default (``default``, or ``default_factory`` called for each instance) that
    may be left out of equality and hashing (``compare=False``) or of the repr (``repr=False``)."""
    return Field(default, default_factory, compare, repr)


def _is_class_var(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text.startswith(("ClassVar", "typing.ClassVar"))


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
class Record:
    """Base of the records; see the module docstring."""

    __slots__ = ()
    #: The fields in constructor order; set for every subclass.
    __record_fields__: ClassVar[tuple[Field, ...]] = ()
    __record_names__: ClassVar[frozenset[str]] = frozenset()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    __record_frozen__: ClassVar[bool] = True

    def __init_subclass__(cls, *, frozen: bool | None = None, eq: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if frozen is None:  # as its parent record (frozen unless said otherwise)
            frozen = cls.__record_frozen__
        cls.__record_frozen__ = frozen
        declared = {f.name: f for f in cls.__record_fields__}
        # The class's own annotations (inspect.get_annotations would import inspect, which is what
        # this module avoids); with postponed evaluation they are strings, and only names are needed.
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
            if _is_class_var(annotation):
                continue
            value = cls.__dict__.get(name, _MISSING)
            spec = value if isinstance(value, Field) else Field(value)
            spec.name = name
            if spec.default is _MISSING:
                if name in cls.__dict__:
                    delattr(cls, name)
            else:  # the class attribute is the default, as with a dataclass
                setattr(cls, name, spec.default)
            declared.pop(name, None)
            declared[name] = spec
        cls.__record_fields__ = tuple(declared.values())
        cls.__record_names__ = frozenset(declared)
        setattr(cls, "__match_args__", tuple(declared))  # noqa: B010 - a ClassVar to type checkers
        own = cls.__dict__
        if not frozen:
            setattr(cls, "__setattr__", object.__setattr__)  # noqa: B010
            setattr(cls, "__delattr__", object.__delattr__)  # noqa: B010
        # Hashing as a dataclass does: by the compared fields when frozen and equal by value,
        # unhashable when mutable and equal by value, by identity without eq; an explicit
        # __hash__ in the class body stays (a body __eq__ alone makes Python write __hash__ = None).
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
        if not eq:
            if "__eq__" not in own:
                setattr(cls, "__eq__", object.__eq__)  # noqa: B010
            if not explicit_hash:
                setattr(cls, "__hash__", object.__hash__)  # noqa: B010
        elif not explicit_hash:
            setattr(cls, "__hash__", Record.__hash__ if frozen else None)  # noqa: B010

    if not TYPE_CHECKING:  # type checkers synthesize a typed __init__ from the annotations

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            # The fields are put in one dict update: the common call (every field by position, or
            # a few by name) runs no Python loop over the fields, as it runs for every spec.
            cls = type(self)
            names = cls.__match_args__
            if len(args) > len(names):
                raise TypeError(f"{cls.__name__}() takes {len(names)} positional arguments but {len(args)} were given")
            values = dict(zip(names, args, strict=False))  # fewer args than fields: the rest by name or default
            if kwargs:
                if args and not values.keys().isdisjoint(kwargs):
                    twice = next(name for name in names if name in values and name in kwargs)
                    raise TypeError(f"{cls.__name__}() got multiple values for argument {twice!r}")
                values.update(kwargs)
            if len(values) != len(names) or (kwargs and not cls.__record_names__.issuperset(kwargs)):
                for spec in cls.__record_fields__:  # fields not given take their defaults
                    if spec.name in values:
                        continue
                    if spec.default_factory is not None:
                        values[spec.name] = spec.default_factory()
                    elif spec.default is not _MISSING:
                        values[spec.name] = spec.default
                    else:
                        raise TypeError(f"{cls.__name__}() missing required argument: {spec.name!r}")
                if kwargs and not cls.__record_names__.issuperset(kwargs):
                    other = next(name for name in kwargs if name not in cls.__record_names__)
                    raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {other!r}")
            self.__dict__.update(values)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.__record_fields__ if f.repr)
        return f"{type(self).__qualname__}({shown})"

    def _compared(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in self.__record_fields__ if f.compare)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())


def fields(record: Record | type[Record]) -> tuple[Field, ...]:
    """The fields of a record (or record class), in constructor order."""
    return record.__record_fields__


def replace(obj: _R, /, **changes: Any) -> _R:
    """A copy of ``obj`` with ``changes``, made through its constructor (``dataclasses.replace``).

    A dataclass instance is handed to :func:`dataclasses.replace` (imported only then).
    """
    if not isinstance(obj, Record):
        import dataclasses

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]  # a dataclass, as documented
    values = {f.name: getattr(obj, f.name) for f in obj.__record_fields__}
    values.update(changes)
    return type(obj)(**values)


# -- named tuples ----------------------------------------------------------------------------------

#: What ``typing.NamedTuple`` keeps for itself, and the class-body names it does not copy.
_TUPLE_PROHIBITED = frozenset(
    {
        "__new__",
        "__init__",
        "__slots__",
        "__getnewargs__",
        "_fields",
        "_field_defaults",
        "_make",
        "_replace",
        "_asdict",
        "_source",
    }
)
_TUPLE_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})


class _TupleRecordType(type):
    """Makes ``class X(TupleRecord): ...`` a :func:`collections.namedtuple` as ``typing.NamedTuple`` does:
    the annotated names are the fields (in order; a field with a value has that default), and
    the class body's other names (methods, docstring) are copied onto it. The annotations stay
    the strings they are (``from __future__ import annotations``) instead of being checked."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        if not bases:  # TupleRecord itself
            return super().__new__(mcls, name, bases, namespace)
        if bases != (TupleRecord,):
            raise TypeError("a TupleRecord class derives from TupleRecord alone")
        annotations = namespace.get("__annotations__", {})
        defaults = [namespace[n] for n in annotations if n in namespace]
        if any(n not in namespace for n in list(annotations)[len(annotations) - len(defaults) :]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        # The field names come from the class body, which mypy's check of namedtuple() calls cannot see.
        fields, module = list(annotations), namespace["__module__"]
        cls = collections.namedtuple(name, fields, defaults=defaults, module=module)  # type: ignore[misc]
        cls.__annotations__ = dict(annotations)
        for key, value in namespace.items():
            if key in _TUPLE_PROHIBITED:
                raise AttributeError(f"cannot overwrite NamedTuple attribute {key}")
            if key not in _TUPLE_SPECIAL and key not in annotations:
                setattr(cls, key, value)
        return cls


if TYPE_CHECKING:
    from typing import NamedTuple as TupleRecord
else:

    class TupleRecord(metaclass=_TupleRecordType):
        """Base of the named tuples: ``class Mark(TupleRecord): line: int``, as with ``typing.NamedTuple``."""
