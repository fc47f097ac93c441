"""The schemas the model generator reads, and the paths into them.

Sources are the CRD files (their storage version, read once per file) and the committed
descriptions ``core.json`` and ``manual.json`` beside this module, whose roots map a class name to
its schema. A path is ``source:dotted.wire.path`` (see :mod:`tools.k8s_models.vocabulary`);
:func:`resolve_paths` gives every configured class one, from the few the configuration names.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tools.k8s_models.vocabulary import Field, Module

__all__ = [
    "CORE_JSON",
    "MANUAL_JSON",
    "GenerationError",
    "as_field",
    "load_sources",
    "resolve_paths",
    "schema_at",
    "wire_name",
]

HERE = Path(__file__).resolve().parent
CORE_JSON = HERE / "core.json"
MANUAL_JSON = HERE / "manual.json"


class GenerationError(ValueError):
    """The configuration and the schemas disagree (a renamed field, a missing path...)."""


@functools.lru_cache(maxsize=32)
def _storage_schema(path: Path) -> dict[str, Any]:
    """The storage version's schema of one CRD file (cached: treat it as read-only)."""
    import yaml  # generation only: never on the CLI's start-up path

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506  (a safe loader)
    versions = doc["spec"]["versions"]
    version = next((v for v in versions if v.get("storage")), versions[0])
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def load_sources(crds: Path | None, files: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Source name -> root schema: the CRDs under ``crds`` (storage version) named in ``files``
    and the committed ``core`` / ``manual`` descriptions (whose roots map class -> schema)."""
    sources: dict[str, dict[str, Any]] = {}
    if crds is not None:
        for name, rel in files.items():
            sources[name] = _storage_schema(crds / rel)
    for name, path in (("core", CORE_JSON), ("manual", MANUAL_JSON)):
        if path.is_file():
            sources[name] = {"properties": json.loads(path.read_text(encoding="utf-8"))}
    return sources


def _walk(node: dict[str, Any], path: str, where: str) -> dict[str, Any]:
    for segment in filter(None, path.split(".")):
        name = segment.rstrip("[]{}")
        props = node.get("properties") or {}
        if name not in props:
            raise GenerationError(f"{where}: no property {name!r} (have {sorted(props)})")
        node = props[name]
        for suffix in segment[len(name) :].replace("[]", "[").replace("{}", "{"):
            key = "items" if suffix == "[" else "additionalProperties"
            if key not in node:
                raise GenerationError(f"{where}: {name!r} has no {key}")
            node = node[key]
    return node


def schema_at(sources: dict[str, dict[str, Any]], path: str) -> dict[str, Any]:
    """The schema node at ``path`` (``source:dotted.wire.path``) among the loaded ``sources``."""
    source, _, rest = path.partition(":")
    if source not in sources:
        raise GenerationError(f"{path}: source {source!r} is not loaded")
    return _walk(sources[source], rest, path)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def wire_name(name: str, props: dict[str, Any], where: str) -> tuple[str, bool]:
    """The field's wire name and whether it differs from the derived camelCase."""
    camel = _camel(name)
    if camel in props:
        return camel, False
    # Acronyms: enableDNSHostnames, runtimeEnvYAML.
    matches = [p for p in props if p.lower() == camel.lower()]
    if len(matches) == 1:
        return matches[0], True
    raise GenerationError(f"{where}: no property for field {name!r} (have {sorted(props)})")


def as_field(spec: str | Field) -> Field:
    """A configured field as a :class:`Field` (the configuration may give a bare name)."""
    return spec if isinstance(spec, Field) else Field(spec)


def _step(prop: dict[str, Any]) -> str:
    """The path suffix that reaches the object inside a property (list items, map values)."""
    if prop.get("type") == "array":
        return "[]" + _step(prop.get("items") or {})
    if prop.get("type") == "object" and "additionalProperties" in prop and "properties" not in prop:
        return "{}" + _step(prop["additionalProperties"])
    return ""


def resolve_paths(
    modules: Iterable[Module], sources: dict[str, dict[str, Any]], default: dict[str, str] | None = None
) -> dict[str, str]:
    """Class name -> schema path: explicit paths, ``default``s, else the path of the first field
    that refers to the class (so the configuration only names the roots)."""
    modules = list(modules)
    classes = [c for m in modules for c in m.classes]
    owner = {c.name: m.name for m in modules for c in m.classes}
    paths = {c.name: c.path for c in classes if c.path}
    for name, path in (default or {}).items():
        paths.setdefault(name, path)
    changed = True
    while changed:
        changed = False
        for cls in classes:
            if cls.name not in paths or paths[cls.name].partition(":")[0] not in sources:
                continue  # not loaded (no CRDs given): its module is not generated
            node = schema_at(sources, paths[cls.name])
            props = node.get("properties") or {}
            for spec in map(as_field, cls.fields):
                # Only within a module: another module's class has its own root.
                if spec.ref and spec.ref not in paths and owner.get(spec.ref) == owner[cls.name]:
                    wire, _ = wire_name(spec.name, props, f"{cls.name}.{spec.name}")
                    paths[spec.ref] = f"{paths[cls.name]}.{wire}{_step(props[wire])}"
                    changed = True
    missing = [c.name for c in classes if c.name not in paths]
    if missing and all(p.partition(":")[0] in sources for p in paths.values()):
        raise GenerationError(f"no schema path for {missing}: give them a path")
    return paths
