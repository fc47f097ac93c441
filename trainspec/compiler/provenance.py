"""Provenance: where every value came from, from resolution through lowering to diagnostics.

One vocabulary serves every pass and command:

* :class:`Origin` says *who* set a value (the job, its runtime, the project defaults, a
  built-in default, or trainspec computing it from others);
* :class:`SpecRef` says *where*: a field path inside one loaded spec, which turns into
  ``file:line:col`` on demand;
* :class:`Sourced` is a resolved value with both;
* :class:`FieldSources` is what lowering records for each object it emits: for every
  manifest field it sets, the spec field it came from. ``check`` places its findings with it,
  ``explain`` and ``diff`` read the same origins; nobody keeps a reverse table by hand.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from trainspec.dsl.record import TupleRecord

if TYPE_CHECKING:
    from trainspec.dsl.diagnostics import Related
    from trainspec.dsl.load.loaded import LoadedSpec

T = TypeVar("T")


class Origin(str, enum.Enum):
    """Who set a resolved value."""

    JOB = "job"
    RUNTIME = "runtime"
    PROJECT = "project defaults"
    DEFAULT = "built-in default"
    COMPUTED = "computed"
    #: Read from what the spec says about something else (the accelerator from a GPU node label).
    INFERRED = "inferred from the runtime's nodeSelector"


class Location(TupleRecord):
    """A printable place: ``file:line:col`` and the field path there."""

    file: str | None
    line: int | None
    column: int | None
    path: str = ""

    def __str__(self) -> str:
        where = ":".join(str(p) for p in (self.file, self.line, self.column) if p is not None)
        return f"{where} ({self.path})" if self.path else where


class SpecRef(TupleRecord):
    """A field of a loaded spec (``path`` ``()`` is the whole document)."""

    loaded: LoadedSpec
    path: tuple = ()

    def location(self) -> Location:
        from trainspec.dsl.diagnostics import format_path

        mark = self.loaded.mark(self.path)
        return Location(self.loaded.file, mark.line, mark.column, format_path(self.path))

    def related(self, message: str) -> Related:
        """A diagnostic note pointing here."""
        from trainspec.dsl.diagnostics import Related

        where = self.location()
        return Related(message=message, file=where.file, line=where.line, column=where.column)

    def written(self) -> bool:
        """Whether the user wrote this field (not a default)."""
        return self.loaded.has(self.path) if self.path else True


class Sourced(Generic[T]):
    """A resolved value, who set it and where.

    ``path`` is the field path in the spec that set it (the job's, or its runtime's);
    ``spec`` is that spec (None for built-in defaults and computed values). Two values are equal
    when value, origin and path are (the spec object is where, not what).
    """

    # A plain slotted class, not a dataclass: it sits on validate's start-up path.
    __slots__ = ("value", "origin", "path", "spec")

    def __init__(self, value: T, origin: Origin, path: tuple = (), spec: LoadedSpec | None = None) -> None:
        self.value = value
        self.origin = origin
        self.path = path
        self.spec = spec

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sourced):
            return NotImplemented
        return (self.value, self.origin, self.path) == (other.value, other.origin, other.path)

    def __hash__(self) -> int:
        return hash((self.origin, self.path))

    def __repr__(self) -> str:
        return f"Sourced(value={self.value!r}, origin={self.origin!r}, path={self.path!r})"

    @property
    def ref(self) -> SpecRef | None:
        return SpecRef(self.spec, self.path) if self.spec is not None else None

    def location(self) -> Location | None:
        ref = self.ref
        return ref.location() if ref is not None else None

    def describe(self, what: str) -> str:
        return f"{what}={self.value} from the {self.origin.value}"


class FieldSources:
    """For one emitted object: manifest field path -> the spec field that decided it.

    ``default`` is where the object as a whole comes from (the job or runtime document, or for a
    built-in runtime the job that uses it). A lookup takes the longest recorded prefix, so
    recording ``spec.trainer.env`` covers every env entry below it.
    """

    __slots__ = ("default", "fields")

    def __init__(self, default: SpecRef | None = None, fields: dict[tuple, SpecRef] | None = None) -> None:
        self.default = default
        self.fields: dict[tuple, SpecRef] = dict(fields or {})

    def __repr__(self) -> str:
        return f"FieldSources(default={self.default!r}, fields={len(self.fields)})"

    def set(self, path: tuple, ref: SpecRef | Sourced[Any] | None) -> None:
        """Record that manifest field ``path`` came from ``ref`` (ignored when unknown)."""
        if isinstance(ref, Sourced):
            ref = ref.ref
        if ref is not None:
            self.fields[path] = ref

    def lookup(self, path: tuple) -> SpecRef | None:
        """The spec field behind manifest field ``path``: the longest recorded prefix, else the default.

        A recorded field the user did not write (a default) falls back to a shorter prefix, so a
        diagnostic never points at a line that does not exist.
        """
        for end in range(len(path), 0, -1):
            ref = self.fields.get(path[:end])
            if ref is not None and ref.written():
                return ref
        return self.default


__all__ = ["FieldSources", "Location", "Origin", "SpecRef", "Sourced"]
