"""Loading CustomResourceDefinitions and indexing their served schemas.

A registry maps ``(apiVersion, kind)`` to the served version's ``openAPIV3Schema``. It reads
CRD YAML from directories (recursively) or files: one CRD per document, several documents
per file (``kubectl get crd -o yaml``), or a ``List`` with ``items``. Other documents
(kustomizations, ...) are ignored.

The shared CRDs are several megabytes of YAML, so work is deferred: a cheap text scan finds
the group and kind of a single-CRD file, and the file is parsed only when a manifest of that
kind is checked. Converted JSON Schemas are cached per CRD version by :mod:`.structural`.
Registries are memoised per set of files (path, size, mtime), so repeated checks in one
process (the compiler's tests) load each CRD once.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainspec.check.schema.vendored import load_json_documents, scan_json_header
from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from trainspec.check.schema.structural import StructuralValidator

_CRD_SUFFIXES = (".yaml", ".yml", ".json")

# Text scan of a single-document controller-gen / kubectl CRD file (see _scan_header).
_SPEC_GROUP = re.compile(r"^  group:[ \t]*[\"']?([a-z0-9.-]+)[\"']?[ \t]*$", re.MULTILINE)
_NAMES_KIND = re.compile(r"^    kind:[ \t]*[\"']?([A-Za-z0-9]+)[\"']?[ \t]*$", re.MULTILINE)
_CONTENT_LINE = re.compile(r"^[ \t]*[^#\s]", re.MULTILINE)


@dataclass(frozen=True)
class CrdVersion:
    """One served version of one CRD."""

    group: str
    version: str
    kind: str
    plural: str
    scope: str  # "Namespaced" or "Cluster"
    schema: Mapping[str, Any] = field(repr=False, compare=False, hash=False)
    source: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


@dataclass
class _File:
    path: Path
    header: tuple[str, str] | None  # (group, kind) from the text scan, when unambiguous
    parsed: bool = False
    #: The file's text, read once for the scan and kept until it is parsed (then dropped).
    text: str | None = field(default=None, repr=False)


def _load_yaml_documents(text: str) -> list[Any]:
    import yaml  # lazy: keep importing this package cheap

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return list(yaml.load_all(text, Loader=loader))


def _scan_header(text: str) -> tuple[str, str] | None:
    """(group, kind) of a file holding exactly one CRD document, or None if unsure.

    Both controller-gen and ``kubectl get crd -o yaml`` write ``spec.group`` (two spaces) and
    ``spec.names.kind`` (four spaces) before ``spec.versions``, so only the text before the
    versions is searched; whole-file regular expressions would cost more than parsing.
    Anything unusual makes the loader parse the file at once instead.
    """
    body = "\n" + text
    separators = body.count("\n---")
    if separators > 1:
        return None
    if separators == 1:
        before, _, body = body.partition("\n---")
        if _CONTENT_LINE.search(before):
            return None
        body = body.partition("\n")[2]
    if body.count("\nkind:") != 1 and not body.startswith("kind:"):
        return None
    head = body.partition("\n  versions:")[0]
    if not re.search(r"^kind:[ \t]*CustomResourceDefinition[ \t]*$", head, re.MULTILINE):
        return None
    groups = set(_SPEC_GROUP.findall(head))
    kinds = set(_NAMES_KIND.findall(head))
    if len(groups) != 1 or len(kinds) != 1:
        return None
    return groups.pop(), kinds.pop()


def _iter_crd_documents(doc: Any) -> Iterator[Mapping[str, Any]]:
    if not isinstance(doc, Mapping):
        return
    kind = doc.get("kind")
    if kind == "CustomResourceDefinition":
        yield doc
    elif isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
        for item in doc["items"]:
            yield from _iter_crd_documents(item)


def _versions_of(crd: Mapping[str, Any], source: str) -> Iterator[CrdVersion]:
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, kind = spec.get("group"), names.get("kind")
    if not isinstance(group, str) or not isinstance(kind, str):
        return
    # apiextensions v1beta1 had one top-level schema (spec.validation) and maybe spec.version.
    shared_schema = (spec.get("validation") or {}).get("openAPIV3Schema")
    versions = spec.get("versions") or ([{"name": spec["version"]}] if spec.get("version") else [])
    for entry in versions:
        if not isinstance(entry, Mapping) or entry.get("served", True) is False:
            continue
        schema = (entry.get("schema") or {}).get("openAPIV3Schema") or shared_schema
        if schema is None:  # no schema at all: anything goes, as on a real cluster
            schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        yield CrdVersion(
            group=group,
            version=str(entry.get("name")),
            kind=kind,
            plural=str(names.get("plural", "")),
            scope=str(spec.get("scope", "Namespaced")),
            schema=schema,
            source=source,
        )


class CrdRegistry:
    """CRD versions by ``(apiVersion, kind)``; files are parsed on first use."""

    def __init__(self, files: Iterable[Path]) -> None:
        self._files: list[_File] = []
        self._by_key: dict[tuple[str, str], CrdVersion] = {}
        self._validators: dict[tuple[str, str], StructuralValidator] = {}
        self._lock = threading.Lock()
        #: Problems with the CRD files themselves (unreadable, bad YAML), as warnings.
        self.problems: list[Diagnostic] = []
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self._problem(codes.UNREADABLE_FILE, path, f"CRD file cannot be read: {exc}")
                continue
            # Shipped data (.vendored) is compact JSON: its own header scan, same lazy parsing.
            entry = _File(path, scan_json_header(text) if path.suffix == ".json" else _scan_header(text))
            self._files.append(entry)
            if entry.header is None:
                self._parse(entry, text)
            else:
                entry.text = text  # parsed from this text if a manifest needs it: the file is read once

    # -- loading ---------------------------------------------------------------------------

    def _problem(self, code: Code, path: Path, message: str) -> None:
        self.problems.append(Diagnostic(code=code, message=message, severity=Severity.WARNING, file=str(path)))

    def _parse(self, entry: _File, text: str | None = None) -> None:
        if entry.parsed:
            return
        entry.parsed = True
        for version in self._read_versions(entry, text) or ():
            # First definition wins, like the first `kubectl apply` of a name.
            self._by_key.setdefault((version.api_version, version.kind), version)

    def _read_versions(self, entry: _File, text: str | None = None) -> list[CrdVersion] | None:
        """The served versions ``entry``'s file defines, from ``text``, else the text kept from the
        scan (dropped now), else the file; None (a problem reported) when it cannot be parsed."""
        if text is None:
            text, entry.text = entry.text, None
        try:
            if text is None:
                text = entry.path.read_text(encoding="utf-8")
            docs = (load_json_documents(text) if entry.path.suffix == ".json" else None) or _load_yaml_documents(text)
        except Exception as exc:  # yaml.YAMLError, OSError: report, keep the other CRDs
            self._problem(codes.YAML_SYNTAX, entry.path, f"CRD file cannot be parsed: {exc}")
            return None
        return [
            version
            for doc in docs
            for crd in _iter_crd_documents(doc)
            for version in _versions_of(crd, str(entry.path))
        ]

    def _parse_candidates(self, group: str, kind: str) -> None:
        for entry in self._files:
            if not entry.parsed and entry.header == (group, kind):
                self._parse(entry)

    def load_all(self) -> None:
        """Parse every file now (for listing all CRDs)."""
        with self._lock:
            for entry in self._files:
                self._parse(entry)

    # -- queries ---------------------------------------------------------------------------

    def lookup(self, api_version: str, kind: str) -> CrdVersion | None:
        """The served CRD version for a manifest's ``apiVersion`` and ``kind``, if known.

        Files whose header names the kind are parsed in order until one defines this version:
        a later file cannot change the answer (the first definition wins), so it stays unparsed
        (the Training Operator's MPIJob v1 CRD when the manifest is mpi-operator's v2beta1).
        """
        group = api_version.rpartition("/")[0]
        key = (api_version, kind)
        with self._lock:
            for entry in self._files:
                if key in self._by_key:
                    break
                if not entry.parsed and entry.header == (group, kind):
                    self._parse(entry)
            return self._by_key.get(key)

    def served_versions(self, group: str, kind: str) -> list[str]:
        """Versions of ``group``/``kind`` that some loaded CRD serves."""
        with self._lock:
            self._parse_candidates(group, kind)
            return sorted(v.version for (_, k), v in self._by_key.items() if k == kind and v.group == group)

    def knows_group(self, group: str) -> bool:
        """True when some CRD file defines a kind in ``group``."""
        if any(entry.header and entry.header[0] == group for entry in self._files):
            return True
        return any(v.group == group for v in self._by_key.values())

    def __iter__(self) -> Iterator[CrdVersion]:
        self.load_all()
        return iter(list(self._by_key.values()))

    def __len__(self) -> int:
        self.load_all()
        return len(self._by_key)

    def validator(self, crd: CrdVersion) -> StructuralValidator:
        """The strict JSON Schema validator for ``crd`` (converted once, then cached)."""
        key = (crd.api_version, crd.kind)
        with self._lock:
            found = self._validators.get(key)
            if found is None:
                from trainspec.check.schema.structural import StructuralValidator  # lazy: imports jsonschema

                found = self._validators[key] = StructuralValidator(crd.schema, root=True)
            return found


def expand_crd_paths(paths: Iterable[str | PathLike[str]]) -> list[Path]:
    """CRD files under ``paths``: files as given, directories recursively, sorted."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _CRD_SUFFIXES))
        elif path.is_file():
            files.append(path)
    return files


_REGISTRIES: dict[tuple[tuple[str, int, int], ...], CrdRegistry] = {}
_REGISTRIES_LOCK = threading.Lock()


def load_crds(paths: Iterable[Path | str]) -> CrdRegistry:
    """A registry of the CRDs found in ``paths`` (directories are searched recursively).

    Missing paths are skipped. The registry is memoised on the files' paths, sizes and
    modification times, so calling this again for the same directories is free.
    """
    files = expand_crd_paths(paths)
    signature: list[tuple[str, int, int]] = []
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            continue
        signature.append((str(path.resolve()), stat.st_size, stat.st_mtime_ns))
    key = tuple(signature)
    with _REGISTRIES_LOCK:
        registry = _REGISTRIES.get(key)
        if registry is None:
            registry = _REGISTRIES[key] = CrdRegistry(files)
        return registry
