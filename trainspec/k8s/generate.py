"""Generates the typed model modules of :mod:`trainspec.k8s` from the CRDs.

    python -m trainspec.k8s.generate --crds ../shared/crds            # rewrite the modules
    python -m trainspec.k8s.generate --crds ../shared/crds --check    # exit 1 if any is stale
    python -m trainspec.k8s.generate --crds ../shared/crds --derive-core

The configuration (:mod:`trainspec.k8s._gen.config`) names each class, where its schema is and
its fields in emission order; the schema gives wire names, scalar types, int-or-string, enums,
list/map wrappers and required fields. Core kinds have no CRD: ``--derive-core`` extracts the
sub-trees trainspec emits from the pod and PVC templates embedded in the JobSet CRD (which carry
the full core schemas), drops every description, adds the enums the Kubernetes API documents but
the embedded schemas leave out, and writes ``_gen/core.json``. A few pieces no CRD carries
(top-level ObjectMeta, OwnerReference, Trainer v2.1 overrides) are in ``_gen/manual.json``.
Generated modules are frozen slotted dataclasses, like the hand-written ones they replaced:
the cheapest typed structs to import among those measured (see docs/k8s-models.md).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trainspec.k8s._gen.spec import Cls, Field, Module

__all__ = ["GenerationError", "derive_core", "generate", "load_sources", "main"]

HERE = Path(__file__).resolve().parent
GEN = HERE / "_gen"
CORE_JSON = GEN / "core.json"
MANUAL_JSON = GEN / "manual.json"
REGENERATE = "python -m trainspec.k8s.generate --crds ../shared/crds"


class GenerationError(ValueError):
    """The configuration and the schemas disagree (a renamed field, a missing path...)."""


# --- sources and paths ------------------------------------------------------------------------


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


def _node(sources: dict[str, dict[str, Any]], path: str) -> dict[str, Any]:
    source, _, rest = path.partition(":")
    if source not in sources:
        raise GenerationError(f"{path}: source {source!r} is not loaded")
    return _walk(sources[source], rest, path)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _wire(name: str, props: dict[str, Any], where: str) -> tuple[str, bool]:
    """The field's wire name and whether it differs from the derived camelCase."""
    camel = _camel(name)
    if camel in props:
        return camel, False
    # Acronyms: enableDNSHostnames, runtimeEnvYAML.
    matches = [p for p in props if p.lower() == camel.lower()]
    if len(matches) == 1:
        return matches[0], True
    raise GenerationError(f"{where}: no property for field {name!r} (have {sorted(props)})")


def _field(spec: str | Field) -> Field:
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
            node = _node(sources, paths[cls.name])
            props = node.get("properties") or {}
            for spec in map(_field, cls.fields):
                # Only within a module: another module's class has its own root.
                if spec.ref and spec.ref not in paths and owner.get(spec.ref) == owner[cls.name]:
                    wire, _ = _wire(spec.name, props, f"{cls.name}.{spec.name}")
                    paths[spec.ref] = f"{paths[cls.name]}.{wire}{_step(props[wire])}"
                    changed = True
    missing = [c.name for c in classes if c.name not in paths]
    if missing and all(p.partition(":")[0] in sources for p in paths.values()):
        raise GenerationError(f"no schema path for {missing}: give them a path")
    return paths


# --- annotations -------------------------------------------------------------------------------


class _Context:
    """What a module's code needs: imports, aliases, typing names."""

    def __init__(self, module: Module, owners: dict[str, str], enums: dict[str, tuple[str, ...]]) -> None:
        self.module = module
        self.enums = enums
        self.owners = owners
        self.imports: dict[str, set[str]] = {}
        self.aliases: dict[str, str] = {}
        self.typing: set[str] = set()
        self.wire_fields = False

    def use(self, name: str) -> str:
        owner = self.owners.get(name)
        if owner is not None and owner != self.module.name:
            self.imports.setdefault(owner, set()).add(name)
        return name


def _literal(values: list[Any], ctx: _Context) -> str:
    ctx.typing.add("Literal")
    return "Literal[" + ", ".join(json.dumps(v) for v in values) + "]"


