"""What keeps a cold ``trainspec check`` close to ``validate``: shipped CRD data and a disk cache.

After the CEL engine moved to cel-expr-python (rules compile in ~0.1 ms, the engine starts in
~2 ms), what a check costs beyond ``validate`` is reading the CRDs: PyYAML takes 30-200 ms per
CRD file of 0.5-1.4 MB, against 1-5 ms for the same data as JSON. So:

* a ``--crds`` file that is byte for byte (sha256) a source the package ships JSON data for
  (:mod:`.schema.vendored`, the default target's Trainer, JobSet and Kueue CRDs) is read from that
  JSON, cache or no cache;
* ``crd-<sha256 of the CRD file>.json`` in the on-disk cache: the served versions of any other
  CRD file, after its first parse;
* ``verdicts-<fingerprint>.json``: schema and CEL findings per manifest (:class:`VerdictCache`),
  so unchanged manifests need neither jsonschema nor a CEL engine. The fingerprint covers what
  decides a verdict besides the manifest: the checker's code, the CEL engine that runs and its
  version (with none installed, rules are "not evaluated": installing one must not find those
  verdicts again), and the libraries the engines and the schema step use; each entry's key adds
  the CRD that the manifest's kind resolved to, as its source file and the sha256 of its content.

Nothing of CEL is stored any more (cel-python's parse trees were, when building its parser cost
~0.25 s). The on-disk cache lives under ``$XDG_CACHE_HOME/trainspec`` (default
``~/.cache/trainspec``) as JSON (never pickle). It is never needed for correctness: entries are
keyed by content (a changed CRD file is a new key), any unreadable or malformed entry is ignored
and rebuilt, writes are atomic, and ``TRAINSPEC_NO_CACHE=1`` turns it off. It lives here because
it only serves ``check``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from trainspec.check.cel.validations import default_engine
from trainspec.check.schema.crds import CrdRegistry, CrdVersion, expand_crd_paths

ENV_NO_CACHE = "TRAINSPEC_NO_CACHE"
_FORMAT = 1  # bump when an entry's layout changes


class DiskCache:
    """JSON documents by key in one directory; every failure reads as a miss."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def get(self, key: str) -> Any:
        try:
            with open(self.directory / f"{key}.json", encoding="utf-8") as handle:
                payload = json.load(handle)
        except (OSError, ValueError):
            return None
        if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
            return None
        return payload.get("data")

    def put(self, key: str, data: Any) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=self.directory)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump({"format": _FORMAT, "data": data}, handle, separators=(",", ":"))
                os.replace(tmp, self.directory / f"{key}.json")
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass  # a read-only or full disk only costs speed


