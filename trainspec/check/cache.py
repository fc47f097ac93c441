"""An optional on-disk cache that keeps a cold ``trainspec check`` close to ``validate``.

Three things dominate a cold check against real CRDs: parsing megabytes of CRD YAML
(~0.15 s), building cel-python's LALR parser (~0.2 s) and importing jsonschema and cel-python
(~0.15 s). The results are plain data, kept as JSON (never pickle) under
``$XDG_CACHE_HOME/trainspec`` (default ``~/.cache/trainspec``):

* ``crd-<sha256 of the CRD file>.json``: the served versions of the CRDs in that file;
* ``cel-trees-<grammar digest>.json``: CEL rule text -> parse tree. When every rule a check
  needs is cached, celpy's parser is never built at all;
* ``verdicts-<fingerprint>.json``: schema and CEL findings per manifest (:class:`VerdictCache`),
  so unchanged manifests need neither jsonschema nor cel-python.

The cache is never needed for correctness: entries are keyed by content (a changed CRD file
is a new key), any unreadable or malformed entry is ignored and rebuilt, writes are atomic,
and ``TRAINSPEC_NO_CACHE=1`` turns it off. It lives here because it only serves ``check``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from trainspec.check.cel import _MACROS, CelCompileError, CelPyEngine
from trainspec.check.crds import CrdRegistry, CrdVersion, expand_crd_paths

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
        if entry.parsed or self._disk is None:
            super()._parse(entry, text)
            return
        try:
            data = text.encode("utf-8") if text is not None else entry.path.read_bytes()
        except OSError:
            super()._parse(entry, text)
            return
        self.digests[str(entry.path)] = digest = hashlib.sha256(data).hexdigest()
        key = f"crd-{digest}"
        versions = self._disk.get(key)
        if not isinstance(versions, list):
            single = CrdRegistry([entry.path])
            single.load_all()
            self.problems.extend(single.problems)
            versions = [{"group": v.group, "version": v.version, "kind": v.kind, "plural": v.plural,
                         "scope": v.scope, "schema": v.schema} for v in single]
            if not single.problems:
                self._disk.put(key, versions)
        entry.parsed = True
        for item in versions:
            try:
                version = CrdVersion(source=str(entry.path), **item)
            except TypeError:
                continue
            self._by_key.setdefault((version.api_version, version.kind), version)


def crd_files(paths: Iterable[Path | str]) -> list[Path]:
    """CRD files under ``paths`` (directories recursively), as the checker reads them."""
    return expand_crd_paths(paths)


# -- CEL ------------------------------------------------------------------------------------------


def _encode(node: Any) -> Any:
    """A parse tree as compact JSON: a token is ``"TYPE:value"``, a tree ``[data, line, column, *children]``."""
    import lark

    if isinstance(node, lark.Token):
        return f"{node.type}:{node}"
    meta = node.meta
    line, column = (None, None) if meta.empty else (meta.line, meta.column)
    return [str(node.data), line, column, *(_encode(child) for child in node.children)]


def _decoder() -> Any:
    from lark import Token, Tree

    def decode(data: Any) -> Any:
        if isinstance(data, str):
            kind, _, value = data.partition(":")
            return Token(kind, value)
        tree = Tree(data[0], [decode(child) for child in data[3:]])
        if data[1] is not None:  # celpy reports the position of evaluation errors
            tree.meta.line, tree.meta.column, tree.meta.empty = data[1], data[2], False
        return tree

    return decode


def _grammar_digest(celpy: Any) -> str:
    """Trees depend on celpy's grammar and lark: key the cache by both."""
    import lark

    try:
        grammar = (Path(celpy.__file__).parent / "cel.lark").read_bytes()
    except OSError:
        grammar = b""
    return hashlib.sha256(grammar + lark.__version__.encode()).hexdigest()[:16]


class _RunnerEnvironment:
    """What a celpy Runner reads from its Environment (package and annotations), without the
    parser that ``celpy.Environment()`` builds eagerly."""

    def __init__(self, annotations: dict[str, Any]) -> None:
        self.package = None
        self.annotations = annotations


