"""Serialisation of the typed models: the ONE place where they become plain dicts.

Rules, applied recursively:

* A dataclass becomes a dict whose keys follow the class's FIELD order. The wire (JSON) name
  of a field is its snake_case name turned into camelCase (``resources_per_node`` ->
  ``resourcesPerNode``), unless the field carries ``metadata={"wire": "..."}``.
* A field whose value is ``None`` is omitted. Anything else is emitted, including an explicit
  empty list, map or no-field dataclass (``TorchMLPolicySource()`` -> ``{}``).
* A top-level resource (a class with string class constants ``api_version`` and ``kind``)
  starts with ``apiVersion`` and ``kind``.
* Maps are emitted with sorted keys, so output is deterministic whatever the insertion order.
* Lists and tuples become lists; ``str``/``int``/``float``/``bool`` pass through unchanged, so
  an integer quantity (``nvidia.com/gpu: 8``) stays an integer. Enum members emit their value.

Per-class field tables are built once and cached: serialisation runs for thousands of objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Any

from trainspec.dsl.errors import TrainspecError
from trainspec.k8s.base import fields_getter

__all__ = ["SerializationError", "to_dict", "wire_name"]

_SCALARS: frozenset[type] = frozenset({str, int, float, bool})

#: Per-class cache: (header items, wire names in field order, getter returning all field values).
_Table = tuple[tuple[tuple[str, str], ...], tuple[str, ...], Callable[[Any], tuple[Any, ...]]]
_TABLES: dict[type, _Table] = {}


class SerializationError(TypeError, TrainspecError):
    """A value that has no wire form (a set, an arbitrary object, a None inside a list...)."""

    def __init__(self, message: str, path: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        where = "".join(self.path) or "<root>"
        return f"{where}: {self.message}"

    def prefixed(self, segment: str) -> SerializationError:
        """The same error one level further out."""
        return SerializationError(self.message, (segment, *self.path))


def wire_name(name: str) -> str:
    """snake_case attribute -> camelCase wire name (``num_proc_per_node`` -> ``numProcPerNode``)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _build_table(cls: type) -> _Table:
    if not is_dataclass(cls):
        raise SerializationError(f"{cls.__name__} is not a model dataclass")
    attrs = fields(cls)
    names = tuple(f.name for f in attrs)
    header: tuple[tuple[str, str], ...] = ()
    api_version = getattr(cls, "api_version", None)
    kind = getattr(cls, "kind", None)
    # Only class constants count: an OwnerReference or RuntimeRef has *fields* with these names.
    if isinstance(api_version, str) and isinstance(kind, str) and "api_version" not in names and "kind" not in names:
        header = (("apiVersion", api_version), ("kind", kind))
    wires = tuple(f.metadata.get("wire") or wire_name(f.name) for f in attrs)
    table = (header, wires, fields_getter(cls))  # one C call returns every field value as a tuple
    _TABLES[cls] = table
    return table


def _object(obj: Any) -> dict[str, Any]:
    cls = type(obj)
    table = _TABLES.get(cls)
    if table is None:
        table = _build_table(cls)
    header, wires, getter = table
    out: dict[str, Any] = dict(header) if header else {}
    # Every field in one C call, then the Nones skipped: measured faster than visiting only the
    # fields a model was given (k8s.base keeps those in its dict) in field order.
    for wire, value in zip(wires, getter(obj)):  # noqa: B905  (same length by construction)
        if value is None:
            continue
        if type(value) in _SCALARS:
            out[wire] = value
            continue
        try:
            out[wire] = _value(value)
        except SerializationError as err:
            raise err.prefixed("." + wire) from None
    return out


def _value(value: Any) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind in _TABLES:
        return _object(value)
    if kind is list or kind is tuple:
        out = []
        for index, item in enumerate(value):
            try:
                out.append(item if type(item) in _SCALARS else _value(item))
            except SerializationError as err:
                raise err.prefixed(f"[{index}]") from None
        return out
    if kind is dict:
        try:
            keys = sorted(value)
        except TypeError:
            raise SerializationError("map keys must all be strings") from None
        result = {}
        for key in keys:
            if type(key) is not str:
                raise SerializationError(f"map key {key!r} is not a string")
            item = value[key]
            if type(item) in _SCALARS:
                result[key] = item
                continue
            try:
                result[key] = _value(item)
            except SerializationError as err:
                raise err.prefixed(f"[{key!r}]") from None
        return result
    if is_dataclass(kind):
        return _object(value)
    if isinstance(value, Enum):
        return _value(value.value)
    raise SerializationError(f"cannot serialise a value of type {kind.__name__}: {value!r}")


def to_dict(obj: Any) -> dict[str, Any]:
    """Turn a model instance (top-level resource or any nested piece) into a plain dict.

    Raises :class:`SerializationError` (a ``TypeError``) naming the wire path of a value that
    has no wire form.
    """
    if isinstance(obj, type) or not (type(obj) in _TABLES or is_dataclass(obj)):
        raise SerializationError(f"to_dict() needs a model instance, got {type(obj).__name__}")
    return _object(obj)
