"""Values files for ``{{ values.x }}`` templates (``--values FILE``, layered)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic


def load_values(files: list[str] | tuple[str, ...]) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """Merge values files, later ones winning key by key at the top level."""
    if not files:
        return None, []
    from trainspec.dsl.sources import display_name
    from trainspec.dsl.yaml_loader import load_file

    merged: dict[str, Any] = {}
    problems: list[Diagnostic] = []
    for file in files:
        docs, found = load_file(file, display_name(Path(file)))
        problems.extend(found)
        if not found and len(docs) != 1:
            problems.append(Diagnostic(code="TS308", message="a values file must hold exactly one mapping",
                                       file=file, line=1, column=1))
        for doc in docs[:1]:
            merged.update(doc.data)
    return merged, problems
