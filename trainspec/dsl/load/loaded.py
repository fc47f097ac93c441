"""What a loaded spec is: a validated spec model and where it came from.

:class:`LoadedSpec` (a spec and its positions), :class:`ForeignDoc` (a document left alone as
not trainspec's) and the checks one spec needs on its own. The loaders build them: YAML in
:mod:`trainspec.dsl.load.spec_sources`, Python spec modules in :mod:`trainspec.dsl.load.python.module`.
"""

from __future__ import annotations

from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Related, Severity
from trainspec.dsl.load.discovery import display_name as display_name  # where callers have found it
from trainspec.dsl.load.strict_yaml import Mark, SourceDoc
from trainspec.dsl.load.validation import locate
from trainspec.dsl.record import Record, field
from trainspec.dsl.spec.models import Runtime, TrainingJob
from trainspec.dsl.spec.reserved_runtimes import check_runtime
from trainspec.dsl.spec.semantics import check_job

__all__ = ["DEFAULT_PYTHON_TIMEOUT", "ForeignDoc", "LoadedSpec", "display_name", "runtime_problems", "spec_problems"]

#: Codes whose diagnostic points at the field's key (a name), not its value.
_NAME_CODES = frozenset({codes.ENV_SECRET_CLASH, codes.RESERVED_ENV})

#: Seconds a Python spec module may run before it is stopped (TS115); None or 0: no limit.
DEFAULT_PYTHON_TIMEOUT = 10.0


class ForeignDoc(Record):
    """A document that was read and left alone as not trainspec's (a Kubernetes manifest, ...).

    ``api_version`` and ``kind`` are the document's own (None when absent or not a string);
    ``doc`` is the parsed document, so ``check`` reads it as a manifest without reading the file again.
    """

    file: str
    line: int
    column: int
    api_version: str | None
    kind: str | None
    doc: SourceDoc | None = field(default=None, compare=False, repr=False)


class LoadedSpec(Record):
    """A validated spec and where it came from, so later passes can point back at it."""

    spec: Any  # Runtime | TrainingJob | Project
    file: str
    doc: SourceDoc | None = None
    origin: Mark = Mark(1, 1)
    #: For a job written inside a pipeline, where its ``spec`` is in the pipeline document
    #: (``("spec", "steps", 1, "job")``): diagnostics show the path the user wrote.
    within: tuple = ()

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def name(self) -> str:
        return self.spec.metadata.name if self.spec.metadata is not None else ""

    @property
    def namespace(self) -> str | None:
        return self.spec.metadata.namespace if self.spec.metadata is not None else None

    def mark(self, path: tuple = (), *, at_key: bool = False) -> Mark:
        """Best position for a field path (Python specs: the constructor call).

        A mapping or list is pointed at by its key; ``at_key`` does that for scalars too.
        """
        if self.doc is None:
            return self.origin
        if at_key and path in self.doc.keys:
            return self.doc.keys[path]
        return locate(self.doc, path)

    def has(self, path: tuple) -> bool:
        """Whether the user wrote the field at ``path`` (YAML only; Python specs: set fields)."""
        if self.doc is not None:
            return path in self.doc.values
        node: Any = self.spec
        for part in path:
            fields_set = getattr(node, "model_fields_set", None)
            if fields_set is None:
                return True
            name = _python_name(type(node), part)
            if name not in fields_set:
                return False
            node = getattr(node, name)
        return True

    def diagnostic(
        self,
        code: Code,
        path: tuple,
        message: str,
        *,
        hint: str | None = None,
        severity: Severity = Severity.ERROR,
        related: tuple[Related, ...] = (),
        at_key: bool = False,
    ) -> Diagnostic:
        """A diagnostic located at ``path`` of this spec."""
        return Diagnostic.located(
            code,
            message,
            self.file,
            self.mark(path, at_key=at_key),
            self.shown(path),
            severity=severity,
            hint=hint,
            related=related,
        )

    def shown(self, path: tuple) -> tuple:
        """``path`` as the user wrote it: in the pipeline document for a job written inside one."""
        if not self.within:
            return path
        if path[:1] == ("spec",):
            return (*self.within, *path[1:])
        if path[:1] == ("metadata",):
            return (*self.within[:-1], "name")  # the job is named after its step
        return self.within[:-1]


def runtime_problems(loaded: LoadedSpec) -> list[Diagnostic]:
    """Single-spec problems of a loaded Runtime (a name Kubeflow Trainer installs: TS414)."""
    return [
        loaded.diagnostic(code, path, message, hint=hint) for code, path, message, hint in check_runtime(loaded.spec)
    ]


def spec_problems(loaded: LoadedSpec) -> list[Diagnostic]:
    """The checks one spec needs on its own (env clashes, reserved names, credentials, names).

    Every spec gets them however it was written: YAML, a Python spec module, or an object
    handed to the library.
    """
    if isinstance(loaded.spec, TrainingJob):
        return [
            loaded.diagnostic(code, path, message, hint=hint, at_key=code in _NAME_CODES)
            for code, path, message, hint in check_job(loaded.spec)
        ]
    if isinstance(loaded.spec, Runtime):
        return runtime_problems(loaded)
    return []


def _python_name(model: Any, wire: Any) -> str:
    for name, spec_field in getattr(model, "model_fields", {}).items():
        if spec_field.alias == wire or name == wire:
            return name
    return str(wire)
