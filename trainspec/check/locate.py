"""Pointing findings where users can read them.

The checker reports against a manifest key (:class:`.manifests.Manifest`) and a rendered
field path. A manifest read from a file is pointed at the exact line and column of the field;
a compiled one at the spec field that decided the manifest field (its provenance
``FieldSources``), else at the spec's first line, with the compiled object and the manifest
field in brackets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from trainspec.check.manifests import Manifest
from trainspec.dsl.record import replace

_PATH_PART = re.compile(r"\.?([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")


def parse_path(text: str) -> tuple[str | int, ...]:
    """``spec.a[2]['x.y/z']`` -> ``("spec", "a", 2, "x.y/z")`` (the checker's rendered paths)."""
    parts: list[str | int] = []
    for match in _PATH_PART.finditer(text):
        name, index, quoted = match.groups()
        parts.append(name if name is not None else int(index) if index is not None else re.sub(r"\\(.)", r"\1", quoted))
    return tuple(parts)


def place(manifest: Manifest, diagnostic: Any, path: tuple) -> Any:
    """``diagnostic`` located at ``path`` of ``manifest``'s source (spec line or manifest line)."""
    from trainspec.dsl.diagnostics import format_path

    if manifest.located is not None:
        mark = manifest.located.mark(path)
        if diagnostic.message.startswith("unknown field") and path in manifest.located.doc.keys:
            mark = manifest.located.doc.keys[path]  # the offending key, as validate's TS200 does
        return replace(diagnostic, file=manifest.located.file, line=mark.line, column=mark.column)
    ref = manifest.sources.lookup(path) if manifest.sources is not None else None
    if ref is None:
        return replace(diagnostic, file=None, message=f"{diagnostic.message} [{manifest.label}]")
    where = ref.location()
    field = f", field {diagnostic.path}" if diagnostic.path else ""
    return replace(
        diagnostic,
        file=where.file,
        line=where.line,
        column=where.column,
        path=format_path(ref.path),
        message=f"{diagnostic.message} [{manifest.label}{field}]",
    )


def relocate(diagnostics: Iterable[Any], by_key: Mapping[str, Manifest]) -> list[Any]:
    """Findings whose ``file`` is a manifest key, placed where users can read them."""
    out = []
    for diagnostic in diagnostics:
        related = tuple(_related(r, by_key) for r in diagnostic.related)
        diagnostic = replace(diagnostic, related=related)
        manifest = by_key.get(diagnostic.file or "")
        out.append(diagnostic if manifest is None else place(manifest, diagnostic, parse_path(diagnostic.path)))
    return out


def _related(related: Any, by_key: Mapping[str, Manifest]) -> Any:
    manifest = by_key.get(related.file or "")
    if manifest is None:
        return related
    if manifest.located is not None:
        start = manifest.located.doc.start
        return replace(related, file=manifest.located.file, line=start.line, column=start.column)
    ref = manifest.sources.default if manifest.sources is not None else None
    where = ref.location() if ref is not None else None
    return replace(
        related,
        file=where.file if where else None,
        line=where.line if where else None,
        column=where.column if where else None,
        message=f"{related.message} [{manifest.label}]",
    )
