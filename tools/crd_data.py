"""Derive the CRD data shipped in the package from the real CRDs (the project's own generator).

Run through ``python -m tools.regenerate [--crds DIR] [--check]``.

For each bundle of :data:`BUNDLES` (Trainer, the JobSet that Trainer installs, Kueue), every
CRD file of its folder becomes one compact JSON file in ``trainspec/check/schema/data/``: a CRD
document that keeps what the checker decides verdicts with (structure, types, formats, enums,
required fields, defaults, list and map types, CEL rules with their messages, reasons and
field paths, subresources) and drops all upstream prose (every ``description``, titles,
examples, printer columns, deprecation warnings, annotations). ``index.json`` says which
versions are shipped and for which target. Output is deterministic (sorted keys, no
timestamps), so a test regenerates it and compares byte for byte.

A schema keyword the generator does not know is an error rather than silently shipped or
dropped: a new keyword may be prose or may decide verdicts, and someone has to decide which.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainspec.check.schema.vendored import DATA_DIR, FORMAT, INDEX

__all__ = [
    "BUNDLES",
    "DATA_DIR",
    "GENERATOR",
    "Source",
    "VendorError",
    "dumps",
    "generate",
    "stale",
    "strip_schema",
    "vendored_crd",
    "write",
]

#: What ``index.json`` says made the data.
GENERATOR = "python -m tools.regenerate"


@dataclass(frozen=True)
class Source:
    """Where the CRDs of one project at one version come from, and the target they serve."""

    name: str  # also the folder under --from
    product: str  # what users call it
    version: str  # minor version, as in --target
    target: tuple[str, str] | None  # (target field, version): used when the target has this version;
    # None: the one version trainspec emits for (KubeRay, the v1 operators), used for every target
    source: str  # where the CRD files come from (for the docs and the index)
    only: tuple[str, ...] = ()  # the CRD files to ship from the folder (empty: all of them)


#: What is shipped. JobSet follows the Trainer version: Trainer's controller installs and pins it.
BUNDLES: tuple[Source, ...] = (
    Source(
        "trainer",
        "Kubeflow Trainer",
        "2.3",
        ("trainer", "2.3"),
        "kubeflow/trainer manifests/base/crds at 8c0f5059 (v2.3.0 schemas plus three stricter minimums)",
    ),
    Source(
        "jobset",
        "JobSet",
        "0.12",
        ("trainer", "2.3"),
        "kubernetes-sigs/jobset config/components/crd/bases at 08dfbdfd (v0.12.0 plus one minimum), "
        "the JobSet Trainer 2.3 pins",
    ),
    Source(
        "kueue",
        "Kueue",
        "0.19",
        ("kueue", "0.19"),
        "kubernetes-sigs/kueue config/components/crd/bases at ff69552e (v0.19.2 schemas, close variants)",
    ),
    # The other engines trainspec emits for (--target ray, --target training-operator): one version each.
    Source("kuberay", "KubeRay", "1.7", None, "ray-project/kuberay CRDs of release 1.7", only=("ray.io_rayjobs.yaml",)),
    Source(
        "training-operator",
        "Kubeflow Training Operator",
        "1.9",
        None,
        "kubeflow/training-operator CRDs of release 1.9.4 (the kinds trainspec emits)",
        only=("kubeflow.org_pytorchjobs.yaml", "kubeflow.org_jaxjobs.yaml"),
    ),
    Source("mpi-operator", "mpi-operator", "0.8", None, "kubeflow/mpi-operator CRD of release 0.8 (v2beta1)"),
)

# JSON Schema keywords of a CRD (apiextensions v1 JSONSchemaProps), split by what happens to them.
_PROSE = frozenset({"description", "title", "example", "externalDocs", "$schema", "id"})
_VALUE = frozenset(
    {
        "type",
        "format",
        "default",
        "enum",
        "required",
        "pattern",
        "nullable",
        "maximum",
        "minimum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "multipleOf",
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxProperties",
        "minProperties",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
    }
)
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "definitions"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf"})
_SCHEMA_ONE = frozenset({"not"})
_SCHEMA_OR_BOOL = frozenset({"additionalProperties", "additionalItems"})
_RULE_KEYS = frozenset({"rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"})
_VERSION_KEYS = ("name", "served", "storage", "deprecated", "subresources")
_NAMES_KEYS = ("kind", "listKind", "plural", "singular", "shortNames", "categories")


class VendorError(Exception):
    """The source CRDs cannot be turned into shipped data (unknown keyword, bad file)."""


def strip_schema(node: Any, where: str = "") -> Any:
    """``node`` (an openAPIV3Schema) without prose; raises :class:`VendorError` on unknown keywords."""
    if not isinstance(node, Mapping):
        raise VendorError(f"{where or 'schema'}: a schema must be a mapping, got {type(node).__name__}")
    out: dict[str, Any] = {}
    for key, value in node.items():
        at = f"{where}.{key}" if where else key
        if key in _PROSE:
            continue
        if key in _VALUE:
            out[key] = value  # data, not schemas: a default may hold a key named "description"
        elif key in _SCHEMA_MAPS:
            out[key] = {name: strip_schema(sub, f"{at}.{name}") for name, sub in value.items()}
        elif key in _SCHEMA_LISTS:
            out[key] = [strip_schema(sub, f"{at}[{i}]") for i, sub in enumerate(value)]
        elif key in _SCHEMA_ONE:
            out[key] = strip_schema(value, at)
        elif key in _SCHEMA_OR_BOOL:
            out[key] = value if isinstance(value, bool) else strip_schema(value, at)
        elif key == "items":
            out[key] = (
                [strip_schema(sub, f"{at}[{i}]") for i, sub in enumerate(value)]
                if isinstance(value, list)
                else strip_schema(value, at)
            )
        elif key == "dependencies":
            out[key] = {
                name: sub if isinstance(sub, list) else strip_schema(sub, f"{at}.{name}") for name, sub in value.items()
            }
        elif key == "x-kubernetes-validations":
            out[key] = [_strip_rule(rule, f"{at}[{i}]") for i, rule in enumerate(value)]
        else:
            raise VendorError(
                f"{at}: unknown schema keyword {key!r}: decide in tools.crd_data "
                "whether it is prose (dropped) or decides verdicts (kept)"
            )
    return out


def _strip_rule(rule: Any, where: str) -> dict[str, Any]:
    if not isinstance(rule, Mapping) or not isinstance(rule.get("rule"), str):
        raise VendorError(f"{where}: a validation rule must be a mapping with a 'rule'")
    unknown = sorted(set(rule) - _RULE_KEYS)
    if unknown:
        raise VendorError(f"{where}: unknown validation rule field(s) {', '.join(unknown)}")
    return dict(rule)


def vendored_crd(crd: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The shipped form of one CRD document."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    if not isinstance(spec.get("group"), str) or not isinstance(names.get("kind"), str):
        raise VendorError(f"{where}: not a CustomResourceDefinition with spec.group and spec.names.kind")
    versions = []
    for entry in spec.get("versions") or ():
        version = {key: entry[key] for key in _VERSION_KEYS if key in entry}
        schema = (entry.get("schema") or {}).get("openAPIV3Schema")
        if schema is not None:
            version["schema"] = {"openAPIV3Schema": strip_schema(schema, f"{where}: {entry.get('name')}")}
        versions.append(version)
    out_spec: dict[str, Any] = {
        "group": spec["group"],
        "names": {key: names[key] for key in _NAMES_KEYS if key in names},
        "scope": spec.get("scope", "Namespaced"),
        "versions": versions,
    }
    if "preserveUnknownFields" in spec:
        out_spec["preserveUnknownFields"] = spec["preserveUnknownFields"]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": str((crd.get("metadata") or {}).get("name", ""))},
        "spec": out_spec,
    }


def dumps(data: Any) -> str:
    """The one serialisation of shipped data: compact, sorted keys, ASCII, final newline."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n"