def _annotation(prop: dict[str, Any], spec: Field, ctx: _Context, where: str) -> str:
    if prop.get("x-kubernetes-int-or-string") or any(alt.get("type") == "integer" for alt in prop.get("anyOf") or ()):
        # A quantity (requests, sizes) has the quantity pattern; a port or count does not.
        return ctx.use("Quantity") if "pattern" in prop else "int | str"
    kind = prop.get("type")
    if kind == "array":
        return f"list[{_annotation(prop.get('items') or {}, spec, ctx, where)}]"
    if kind == "object":
        extra = prop.get("additionalProperties")
        if isinstance(extra, dict) and "properties" not in prop:
            return f"dict[str, {_annotation(extra, spec, ctx, where)}]"
        if spec.ref is None:
            raise GenerationError(f"{where}: an object field needs a ref (a class name)")
        return ctx.use(spec.ref)
    if spec.ref is not None:
        raise GenerationError(f"{where}: ref {spec.ref} on a {kind} field")
    if "enum" in prop:
        literal = _literal(prop["enum"], ctx)
        if spec.alias:
            ctx.aliases[spec.alias] = literal
            return spec.alias
        return literal
    if spec.alias:
        raise GenerationError(f"{where}: alias {spec.alias} needs an enum in the schema")
    scalar = {"string": "str", "integer": "int", "boolean": "bool", "number": "float"}.get(kind or "")
    if scalar is None:
        raise GenerationError(f"{where}: unsupported schema type {kind!r}")
    return scalar


# --- rendering ---------------------------------------------------------------------------------

_DATACLASS = "@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)"


def _docstring(text: str, indent: str) -> str:
    lines = text.strip().splitlines()
    if len(lines) == 1:
        return f'{indent}"""{lines[0]}"""'
    body = "\n".join((indent + line) if line else "" for line in lines[1:])
    return f'{indent}"""{lines[0]}\n{body}\n{indent}"""'


def _field_line(name: str, annotation: str, required: bool, wire: str | None) -> str:
    value: str | None
    if wire is not None:
        value = (
            f'field(metadata={{"wire": "{wire}"}})'
            if required
            else f'field(default=None, metadata={{"wire": "{wire}"}})'
        )
    else:
        value = None if required else "None"
    if not required:
        annotation = f"{annotation} | None"
    line = f"    {name}: {annotation}" + (f" = {value}" if value else "")
    if len(line) <= 100:
        return line
    if len(annotation) > 90 and annotation.startswith("Literal["):
        # One value a line, like a formatter would.
        inner, _, rest = annotation[len("Literal[") :].partition("]")
        values = "".join(f"            {v.strip()},\n" for v in inner.split(","))
        annotation = f"Literal[\n{values}        ]{rest}"
    return f"    {name}: (\n        {annotation}\n    )" + (f" = {value}" if value else "")


def _render_class(cls: Cls, node: dict[str, Any], ctx: _Context) -> str:
    props = node.get("properties") or {}
    required_wires = set(node.get("required") or ())
    base = "Resource" if cls.resource else "Model"
    out = ["", "", _DATACLASS, f"class {cls.name}({base}):", _docstring(cls.doc, "    ")]
    if cls.resource:
        ctx.typing.add("ClassVar")
        api_version, kind = cls.resource
        if api_version.isidentifier() and api_version not in {n for _, n in ctx.module.reexports}:
            ctx.imports.setdefault("wellknown", set()).add(api_version)
        out += ["", f"    api_version: ClassVar[str] = {api_version}", f"    kind: ClassVar[str] = {json.dumps(kind)}"]
    if cls.fields:
        out.append("")
    for spec in map(_field, cls.fields):
        where = f"{cls.name}.{spec.name}"
        wire, renamed = _wire(spec.name, props, where)
        prop = _with_enum(props[wire], ctx.enums.get(f"{cls.name}.{wire}"))
        annotation = spec.type or _annotation(prop, spec, ctx, where)
        if spec.type and spec.ref:
            ctx.use(spec.ref)
        required = spec.required if spec.required is not None else wire in required_wires
        if spec.required is None and cls.resource and spec.name in ("metadata", "spec"):
            required = True  # CRD roots require nothing; trainspec always sets both
        if renamed:
            ctx.wire_fields = True
        if spec.comment:
            out.append(f"    #: {spec.comment}")
        out.append(_field_line(spec.name, annotation, required, wire if renamed else None))
    return "\n".join(out)


