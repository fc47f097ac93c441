"""Kubernetes objects read from YAML files, with the position of every field.

:func:`read_objects` loads documents with :func:`trainspec.dsl.load.strict_yaml.load_file` (which
keeps line and column of every key and value), so a finding on any field of any object can be
pointed at as ``file:line:col``. Used for the cluster files and for manifests given to
``trainspec check`` as input.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from os import PathLike
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Related
from trainspec.dsl.load.strict_yaml import LoadLimits, Mark, SourceDoc
from trainspec.dsl.load.validation import locate


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Located:
    """One Kubernetes object from a YAML file, with the position of every field."""

    doc: SourceDoc

    @property
    def data(self) -> dict[str, Any]:
        return self.doc.data

    @property
    def file(self) -> str:
        return self.doc.file

    @property
    def api_version(self) -> str:
        return str(self.data.get("apiVersion", ""))

    @property
    def kind(self) -> str:
        return str(self.data.get("kind", ""))

    @property
    def name(self) -> str:
        return str(_map(self.data.get("metadata")).get("name", ""))

    @property
    def namespace(self) -> str | None:
        value = _map(self.data.get("metadata")).get("namespace")
        return str(value) if value is not None else None

    def mark(self, path: tuple = ()) -> Mark:
        """Where ``path`` is, pointed at the way validate points (see ``dsl.load.validation.locate``)."""
        return locate(self.doc, tuple(path))

    def related(self, message: str, path: tuple = ()) -> Related:
        """A note pointing at ``path`` of this object."""
        mark = self.mark(path)
        return Related(message=message, file=self.file, line=mark.line, column=mark.column)

    def describe(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


def yaml_files(paths: Iterable[str | PathLike[str]]) -> tuple[list[str], list[Diagnostic]]:
    """YAML files under ``paths``, sorted: the walk of every command (:func:`trainspec.dsl.load.discovery.discover`:
    hidden entries, ``.trainspecignore``, symbolic links, FIFOs and odd names alike), taking
    ``*.yaml`` and ``*.yml`` only."""
    from trainspec.dsl.load.discovery import YAML_SUFFIXES, discover

    return discover([str(p) for p in paths], YAML_SUFFIXES)


def read_objects(
    files: Iterable[str | PathLike[str]], limits: LoadLimits | None = None
) -> tuple[list[Located], list[Diagnostic]]:
    """Every document with an ``apiVersion`` and ``kind`` in ``files``, except trainspec's own specs.
    ``limits``: a :class:`~trainspec.dsl.load.strict_yaml.LoadLimits` (None: the loader's defaults)."""
    from trainspec.dsl.load.loaded import display_name
    from trainspec.dsl.load.strict_yaml import load_file

    objects: list[Located] = []
    problems: list[Diagnostic] = []
    for path in files:
        docs, found = load_file(path, display_name(path), limits or LoadLimits())
        objects.extend(_objects(docs, found, problems))
    return objects, problems


def _objects(docs: list[SourceDoc], found: list[Diagnostic], problems: list[Diagnostic]) -> list[Located]:
    """The Kubernetes objects among ``docs`` (``found``, the loader's findings, go to ``problems``)."""
    problems.extend(d for d in found if d.code != codes.YAML11_IMPLICIT)  # YAML 1.1 bools: a spec-language rule
    return [
        Located(doc)
        for doc in docs
        if isinstance(doc.data.get("apiVersion"), str)
        and isinstance(doc.data.get("kind"), str)
        and not doc.data["apiVersion"].startswith("trainspec.dev/")
    ]


def read_inputs(
    paths: Iterable[str | PathLike[str]], limits: LoadLimits | None = None, *, stream: Any = None
) -> tuple[list[Located], list[Diagnostic]]:
    """The objects under ``paths``, where ``-`` is standard input (read once, YAML, ``<stdin>:line:col``).

    ``stream`` (binary; default ``sys.stdin``) is for tests.
    """
    from trainspec.dsl.load.discovery import STDIN_NAME, split_stdin
    from trainspec.dsl.load.stdin import read_stdin
    from trainspec.dsl.load.strict_yaml import load_text

    rest, stdin, problems = split_stdin([str(p) for p in paths])
    files, found = yaml_files(rest)
    objects, read = read_objects(files, limits)
    problems = [*problems, *found, *read]
    if stdin:
        limits = limits or LoadLimits()
        data, found = read_stdin(limits.max_bytes, stream)
        problems.extend(found)
        if data is not None:
            docs, found = load_text(data, STDIN_NAME, limits)
            objects.extend(_objects(docs, found, problems))
    return objects, problems


__all__ = ["Located", "read_inputs", "read_objects", "yaml_files"]