class CachedCelEngine(CelPyEngine):
    """:class:`CelPyEngine` with parse trees from the cache; celpy's parser is built on a miss only.

    Evaluation, value conversion and the Kubernetes function shims are the base class's.
    """

    def __init__(self, cache: DiskCache | None) -> None:
        # Not CelPyEngine.__init__: it builds the parser (~0.2 s) that a warm cache avoids.
        import celpy

        from trainspec.check import cel_lib

        self._celpy = celpy
        self._functions = cel_lib.FUNCTIONS
        self._known = frozenset(celpy.evaluation.base_functions) | frozenset(cel_lib.FUNCTIONS) | _MACROS
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._disk = cache
        self._key = f"cel-trees-{_grammar_digest(celpy)}"
        self._trees: dict[str, Any] | None = None
        self._dirty = False
        self._parser_env: Any = None
        self._runner_env = _RunnerEnvironment(dict(celpy.googleapis))

    def _tree(self, rule: str) -> Any:
        if self._trees is None:
            stored = self._disk.get(self._key) if self._disk is not None else None
            self._trees = stored if isinstance(stored, dict) else {}
        cached = self._trees.get(rule)
        if isinstance(cached, list):
            try:
                return _decoder()(cached)
            except (IndexError, TypeError, ValueError):
                pass
        if self._parser_env is None:
            self._parser_env = self._celpy.Environment()
        try:
            tree = self._parser_env.compile(rule)
        except Exception as exc:  # CELParseError and lark errors
            raise CelCompileError(f"syntax error: {str(exc).splitlines()[0][:200] if str(exc) else exc}") from exc
        self._trees[rule] = _encode(tree)
        self._dirty = True
        return tree

    def _compile(self, rule: str) -> Any:
        tree = self._tree(rule)
        unknown = sorted(self._called_names(tree) - self._known)
        if unknown:
            raise CelCompileError(
                f"undeclared function(s) {', '.join(unknown)} (not supported by the offline engine)")
        return self._celpy.InterpretedRunner(self._runner_env, tree, self._functions)

    def flush(self) -> None:
        """Store newly parsed rules (call once at the end of a run)."""
        if self._dirty and self._disk is not None and self._trees is not None:
            self._disk.put(self._key, self._trees)
            self._dirty = False


# -- verdicts -------------------------------------------------------------------------------------


def _fingerprint() -> str:
    """What the checker's verdicts depend on besides the manifest and its CRD: the checker's own
    code (hashed by content) and the libraries it runs on (their files' sizes and times)."""
    import importlib.util

    import trainspec.check as check

    digest = hashlib.sha256(f"format {_FORMAT}".encode())
    package = Path(check.__file__).parents[1]
    # The checker's own modules, and those outside it that decide verdicts: the one quantity
    # parser (CEL quantity(), quantity patterns) and the Kubernetes facts (bounds, names).
    shared = [package / "dsl" / "quantity.py", package / "dsl" / "wellknown.py", package / "k8s" / "wellknown.py"]
    for path in [*sorted(Path(check.__file__).parent.glob("*.py")), *shared]:
        digest.update(path.name.encode() + path.read_bytes())
    for module in ("celpy", "jsonschema", "lark"):
        spec = importlib.util.find_spec(module)  # locates without importing
        if spec is None or not spec.origin:
            continue
        for path in sorted(Path(spec.origin).parent.glob("*.py")):
            stat = path.stat()
            digest.update(f"{module}/{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


class VerdictCache:
    """Schema and CEL findings per (manifest, CRD file content, checker and libraries).

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

    def _manifest_key(self, manifest: Mapping[str, Any]) -> str | None:
        api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return None
        from trainspec.check.core import CORE_KINDS

        crd = self._registry.lookup(api_version, kind)
        if crd is not None:
            crd_digest = self._registry.digests.get(crd.source)
        else:  # core kinds are checked by the checker's own code; for other kinds the answer
            # (TS504, or which versions are served) depends on every CRD file: not cached
            crd_digest = "core" if (api_version, kind) in CORE_KINDS else None
        if crd_digest is None:
            return None
        try:
            text = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):
            return None
        return hashlib.sha256(f"{crd_digest}\n{text}".encode()).hexdigest()

    def get(self, manifest: Mapping[str, Any]) -> list[Any] | None:
        """The stored findings for ``manifest``, or None."""
        from trainspec.dsl.diagnostics import Diagnostic, Severity

        key = self._manifest_key(manifest)
        if key is None:
            return None
        if self._entries is None:
            stored = self._disk.get(self._key)
            self._entries = stored if isinstance(stored, dict) else {}
        found = self._entries.get(key)
        if not isinstance(found, list):
            return None
        try:
            return [Diagnostic(code=d["code"], message=d["message"], severity=Severity(d["severity"]),
                               path=d["path"], hint=d["hint"]) for d in found]
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, manifest: Mapping[str, Any], findings: list[Any]) -> None:
        key = self._manifest_key(manifest)
        if key is None or self._entries is None or any(d.related or d.file for d in findings):
            return
        self._entries.pop(key, None)
        self._entries[key] = [{"code": d.code, "message": d.message, "severity": d.severity.value,
                               "path": d.path, "hint": d.hint} for d in findings]
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