def _with_enum(prop: dict[str, Any], enum: tuple[str, ...] | None) -> dict[str, Any]:
    """``prop`` with a documented enum the CRD leaves out (on the items of a list)."""
    if enum is None:
        return prop
    if prop.get("type") == "array":
        return {**prop, "items": _with_enum(prop.get("items") or {}, enum)}
    return prop if "enum" in prop else {**prop, "enum": list(enum)}


def _imports(ctx: _Context) -> list[str]:
    lines = ["from __future__ import annotations", ""]
    lines.append("from dataclasses import dataclass" + (", field" if ctx.wire_fields else ""))
    if ctx.typing:
        lines.append("from typing import " + ", ".join(sorted(ctx.typing)))
    lines.append("")
    bases = ["Model"] + (["Resource"] if any(c.resource for c in ctx.module.classes) else [])
    found = dict(ctx.imports)
    for owner, name in ctx.module.reexports:
        found.setdefault(owner, set()).add(name)
    lines.append(f"from trainspec.k8s.base import {', '.join(bases)}")
    for owner in sorted(found):
        line = f"from trainspec.k8s.{owner} import {', '.join(sorted(found[owner]))}"
        if len(line) > 100:
            line = f"from trainspec.k8s.{owner} import (\n" + "".join(f"    {n},\n" for n in sorted(found[owner])) + ")"
        lines.append(line)
    return lines


def _header(sources: Iterable[str]) -> str:
    return (
        "# Generated by trainspec.k8s.generate: do not edit.\n"
        f"# Schemas: {', '.join(sorted(set(sources)))} (see trainspec/k8s/_gen/config.py).\n"
        f"# Regenerate: {REGENERATE}\n"
    )


def public_names(module: Module) -> list[str]:
    """A generated module's ``__all__``."""
    return sorted({c.name for c in module.classes} | set(module.exports) | {name for _, name in module.reexports})


def render_module(
    module: Module,
    nodes: dict[str, dict[str, Any]],
    paths: dict[str, str],
    owners: dict[str, str],
    enums: dict[str, tuple[str, ...]],
) -> str:
    """The source text of one generated module (``enums``: ``Class.wire`` -> documented values)."""
    ctx = _Context(module, owners, enums)
    classes = [_render_class(cls, nodes[cls.name], ctx) for cls in module.classes]
    head = [
        _header(paths[c.name].partition(":")[0] for c in module.classes).rstrip("\n"),
        _docstring(module.doc, ""),
        "",
    ]
    body = [*_imports(ctx), "", "__all__ = ["]
    body += [f'    "{name}",' for name in public_names(module)] + ["]", ""]
    if module.preamble:
        body += [module.preamble.rstrip("\n"), ""]
    for name, literal in ctx.aliases.items():
        body.append(f"{name} = {literal}")
    if ctx.aliases:
        body.append("")
    return "\n".join(head + body).rstrip("\n") + "\n" + "\n".join(classes) + "\n"


BEGIN = "# BEGIN generated by trainspec.k8s.generate: the lazy export table. Do not edit."
END = "# END generated"


def render_exports(modules: Iterable[Module], static: dict[str, tuple[str, ...]], init: str) -> str:
    """``init`` (the text of ``trainspec/k8s/__init__.py``) with its generated block rewritten:
    submodule -> public names, the table ``trainspec.k8s`` re-exports lazily. A block in the
    package itself, not a module of its own, so importing ``trainspec.k8s`` loads nothing more."""
    table = dict(static)
    for module in modules:
        if module.lazy:
            table[module.name] = tuple(public_names(module))
    lines = [BEGIN, f"# Regenerate: {REGENERATE}", "_MODULES: dict[str, tuple[str, ...]] = {"]
    for name, names in table.items():
        lines.append(f'    "{name}": (')
        lines += [f'        "{n}",' for n in names]
        lines.append("    ),")
    lines += ["}", END]
    head, found, rest = init.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise GenerationError(f"trainspec/k8s/__init__.py has no {BEGIN!r} ... {END!r} block")
    return head + "\n".join(lines) + tail


# --- the two commands --------------------------------------------------------------------------


