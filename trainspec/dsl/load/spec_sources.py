"""Find spec files, read them (YAML or Python), and return located spec models.

This is the *load* pass: files -> :class:`LoadedSpec` plus every diagnostic found on the way.
Finding files is :mod:`trainspec.dsl.load.discovery`; telling specs from other YAML is
:mod:`trainspec.dsl.load.doctype`; running ``.py`` specs is :mod:`trainspec.dsl.load.python.module`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.load.discovery import (
    IGNORE_FILE,
    PROJECT_FILE,
    SPEC_SUFFIXES,
    STDIN_NAME,
    discover,
    is_spec_module,
    split_stdin,
    unsafe_name,
)
from trainspec.dsl.load.loaded import DEFAULT_PYTHON_TIMEOUT, ForeignDoc, LoadedSpec, display_name, spec_problems
from trainspec.dsl.load.strict_yaml import LoadLimits, SourceDoc, load_file, load_text
from trainspec.dsl.load.validation import build_spec
from trainspec.dsl.spec.models import API_GROUP

_OUR_GROUP = API_GROUP + "/"

__all__ = [
    "IGNORE_FILE",
    "PROJECT_FILE",
    "SPEC_SUFFIXES",
    "discover",
    "is_spec_module",
    "load_files",
    "load_path",
    "load_specs",
    "load_stdin",
    "load_string",
]


def load_specs(
    paths: list[str],
    *,
    values: dict[str, Any] | None = None,
    limits: LoadLimits | None = None,
    foreign: list[ForeignDoc] | None = None,
    python_timeout: float | None = DEFAULT_PYTHON_TIMEOUT,
    python: str | None = None,
) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """The load pass: every spec of every file under ``paths``, and every problem found.

    ``-`` among ``paths`` is standard input (see :func:`load_stdin`).
    ``foreign``, when given, collects the documents left alone as not trainspec's.
    ``python_timeout`` bounds how long each Python spec module may run (None: no limit);
    ``python`` says whether they run at all (see :func:`load_files`).
    """
    paths, stdin, repeated = split_stdin(paths)
    files, problems = discover(paths)
    specs, found = load_files(
        files,
        values=values,
        limits=limits,
        foreign=foreign,
        python_timeout=python_timeout,
        python=python,
        stdin=stdin,
    )
    return specs, [*repeated, *problems, *found]


def load_files(
    files: Sequence[str | os.PathLike[str]],
    *,
    values: dict[str, Any] | None = None,
    limits: LoadLimits | None = None,
    foreign: list[ForeignDoc] | None = None,
    python_timeout: float | None = DEFAULT_PYTHON_TIMEOUT,
    python: str | None = None,
    project: Any = None,
    project_file: str | None = None,
    stdin: bool = False,
) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """Every spec of the given files (already discovered), and every problem found, in file order;
    with ``stdin``, then the YAML read from standard input (:func:`load_stdin`).

    Python spec modules are read after the other files, since a project file among them may say
    whether they run. ``python``: ``allow`` (run each in a supervised child), ``warn`` or ``deny``
    (not run: a TS123 warning or error each); None: the strictest ``spec.python`` of ``project``
    (a Project object) and of the Project documents read, ``allow`` without one. When
    ``project_file`` (the project file in use) cannot be read, no module runs.
    """
    results: list[tuple[list[LoadedSpec], list[Diagnostic]]] = [([], [])] * len(files)
    modules: list[int] = []
    for index, path in enumerate(files):
        if _is_python(path):
            modules.append(index)
        else:
            results[index] = load_path(path, values=values, limits=limits, foreign=foreign)
    if stdin:  # read before any module runs: a Project document piped in has its say on Python
        files = [*files, STDIN_NAME]  # named as diagnostics name it
        results.append(load_stdin(values=values, limits=limits, foreign=foreign))
    if modules:
        from pathlib import Path

        from trainspec.dsl.load.python.permission import load_modules

        python_files = set(modules)
        loaded = load_modules(
            [Path(files[i]) for i in modules],
            python=python,
            project=project,
            project_file=project_file,
            read=[(Path(path), results[i]) for i, path in enumerate(files) if i not in python_files],
            timeout=python_timeout,
        )
        for index, result in zip(modules, loaded, strict=True):
            results[index] = result
    return [s for specs, _ in results for s in specs], [d for _, problems in results for d in problems]


def load_path(
    path: str | os.PathLike[str],
    *,
    values: dict[str, Any] | None = None,
    limits: LoadLimits | None = None,
    foreign: list[ForeignDoc] | None = None,
    python_timeout: float | None = DEFAULT_PYTHON_TIMEOUT,
    python: str = "allow",
) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """Specs of one file (``.py``, in any letter case, is a Python spec module, run when ``python`` is ``allow``).

    A file name with control characters is refused before anything reads it (TS124).
    """
    path = os.fspath(path)
    refused = unsafe_name(path)
    if refused is not None:
        return [], [refused]
    display = display_name(path)
    if _is_python(path):
        from pathlib import Path

        from trainspec.dsl.load.python.permission import load_modules

        return load_modules([Path(path)], python=python, timeout=python_timeout)[0]
    docs, problems = load_file(path, display, limits or LoadLimits())
    return _specs_of(docs, problems, values, foreign)


def _is_python(path: str | os.PathLike[str]) -> bool:
    """Whether ``path``'s suffix is ``.py`` in any letter case (as ``Path(path).suffix`` reads it:
    a file named ``.py`` has none)."""
    name = os.fspath(path).rstrip("/").rsplit("/", 1)[-1]
    return name.lower().endswith(".py") and name.rfind(".") > 0


def load_stdin(
    *,
    values: dict[str, Any] | None = None,
    limits: LoadLimits | None = None,
    foreign: list[ForeignDoc] | None = None,
    stream: Any = None,
) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """Specs (and manifests, into ``foreign``) read from standard input, located as ``<stdin>:line:col``.

    Read once, up to the same size cap as a file; YAML only: a Python spec module piped in is
    refused, never run (:mod:`trainspec.dsl.load.stdin`). ``stream`` (binary; default ``sys.stdin``)
    is for tests.
    """
    from trainspec.dsl.load.stdin import python_refusal, read_stdin

    limits = limits or LoadLimits()
    data, problems = read_stdin(limits.max_bytes, stream)
    if data is None:
        return [], problems
    docs, problems = load_text(data, STDIN_NAME, limits)
    refused = python_refusal(data) if any(d.is_error for d in problems) else None
    if refused is not None:
        return [], [refused]
    return _specs_of(docs, problems, values, foreign)


def load_string(
    text: str | bytes,
    display: str = "<string>",
    *,
    values: dict[str, Any] | None = None,
    limits: LoadLimits | None = None,
    foreign: list[ForeignDoc] | None = None,
) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    """Specs of YAML text (for tools and tests that hold specs in memory)."""
    docs, problems = load_text(text, display, limits or LoadLimits())
    return _specs_of(docs, problems, values, foreign)


def _specs_of(
    docs: list[SourceDoc], problems: list[Diagnostic], values: dict[str, Any] | None, foreign: list[ForeignDoc] | None
) -> tuple[list[LoadedSpec], list[Diagnostic]]:
    specs: list[LoadedSpec] = []
    for doc in docs:
        api = doc.data.get("apiVersion")
        # A trainspec apiVersion with a kind is a spec: classify's first rule, decided here so
        # that a run of specs alone never imports the classifier (the other documents need it).
        if not (isinstance(api, str) and api.startswith(_OUR_GROUP) and "kind" in doc.data):
            from trainspec.dsl.load.doctype import classify

            verdict = classify(doc)
            if verdict.problem is not None:
                problems.append(verdict.problem)
                continue
            if not verdict.spec:
                if foreign is not None:
                    foreign.append(_foreign(doc))
                continue
        loaded, found = _load_doc(doc, values)
        problems.extend(found)
        if loaded is not None:
            specs.append(loaded)
    return specs, problems


def _foreign(doc: SourceDoc) -> ForeignDoc:
    api_version, kind = doc.data.get("apiVersion"), doc.data.get("kind")
    return ForeignDoc(
        doc.file,
        doc.start.line,
        doc.start.column,
        api_version if isinstance(api_version, str) else None,
        kind if isinstance(kind, str) else None,
        doc,
    )


def _load_doc(doc: SourceDoc, values: dict[str, Any] | None) -> tuple[LoadedSpec | None, list[Diagnostic]]:
    """Render, validate and check one spec document."""
    problems: list[Diagnostic] = []
    failed: list[str] = []
    if values is not None or doc.templated:
        from trainspec.dsl.load.template_render import render_document

        problems.extend(render_document(doc, values or {}, failed=failed))
    spec, found = build_spec(doc)
    if failed:
        # Keep reporting the rest of the document, but not what only follows from a value that
        # could not be rendered (it still holds the template text); the spec itself is dropped.
        problems.extend(d for d in found if not any(_within(d.path, path) for path in failed))
        return None, problems
    problems.extend(found)
    if spec is None:
        return None, problems
    loaded = LoadedSpec(spec=spec, file=doc.file, doc=doc, origin=doc.start)
    problems.extend(spec_problems(loaded))
    return loaded, problems


def _within(path: str, prefix: str) -> bool:
    """Whether the field path ``path`` is ``prefix`` or below it."""
    return not prefix or path == prefix or path.startswith((prefix + ".", prefix + "["))


#: Findings about a variable's *name*: pointed at the key, not the value.