def _crd_documents(path: Path) -> list[Mapping[str, Any]]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        docs = list(yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise VendorError(f"{path}: cannot be read: {exc}") from exc
    crds = [d for d in docs if isinstance(d, Mapping) and d.get("kind") == "CustomResourceDefinition"]
    if len(crds) != 1:
        raise VendorError(f"{path}: expected exactly one CustomResourceDefinition, found {len(crds)}")
    return crds


def generate(source: Path, bundles: Sequence[Source] = BUNDLES) -> dict[str, str]:
    """File name -> content of the shipped data derived from the CRD folders under ``source``."""
    files: dict[str, str] = {}
    index: list[dict[str, Any]] = []
    for bundle in bundles:
        folder = source / bundle.name
        paths = (
            sorted(p for p in folder.glob("*.y*ml") if p.is_file() and (not bundle.only or p.name in bundle.only))
            if folder.is_dir()
            else []
        )
        if not paths:
            raise VendorError(f"{folder}: no CRD files for {bundle.product} {bundle.version}")
        crds = []
        for path in paths:
            (crd,) = _crd_documents(path)
            name = f"{path.stem}.json"
            if name in files:
                raise VendorError(f"{path}: {name} is produced twice")
            data = vendored_crd(crd, str(path))
            files[name] = dumps(data)
            crds.append(
                {
                    "file": name,
                    "group": data["spec"]["group"],
                    "kind": data["spec"]["names"]["kind"],
                    "from": f"{bundle.name}/{path.name}",
                    "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                }
            )
        index.append(
            {
                "name": bundle.name,
                "product": bundle.product,
                "version": bundle.version,
                "target": dict([bundle.target]) if bundle.target else {},
                "source": bundle.source,
                "crds": crds,
            }
        )
    files[INDEX] = dumps({"format": FORMAT, "generator": GENERATOR, "bundles": index})
    return files


def write(files: Mapping[str, str], out: Path) -> list[str]:
    """Write ``files`` into ``out``; remove shipped files of an older index that are gone. Returns
    the names that changed."""
    out.mkdir(parents=True, exist_ok=True)
    old = _listed(out / INDEX)
    changed = []
    for name, text in sorted(files.items()):
        path = out / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            tmp = path.with_name(f".{name}.tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
            changed.append(name)
    for name in sorted(old - set(files)):  # only what the generator itself wrote before
        (out / name).unlink(missing_ok=True)
        changed.append(name)
    return changed


def stale(files: Mapping[str, str], out: Path) -> list[str]:
    """Names whose content under ``out`` differs from ``files`` (or is missing, or extra)."""
    differ = [
        name
        for name, text in sorted(files.items())
        if not (out / name).is_file() or (out / name).read_text(encoding="utf-8") != text
    ]
    return differ + sorted(_listed(out / INDEX) - set(files))


def _listed(index: Path) -> set[str]:
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
        return {crd["file"] for bundle in data["bundles"] for crd in bundle["crds"]}
    except (OSError, ValueError, KeyError, TypeError):
        return set()
