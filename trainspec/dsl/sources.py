"""Find spec files, read them (YAML or Python), and return located spec models.

This is the *load* pass: files -> :class:`LoadedSpec` plus every diagnostic found on the way.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic, Related, Severity, format_path
from trainspec.dsl.models import API_GROUP, Runtime, TrainingJob
from trainspec.dsl.semantics import check_job
from trainspec.dsl.upstream import check_runtime
from trainspec.dsl.validation import build_spec, locate
from trainspec.dsl.yaml_loader import LoadLimits, Mark, SourceDoc, load_file, load_text

SPEC_SUFFIXES = (".yaml", ".yml", ".py")
IGNORE_FILE = ".trainspecignore"
#: The project file is found and loaded on its own (see ``dsl.project``), not by directory walks.
PROJECT_FILE = "trainspec.yaml"


@dataclass(frozen=True)
class LoadedSpec:
    """A validated spec and where it came from, so later passes can point back at it."""

    spec: Any  # Runtime | TrainingJob | Project
    file: str
    doc: SourceDoc | None = None
    origin: Mark = Mark(1, 1)

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

    def diagnostic(self, code: str, path: tuple, message: str, *, hint: str | None = None,
                   severity: Severity = Severity.ERROR, related: tuple[Related, ...] = (),
                   at_key: bool = False) -> Diagnostic:
        """A diagnostic located at ``path`` of this spec."""
        mark = self.mark(path, at_key=at_key)
        return Diagnostic(code=code, message=message, severity=severity, file=self.file, line=mark.line,
                          column=mark.column, path=format_path(path), hint=hint, related=related)


def runtime_problems(loaded: LoadedSpec) -> list[Diagnostic]:
    """Single-spec problems of a loaded Runtime (a name Kubeflow Trainer installs: TS414)."""
    return [loaded.diagnostic(code, path, message, hint=hint) for code, path, message, hint in check_runtime(loaded.spec)]


def _python_name(model: Any, wire: Any) -> str:
    for name, field in getattr(model, "model_fields", {}).items():
        if field.alias == wire or name == wire:
            return name
    return str(wire)


def discover(paths: list[str]) -> tuple[list[Path], list[Diagnostic]]:
    """Spec files under ``paths`` (files as given; directories recursively), sorted, de-duplicated."""
    found: list[Path] = []
    problems: list[Diagnostic] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(_walk(path))
        elif path.is_file():
            found.append(path)
        else:
            problems.append(Diagnostic(code="TS100", message=f"{raw}: no such file or directory", file=raw,
                                       hint="check the path"))
    unique = sorted(set(found), key=lambda p: p.as_posix())
    return unique, problems


def _walk(root: Path) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        ignored = _ignore_patterns(here)
        dirnames[:] = sorted(
            d for d in dirnames
            if not d.startswith(".") and d != "__pycache__" and not _matches(d + "/", ignored)
        )
        for name in sorted(filenames):
            if (name.endswith(SPEC_SUFFIXES) and not name.startswith(".") and name != PROJECT_FILE
                    and not _matches(name, ignored)):
                if name.endswith(".py") and not is_spec_module(here / name):
                    continue
                out.append(here / name)
    return out


_SPEC_IMPORT = re.compile(r"^\s*(from\s+trainspec\s+import\s|import\s+trainspec\s*$)", re.M)
_SPEC_CALL = re.compile(r"\b(TrainingJob|Runtime)\(")


def is_spec_module(path: Path) -> bool:
    """Whether a Python file found by a directory walk is a spec module.

    Running a module executes it, so a walk only picks files that import trainspec's API and
    build a ``TrainingJob`` or ``Runtime``; training scripts beside the specs are left alone.
    A file named on the command line is always loaded.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True  # let the loader report it
    return bool(_SPEC_IMPORT.search(text) and _SPEC_CALL.search(text))


def _ignore_patterns(directory: Path) -> list[str]:
    try:
        text = (directory / IGNORE_FILE).read_text(encoding="utf-8")
    except OSError:
        return []
    patterns = (line.split(" #", 1)[0].strip() for line in text.splitlines())
    return [p for p in patterns if p and not p.startswith("#")]


def _matches(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(name.rstrip("/"), p.rstrip("/")) for p in patterns)


def display_name(path: Path) -> str:
    """A stable display path: relative to the working directory when below it."""
    absolute = os.path.abspath(path)  # no symlink resolution: a syscall-free string operation
    cwd = os.getcwd()
    if absolute == cwd or not absolute.startswith(cwd.rstrip(os.sep) + os.sep):
        return path.as_posix()
    return Path(os.path.relpath(absolute, cwd)).as_posix()


def load_specs(paths: list[str], *, values: dict[str, Any] | None = None,
               limits: LoadLimits | None = None) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """The load pass: every spec of every file under ``paths``, and every problem found."""
    files, problems = discover(paths)
    specs, found = load_files(files, values=values, limits=limits)
    return specs, [*problems, *found]


def load_files(files: list[Path], *, values: dict[str, Any] | None = None,
               limits: LoadLimits | None = None) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """Every spec of the given files (already discovered), and every problem found."""
    specs: list[LoadedSpec] = []
    problems: list[Diagnostic] = []
    for path in files:
        loaded, found = load_path(path, values=values, limits=limits)
        specs.extend(loaded)
        problems.extend(found)
    return specs, problems


def load_path(path: Path, *, values: dict[str, Any] | None = None,
              limits: LoadLimits | None = None) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """Specs of one file."""
    display = display_name(path)
    if path.suffix == ".py":
        from trainspec.dsl.pyspec import load_python

        return load_python(path, display)
    docs, problems = load_file(path, display, limits or LoadLimits())
    return _specs_of(docs, problems, values)


def load_string(text: str | bytes, display: str = "<string>", *, values: dict[str, Any] | None = None,
                limits: LoadLimits | None = None) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """Specs of YAML text (for tools and tests that hold specs in memory)."""
    docs, problems = load_text(text, display, limits or LoadLimits())
    return _specs_of(docs, problems, values)


def _specs_of(docs: list[SourceDoc], problems: list[Diagnostic],
              values: dict[str, Any] | None) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    specs: list[LoadedSpec] = []
    for doc in docs:
        found = _load_doc(doc, values)
        problems.extend(found[1])
        if found[0] is not None:
            specs.append(found[0])
    return specs, problems


def _load_doc(doc: SourceDoc, values: dict[str, Any] | None) -> tuple[LoadedSpec | None, list[Diagnostic]]:
    problems: list[Diagnostic] = []
    api_version = doc.data.get("apiVersion")
    if not isinstance(api_version, str) or not api_version.startswith(API_GROUP + "/"):
        return None, problems  # not a trainspec document: other YAML may live beside specs
    if values is not None or doc.templated:
        from trainspec.dsl.templating import render_document

        problems.extend(render_document(doc, values or {}))
        if problems:
            return None, problems
    spec, found = build_spec(doc)
    problems.extend(found)
    if spec is None:
        return None, problems
    loaded = LoadedSpec(spec=spec, file=doc.file, doc=doc, origin=doc.start)
    if isinstance(spec, TrainingJob):
        problems.extend(loaded.diagnostic(code, path, message, hint=hint, at_key=code in _NAME_CODES)
                        for code, path, message, hint in check_job(spec))
    elif isinstance(spec, Runtime):
        problems.extend(runtime_problems(loaded))
    return loaded, problems


#: Findings about a variable's *name*: pointed at the key, not the value.
_NAME_CODES = frozenset({"TS302", "TS303"})