def generate(crds: Path | None) -> dict[str, str]:
    """File name (relative to ``trainspec/k8s``) -> generated text, for every configured module.

    Modules whose classes all come from the committed descriptions need no CRDs (``crds=None``
    generates only those)."""
    from trainspec.k8s._gen import config

    sources = load_sources(crds, config.CRD_FILES)
    modules = config.MODULES
    owners = {c.name: m.name for m in modules for c in m.classes}
    owners.update({name: m.name for m in modules for name in m.exports})
    defaults = {c.name: f"core:{c.name}" for m in modules if m.name in config.CORE_MODULES for c in m.classes}
    paths = resolve_paths(modules, sources, defaults)
    out: dict[str, str] = {}
    for module in modules:
        needed = {paths.get(c.name, "?:").partition(":")[0] for c in module.classes}
        if not needed <= set(sources):
            continue
        nodes = {c.name: _node(sources, paths[c.name]) for c in module.classes}
        out[f"{module.name}.py"] = render_module(module, nodes, paths, owners, config.API_ENUMS)
    if len(out) == len(modules):
        init = (HERE / "__init__.py").read_text(encoding="utf-8")
        out["__init__.py"] = render_exports(modules, config.STATIC_EXPORTS, init)
    return out


_KEEP = ("type", "enum", "x-kubernetes-int-or-string", "anyOf", "pattern", "format")


def _strip(prop: dict[str, Any], is_ref: bool) -> dict[str, Any]:
    """A property's schema without prose; a referenced object keeps only its wrappers."""
    out: dict[str, Any] = {k: prop[k] for k in _KEEP if k in prop}
    if "items" in prop:
        out["items"] = _strip(prop["items"], is_ref)
    if isinstance(prop.get("additionalProperties"), dict):
        out["additionalProperties"] = _strip(prop["additionalProperties"], is_ref)
    return out


def derive_core(crds: Path) -> str:
    """``core.json``: the core classes' schemas, pruned to the configured fields, no prose."""
    from trainspec.k8s._gen import config

    core = [m for m in config.MODULES if m.name in config.CORE_MODULES]
    sources = load_sources(crds, config.CRD_FILES)
    paths = resolve_paths(core, sources, config.CORE_ORIGINS)
    result: dict[str, Any] = {}
    for cls in (c for m in core for c in m.classes):
        node = _node(sources, paths[cls.name])
        props = node.get("properties") or {}
        kept: dict[str, Any] = {}
        for spec in map(_field, cls.fields):
            wire, _ = _wire(spec.name, props, f"{cls.name}.{spec.name}")
            kept[wire] = _strip(props[wire], spec.ref is not None)
            enum = config.CORE_ENUMS.get(f"{cls.name}.{wire}")
            if enum is not None:
                target = kept[wire]["items"] if kept[wire].get("type") == "array" else kept[wire]
                target["enum"] = list(enum)
        entry: dict[str, Any] = {"type": "object", "properties": kept}
        required = [w for w in node.get("required") or () if w in kept]
        if required:
            entry["required"] = required
        result[cls.name] = entry
    return json.dumps(result, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line: rewrite (or ``--check``) the generated modules, or ``--derive-core``."""
    parser = argparse.ArgumentParser(
        prog="python -m trainspec.k8s.generate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--crds", type=Path, required=True, help="folder of the CRDs (../shared/crds)")
    parser.add_argument("--out", type=Path, default=HERE, help="where to write (default: trainspec/k8s)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is stale")
    parser.add_argument("--derive-core", action="store_true", help="rewrite _gen/core.json from the CRDs")
    args = parser.parse_args(argv)
    try:
        files = {"_gen/core.json": derive_core(args.crds)} if args.derive_core else generate(args.crds)
    except (GenerationError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    stale = [
        name
        for name, text in files.items()
        if not (args.out / name).is_file() or (args.out / name).read_text(encoding="utf-8") != text
    ]
    if args.check:
        for name in stale:
            print(f"stale: {name}", file=sys.stderr)
        return 1 if stale else 0
    for name in stale:
        (args.out / name).parent.mkdir(parents=True, exist_ok=True)
        (args.out / name).write_text(files[name], encoding="utf-8")
        print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
