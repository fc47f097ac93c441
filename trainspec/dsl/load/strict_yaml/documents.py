"""What the strict YAML loader hands on: documents as plain data, and where each part of them is."""

from __future__ import annotations

from typing import Any

from trainspec.dsl.record import Record, TupleRecord


class Mark(TupleRecord):
    """A position in a source file; ``line`` and ``column`` are 1-based (columns count characters).

    A named tuple, not a dataclass: the loader makes one per key and value, and tuples are
    several times cheaper to create than frozen dataclass instances.
    """

    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


class SourceDoc(Record, frozen=False):
    """One document of a spec file, as plain Python data plus where each part of it is.

    Paths are tuples of mapping keys (``str``) and sequence indices (``int``); the root is ``()``.
    ``values[path]`` is where the value at ``path`` starts (``values[()]`` is the document start),
    ``keys[path]`` where the key of a mapping entry starts. ``plain[path]`` is the source text of
    each unquoted scalar that YAML 1.1 read as a bool, int, float or null, and of each unquoted
    string that a YAML 1.2 reader would read as a number (``1e3``, ``0o17``); tell the two apart
    by the type of the value in ``data``.
    """

    file: str
    index: int
    data: dict[str, Any]
    start: Mark
    values: dict[tuple, Mark]
    keys: dict[tuple, Mark]
    plain: dict[tuple, str]
    #: Whether any string value contains ``{{`` or ``{%`` (a template to render).
    templated: bool = False

    def mark(self, path: tuple | list) -> Mark:
        """The best position for ``path``: its value, else its key, else its nearest ancestor's."""
        path = tuple(path)
        values, keys = self.values, self.keys
        while path:
            found = values.get(path) or keys.get(path)
            if found is not None:
                return found
            path = path[:-1]
        return self.start
