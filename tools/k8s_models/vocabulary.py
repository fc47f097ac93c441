"""The vocabulary of the generator's configuration: modules, classes and fields.

CRDs carry no Go type names, so the configuration names every generated class, says where its
schema lives (a *path* into a source) and lists its fields in the order they are emitted (the
serialiser follows field order, and the golden files depend on it). Everything else (wire names,
scalar types, int-or-string, enums, list/map wrappers, required fields) comes from the schema.

A path is ``source:dotted.wire.path``; ``[]`` after a segment steps into list items, ``{}``
into map values, an empty path is the source's root. Sources are CRD files (their storage
version) or ``core`` / ``manual``, the committed schema descriptions in this package.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Cls", "Field", "Module", "FieldSpec"]


@dataclass(frozen=True)
class Field:
    """One field, when its name alone is not enough."""

    name: str
    #: The generated class the value (or list item / map value) is an instance of.
    ref: str | None = None
    #: An explicit annotation, for the few places where the schema is looser than the model.
    type: str | None = None
    #: Name of a module-level ``Literal`` alias built from the schema's enum.
    alias: str | None = None
    #: Overrides the schema's ``required`` (the model may be stricter than the CRD).
    required: bool | None = None
    #: A ``#:`` comment emitted above the field.
    comment: str | None = None


FieldSpec = str | Field


@dataclass(frozen=True)
class Cls:
    """One generated class."""

    name: str
    doc: str
    fields: tuple[FieldSpec, ...]
    #: Where the schema is; inferred from the referring class when omitted.
    path: str | None = None
    #: ``(api version expression, kind)`` for a top-level resource.
    resource: tuple[str, str] | None = None


@dataclass(frozen=True)
class Module:
    """One generated module of ``trainspec.k8s``."""

    name: str
    doc: str
    classes: tuple[Cls, ...]
    #: Code placed after the imports (type aliases that are not enums, with their comments).
    preamble: str = ""
    #: ``(module, name)`` pairs imported and re-exported (constants of ``wellknown``).
    reexports: tuple[tuple[str, str], ...] = ()
    #: Module-level names (aliases) that are public too.
    exports: tuple[str, ...] = ()
    #: Whether ``trainspec.k8s`` re-exports the module's names lazily.
    lazy: bool = True
