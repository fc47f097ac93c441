"""Rendering field paths the way users write them.

``format_path`` in :mod:`trainspec.dsl.diagnostics` joins every key with a dot. Manifests
also have map keys such as label names (``trainer.kubeflow.org/framework``) where a dot
would be ambiguous, so those are rendered in brackets: ``metadata.labels['a.b/c']``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# A key that can be written after a dot without ambiguity.
_PLAIN_KEY = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")

PathPart = str | int


def render_path(parts: Iterable[PathPart]) -> str:
    """``("spec", "args", 2)`` -> ``spec.args[2]``; odd keys -> ``labels['a.b/c']``."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.match(part):
            out.append(f".{part}" if out else part)
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            out.append(f"['{escaped}']")
    return "".join(out)


def join_path(base: str, *parts: PathPart) -> str:
    """Append parts to an already rendered path."""
    tail = render_path(parts)
    if not base:
        return tail
    if not tail:
        return base
    return base + tail if tail.startswith("[") else f"{base}.{tail}"


def short(value: object, limit: int = 60) -> str:
    """A value's repr, cut to ``limit`` characters for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
