"""One manifest being migrated: its fields, which of them were carried, and the warnings.

Every reader takes the fields it understands with :meth:`Source.take` (or marks them with
:meth:`Source.use`); whatever is left over at the end becomes a located TS540 warning from
:meth:`Source.leftovers`, so no field of the input is ever dropped without a word.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Severity, format_path
from trainspec.kueue.located import Located

Path = tuple[str | int, ...]

#: Server-set metadata: it describes the live object, never what to create (nothing to carry).
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "ownerReferences",
    "finalizers",
)


class Source:
    """A located Kubernetes object plus the record of what the migration carried."""

    def __init__(self, obj: Located) -> None:
        self.obj = obj
        self.used: set[Path] = set()
        self.diagnostics: list[Diagnostic] = []
        self.use(("apiVersion",), ("kind",), ("status",))
        for key in SERVER_METADATA:
            self.use(("metadata", key))

    @property
    def file(self) -> str:
        return self.obj.file

    @property
    def data(self) -> dict[str, Any]:
        return self.obj.data

    def get(self, path: Path, default: Any = None) -> Any:
        """The value at ``path`` (None, or ``default``, where there is none); not marked as carried."""
        node: Any = self.obj.data
        for part in path:
            if isinstance(part, int):
                if not isinstance(node, list) or not 0 <= part < len(node):
                    return default
            elif not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def has(self, path: Path) -> bool:
        return self.get(path, _MISSING) is not _MISSING

    def take(self, path: Path, default: Any = None) -> Any:
        """The value at ``path``, marked as carried."""
        self.use(path)
        return self.get(path, default)

    def use(self, *paths: Path) -> None:
        """Mark ``paths`` (and everything under them) as carried or deliberately left to trainspec."""
        self.used.update(tuple(p) for p in paths)

    def mapping(self, path: Path) -> dict[str, Any]:
        value = self.get(path)
        return value if isinstance(value, dict) else {}

    def sequence(self, path: Path) -> list[Any]:
        value = self.get(path)
        return value if isinstance(value, list) else []

    def diagnostic(
        self, code: Code, path: Path, message: str, *, hint: str | None = None, severity: Severity = Severity.WARNING
    ) -> Diagnostic:
        return Diagnostic.located(
            code, message, self.file, self.obj.mark(tuple(path)), path, severity=severity, hint=hint
        )

    def warn(self, path: Path, message: str, *, hint: str | None = None, code: Code = codes.FIELD_CHANGED) -> None:
        """A warning at ``path``; the field counts as handled (it was carried, or said to be dropped)."""
        self.use(path)
        self.diagnostics.append(self.diagnostic(code, path, message, hint=hint))

    def drop(self, path: Path, why: str, *, hint: str | None = None) -> None:
        """TS540: the field at ``path`` has no place in the specs."""
        self.warn(path, f"{_leaf(path)} is not carried into the specs: {why}", hint=hint, code=codes.FIELD_NOT_CARRIED)

    def error(self, path: Path, message: str, *, hint: str | None = None) -> Diagnostic:
        """TS543: the manifest cannot be migrated (returned, for the reader to raise or collect)."""
        return self.diagnostic(codes.CANNOT_MIGRATE, path, message, hint=hint, severity=Severity.ERROR)

    def leftovers(self) -> list[Diagnostic]:
        """TS540 for every field nothing carried: each subtree once, at its highest unused path."""
        return [
            self.diagnostic(
                codes.FIELD_NOT_CARRIED,
                path,
                f"{_leaf(path)} is not carried into the specs: trainspec has no field for it",
                hint=_HINT,
            )
            for path in self._unused((), self.obj.data)
        ]

    def _unused(self, path: Path, node: Any) -> Iterator[Path]:
        if path in self.used:
            return
        if not self._any_used_below(path):
            if path and not _empty(node):
                yield path
            return
        if isinstance(node, dict):
            for key, value in node.items():
                yield from self._unused((*path, key), value)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                yield from self._unused((*path, index), value)

    def _any_used_below(self, path: Path) -> bool:
        size = len(path)
        return any(len(p) > size and p[:size] == path for p in self.used)


_MISSING = object()
_HINT = "set it by hand after compiling, or keep the original manifest for it"


def _leaf(path: Path) -> str:
    """The last field of ``path`` as a user reads it: ``imagePullPolicy``, ``env[2]``."""
    return format_path(path[-2:]) if path and isinstance(path[-1], int) else str(path[-1]) if path else "the object"


def _empty(node: Any) -> bool:
    """Values that say nothing (``{}``, ``[]``, null): nothing is lost by leaving them out."""
    return node is None or node == {} or node == []


__all__ = ["Path", "Source"]
