"""Values files for ``{{ values.x }}`` templates (``--values FILE``, layered).

Each file holds one YAML mapping, read as strictly as a spec (duplicate keys, tabs, oversized
files and FIFOs are errors). Later files win key by key at the top level. The result remembers
where each value was written (:attr:`Values.origins`), so a template that uses a null or a
mapping where text is needed (TS311) can point at the values file line as well.

A value YAML reads as other text than written (``tag: 1.10`` is the number 1.1, ``on`` the
boolean True) is an error where a template uses it (TS109), pointing at the values file entry.

A null is not an error in the values file itself: environments often leave keys empty that
only some specs use. It is an error where a template writes it into a spec.
"""

from __future__ import annotations

from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.load.strict_yaml import Mark, SourceDoc


class Values(dict):
    """Merged values; ``origins[path]`` is ``(file, Mark)`` of the value at ``path`` (a tuple of keys)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Top-level key -> {path: (file, mark)} of the file that set it.
        self._origins: dict[Any, dict[tuple, tuple[str, Mark]]] = {}
        #: Path -> text of the unquoted scalars YAML read as a bool, number or null (``1.10``, ``on``).
        self.plain: dict[tuple, str] = {}

    @property
    def origins(self) -> dict[tuple, tuple[str, Mark]]:
        """Where each value (by path) was written; read on errors only, so built on demand."""
        return {path: origin for entries in self._origins.values() for path, origin in entries.items()}


def load_values(files: list[str] | tuple[str, ...]) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """Merge values files, later ones winning key by key at the top level.

    Returns None when no file is given (templates then have no values: each use is TS307).
    """
    if not files:
        return None, []
    from trainspec.dsl.load.loaded import display_name
    from trainspec.dsl.load.strict_yaml import load_file

    merged = Values()
    problems: list[Diagnostic] = []
    for file in files:
        display = display_name(file)
        docs, found = load_file(file, display)
        problems.extend(found)
        if len(docs) > 1:
            extra = docs[1].start
            problems.append(
                Diagnostic(
                    code=codes.VALUES_FILE,
                    message=f"a values file must hold exactly one mapping; this is document {len(docs)} of the file",
                    severity=Severity.ERROR,
                    file=display,
                    line=extra.line,
                    column=extra.column,
                    hint="merge the documents into one mapping, or split them into files "
                    "given with separate --values options",
                )
            )
        for doc in docs[:1]:
            _merge(merged, doc, display)
    return merged, problems


def _merge(merged: Values, doc: SourceDoc, display: str) -> None:
    entries: dict[Any, dict[tuple, tuple[str, Mark]]] = {key: {} for key in doc.data}
    for path, mark in doc.values.items():
        if path and path[0] in entries:
            entries[path[0]][path] = (display, mark)
    merged.update(doc.data)
    merged._origins.update(entries)  # a later file replaces the whole entry of a key
    merged.plain = {path: text for path, text in merged.plain.items() if path[0] not in doc.data}
    merged.plain.update((path, text) for path, text in doc.plain.items() if path)