def default_cache() -> DiskCache | None:
    """The user's cache, or None when ``TRAINSPEC_NO_CACHE`` is set."""
    if os.environ.get(ENV_NO_CACHE, "") not in ("", "0"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return DiskCache(Path(base) / "trainspec")


# -- CRDs -----------------------------------------------------------------------------------------


class CachedCrdRegistry(CrdRegistry):
    """A :class:`CrdRegistry` that reads each CRD file's served versions from the cache.

    Only the parse step is replaced (``CrdRegistry._parse``); the cheap header scan and the
    lazy, first-definition-wins indexing of the base class stay as they are.
    """

    def __init__(self, files: Iterable[Path], cache: DiskCache | None) -> None:
        self._disk = cache  # set first: the base constructor may already parse
        #: sha256 of each parsed CRD file, by path (keys of the verdict cache).
        self.digests: dict[str, str] = {}
        super().__init__(files)

    def _parse(self, entry: Any, text: str | None = None) -> None:
        if entry.parsed:
            return
        if text is None:  # the text the header scan read: each CRD file is read once
            text, entry.text = entry.text, None
        try:
            data = text.encode("utf-8") if text is not None else entry.path.read_bytes()
        except OSError:
            super()._parse(entry, text)
            return
        self.digests[str(entry.path)] = digest = hashlib.sha256(data).hexdigest()
        shipped = _shipped_sources().get(digest)
        if shipped is not None and self._parse_shipped(entry, shipped):
            return
        if self._disk is None:
            super()._parse(entry, text)
            return
        key = f"crd-{digest}"
        versions = self._disk.get(key)
        if not isinstance(versions, list):
            problems = len(self.problems)
            found = self._read_versions(entry, text)
            first: dict[tuple[str, str], CrdVersion] = {}  # the first definition in the file wins
            for v in found or ():
                first.setdefault((v.api_version, v.kind), v)
            versions = [
                {
                    "group": v.group,
                    "version": v.version,
                    "kind": v.kind,
                    "plural": v.plural,
                    "scope": v.scope,
                    "schema": v.schema,
                }
                for v in first.values()
            ]
            if found is not None and len(self.problems) == problems:
                self._disk.put(key, versions)
        entry.parsed = True
        for item in versions:
            try:
                version = CrdVersion(source=str(entry.path), **item)
            except TypeError:
                continue
            self._by_key.setdefault((version.api_version, version.kind), version)

    def _parse_shipped(self, entry: Any, shipped: Path) -> bool:
        """Read the package's own JSON form of a CRD file that is byte for byte the source it was
        derived from (same sha256): the same CRD, without parsing megabytes of YAML."""
        from trainspec.check.schema.crds import _iter_crd_documents, _versions_of

        try:
            doc = json.loads(shipped.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        entry.parsed = True
        for crd in _iter_crd_documents(doc):
            for version in _versions_of(crd, str(entry.path)):
                self._by_key.setdefault((version.api_version, version.kind), version)
        return True


_SHIPPED: dict[str, Path] | None = None


def _shipped_sources() -> dict[str, Path]:
    """sha256 of a source CRD file -> the shipped JSON derived from it (:mod:`.schema.vendored`)."""
    global _SHIPPED
    if _SHIPPED is None:
        from trainspec.check.schema.vendored import DATA_DIR, read_index

        found: dict[str, Path] = {}
        try:
            index = read_index(DATA_DIR)
            for bundle in index.get("bundles") or ():
                for crd in bundle.get("crds") or ():
                    if isinstance(crd.get("sha256"), str) and isinstance(crd.get("file"), str):
                        found[crd["sha256"]] = DATA_DIR / crd["file"]
        except (OSError, ValueError, AttributeError):
            found = {}
        _SHIPPED = found
    return _SHIPPED


def crd_files(paths: Iterable[Path | str]) -> list[Path]:
    """CRD files under ``paths`` (directories recursively), as the checker reads them."""
    return expand_crd_paths(paths)


# -- CEL ------------------------------------------------------------------------------------------


class CachedCelEngine:
    """The process's CEL engine (:func:`trainspec.check.cel.validations.default_engine`), with ``flush()``.

    Nothing of CEL is kept on disk any more: cel-expr-python compiles a rule in ~0.1 ms and
    starts in ~2 ms, so a stored program would cost more to read than to build. (With the
    cel-python fallback the ~0.25 s parser is built once per process.) The class stays so that
    callers keep one shape for everything that may flush; ``cache`` is accepted and unused.
    """

    def __init__(self, cache: DiskCache | None = None) -> None:
        self._engine = default_engine()  # raises ImportError when no CEL engine is installed

    def compile(self, rule: str) -> Any:
        return self._engine.compile(rule)

    def evaluate(self, program: Any, activation: Mapping[str, Any]) -> bool:
        return self._engine.evaluate(program, activation)

    def evaluate_message(self, program: Any, activation: Mapping[str, Any]) -> str:
        """The engine's ``messageExpression`` evaluation."""
        # evaluate_message is optional in the CelEngine protocol; both engines trainspec ships have it.
        return str(self._engine.evaluate_message(program, activation))  # type: ignore[attr-defined]

    def flush(self) -> None:
        """Nothing to store (kept for callers that flush every cache at the end of a run)."""


# -- verdicts -------------------------------------------------------------------------------------


#: Libraries whose behaviour decides verdicts, as (module, distribution): the engines, what they use
#: (lark is cel-python's parser; protobuf carries cel-expr-python's timestamps and library types; re2
#: is the regex library's find()) and the structural schema step.
_LIBRARIES = (
    ("cel_expr_python", "cel-expr-python"),
    ("celpy", "cel-python"),
    ("lark", "lark"),
    ("google.protobuf", "protobuf"),
    ("re2", "google-re2"),
    ("jsonschema", "jsonschema"),
)


def _fingerprint() -> str:
    """What the checker's verdicts depend on besides the manifest and its CRD: the checker's own
    code (hashed by content), the engine that runs, and the libraries (versions, and their files'
    sizes and times, for copies changed in place)."""
    from trainspec.check.cel.engine_choice import distribution_version, engine_identity, findable

    # The engine decides CEL verdicts: which one runs, and which release, is part of the key.
    digest = hashlib.sha256(f"format {_FORMAT}\nengine {engine_identity()}\n".encode())
    checker = Path(__file__).parent  # the check package: every module of it decides verdicts
    # The checker's own modules, and those outside it that decide verdicts: the one quantity
    # parser (CEL quantity(), quantity patterns) and the Kubernetes facts (bounds, names).
    shared = [_module_file(name) for name in _SHARED_MODULES]
    for path in [*sorted(checker.rglob("*.py")), *shared]:
        digest.update(path.relative_to(checker.parent).as_posix().encode() + path.read_bytes())
    for module, distribution in _LIBRARIES:
        if not findable(module):
            digest.update(f"{module}: absent\n".encode())
            continue
        digest.update(f"{module}: {distribution_version(distribution)}\n".encode())
        for path in _library_files(module):
            stat = path.stat()
            digest.update(f"{module}/{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


#: The modules outside ``trainspec.check`` whose code decides verdicts (named, not globbed: a moved
#: module fails the fingerprint loudly instead of silently dropping out of the key).
_SHARED_MODULES = (
    "trainspec.dsl.framework.quantity",
    "trainspec.dsl.kube_facts",
    "trainspec.k8s.wellknown",
    "trainspec.k8s.name_rules",
)


def _module_file(name: str) -> Path:
    """The source file of module ``name``, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, name  # one of trainspec's own modules
    return Path(spec.origin)


def _library_files(module: str) -> list[Path]:
    """The top-level code files of ``module``, located without importing it (namespace packages, such
    as cel_expr_python, have no ``origin``: their directories are listed instead)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    directories = [Path(p) for p in spec.submodule_search_locations or ()]
    if not directories and spec.origin:
        directories = [Path(spec.origin).parent]
    try:
        return sorted(p for d in directories for p in d.iterdir() if p.suffix in (".py", ".so", ".pyd"))
    except OSError:
        return []


class VerdictCache:
    """Schema and CEL findings per (manifest, CRD source and content, checker, engine and libraries).

    A compiled spec that did not change gives the same manifests, so a repeated check needs
    neither jsonschema nor cel-python. Kept bounded: the most recent entries win.
    """

    LIMIT = 4000

    def __init__(self, cache: DiskCache, registry: CachedCrdRegistry) -> None:
        self._disk = cache
        self._registry = registry
        self._key = f"verdicts-{_fingerprint()}"
        self._entries: dict[str, Any] | None = None
        self._dirty = False

    def key_of(self, manifest: Mapping[str, Any]) -> str | None:
        """The entry key of ``manifest``: the fingerprint (checker, engine, libraries), the CRD its kind
        resolves to (source file and content digest) and the manifest; None when not cacheable."""
        api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return None
        from trainspec.check.schema.core_kinds import CORE_KINDS

        crd = self._registry.lookup(api_version, kind)
        if crd is not None:
            # Its file as well as its content: the same bytes under another path count as another CRD
            # file, so a stored verdict is only ever served for the file it was computed against.
            content = self._registry.digests.get(crd.source)
            source = None if content is None else f"{crd.source}\0{content}"
        else:  # core kinds are checked by the checker's own code; for other kinds the answer
            # (TS504, or which versions are served) depends on every CRD file: not cached
            source = "core" if (api_version, kind) in CORE_KINDS else None
        if source is None:
            return None
        try:
            text = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):
            return None
        return hashlib.sha256(f"{self._key}\n{source}\n{text}".encode()).hexdigest()

    def get(self, manifest: Mapping[str, Any]) -> list[Any] | None:
        """The stored findings for ``manifest``, or None."""
        from trainspec.dsl.codes import code_named
        from trainspec.dsl.diagnostics import Diagnostic, Severity

        key = self.key_of(manifest)
        if key is None:
            return None
        if self._entries is None:
            stored = self._disk.get(self._key)
            self._entries = stored if isinstance(stored, dict) else {}
        found = self._entries.get(key)
        if not isinstance(found, list):
            return None
        try:
            return [
                Diagnostic(
                    code=code_named(d["code"]),  # KeyError for a code no longer registered: a miss
                    message=d["message"],
                    severity=Severity(d["severity"]),
                    path=d["path"],
                    hint=d["hint"],
                )
                for d in found
            ]
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, manifest: Mapping[str, Any], findings: list[Any]) -> None:
        key = self.key_of(manifest)
        if key is None or self._entries is None or any(d.related or d.file for d in findings):
            return
        self._entries.pop(key, None)
        self._entries[key] = [
            {"code": d.code, "message": d.message, "severity": d.severity.value, "path": d.path, "hint": d.hint}
            for d in findings
        ]
        while len(self._entries) > self.LIMIT:
            self._entries.pop(next(iter(self._entries)))
        self._dirty = True

    def flush(self) -> None:
        if self._dirty and self._entries is not None:
            self._disk.put(self._key, self._entries)
            self._dirty = False


__all__ = [
    "ENV_NO_CACHE",
    "CachedCelEngine",
    "CachedCrdRegistry",
    "DiskCache",
    "VerdictCache",
    "crd_files",
    "default_cache",
]
