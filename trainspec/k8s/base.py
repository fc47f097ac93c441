"""Base classes of every model: shared equality, hashing and a compact repr.

Each model is declared with
``@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)`` and inherits
``__eq__``, ``__hash__`` and ``__repr__`` from :class:`Model`. On Python 3.11 ``dataclass``
compiles every generated method with a separate ``exec``; sharing these three methods halves
the cost of defining the ~90 model classes at import time. The repr also skips ``None``
fields, which keeps a TrainJob's repr readable.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, ClassVar

__all__ = ["Model", "Resource"]

_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


class Model:
    """Base of all models: value equality and hashing over the dataclass fields, in order."""

    __slots__ = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _field_names(type(self)))

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
