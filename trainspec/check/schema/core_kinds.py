"""Core kinds the compiler may emit next to custom resources, checked as the API server does.

Core kinds have no CRD: the API server validates them with built-in Go code. For
PersistentVolumeClaim (what trainspec emits for ``volumes``) that is reproduced here in two
layers, both reported as TS500 (the server's own validation, like a CRD's schema):

* a strict schema (:data:`PVC_SCHEMA`): field names, types, enums, quantity syntax, ObjectMeta;
* the rules of ``ValidatePersistentVolumeClaim`` (kubernetes ``pkg/apis/core/validation``),
  :func:`pvc_problems`: at least one access mode, ``ReadWriteOncePod`` alone, a storage request
  greater than zero, class names as DNS-1123 subdomains, data source references, the label
  selector. Values the schema already rejected (wrong type, unparsable quantity) are not judged
  again. A ``dataSource`` the server drops before validating (:func:`stored_data_source`) is a
  TS505 warning, not an error: the server accepts the claim, created empty.

The other core kinds listed in :data:`CORE_KINDS` are accepted without checking.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from trainspec.check._paths import render_path, short
from trainspec.check.schema.core_pieces import OBJECT_META
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.framework.quantity import QUANTITY_PATTERN, QuantityError, parse_quantity
from trainspec.k8s.name_rules import label_problem, label_value_problem, qualified_name_problem, subdomain_problem

_STRING = {"type": "string"}
_STRING_MAP = {"type": "object", "additionalProperties": _STRING}
_QUANTITY = {"type": ["string", "integer", "number"], "pattern": QUANTITY_PATTERN}
_RESOURCE_LIST = {"type": "object", "additionalProperties": _QUANTITY}
_LABEL_SELECTOR = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "matchLabels": _STRING_MAP,
        "matchExpressions": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["key", "operator"],
                "properties": {
                    "key": _STRING,
                    "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
                    "values": {"type": "array", "items": _STRING},
                },
            },
        },
    },
}
_TYPED_REF = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"apiGroup": _STRING, "kind": _STRING, "name": _STRING, "namespace": _STRING},
}
#: The access modes the API server supports (``supportedAccessModes``).
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")

#: Strict schema for core/v1 PersistentVolumeClaim. What is required (access modes, the storage
#: request) is left to :func:`pvc_problems`, which words it as the API server does.
PVC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata"],
    "properties": {
        "apiVersion": _STRING,
        "kind": _STRING,
        "metadata": OBJECT_META,
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                # No uniqueItems: the server accepts a mode listed twice.
                "accessModes": {"type": "array", "items": {"enum": list(ACCESS_MODES)}},
                "resources": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"requests": _RESOURCE_LIST, "limits": _RESOURCE_LIST},
                },
                "storageClassName": _STRING,
                "volumeMode": {"enum": ["Filesystem", "Block"]},
                "volumeName": _STRING,
                "volumeAttributesClassName": _STRING,
                "selector": _LABEL_SELECTOR,
                "dataSource": _TYPED_REF,
                "dataSourceRef": _TYPED_REF,
            },
        },
        "status": {"type": "object"},
    },
}

#: Core kinds accepted without a CRD: (apiVersion, kind) -> strict JSON Schema, or None = not checked.
CORE_KINDS: dict[tuple[str, str], dict[str, Any] | None] = {
    ("v1", "PersistentVolumeClaim"): PVC_SCHEMA,
    ("v1", "ConfigMap"): None,
    ("v1", "Secret"): None,
    ("v1", "Namespace"): None,
    ("v1", "ServiceAccount"): None,
    ("rbac.authorization.k8s.io/v1", "Role"): None,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): None,
}

Path = tuple[str | int, ...]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _error(path: Path, message: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code=codes.CRD_SCHEMA, message=message, path=render_path(path), hint=hint)


# -- PersistentVolumeClaim ------------------------------------------------------------------------


def pvc_problems(manifest: Mapping[str, Any]) -> Iterator[Diagnostic]:
    """The rules of the API server's ``ValidatePersistentVolumeClaimSpec`` for a create."""
    spec = _dict(manifest.get("spec"))
    base: Path = ("spec",)
    yield from _access_modes(spec.get("accessModes"), (*base, "accessModes"))
    yield from _storage_request(spec.get("resources"), (*base, "resources"))
    for field in ("storageClassName", "volumeAttributesClassName"):
        name = spec.get(field)
        if isinstance(name, str) and name:  # "" is allowed: no class
            problem = subdomain_problem(name)
            if problem:
                yield _error((*base, field), f"{field} {short(name)} {problem}")
    if isinstance(spec.get("selector"), dict):
        yield from _selector(spec["selector"], (*base, "selector"))
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, dict) and stored_data_source(spec) is None:
        # The API server drops it on create, and nothing else said about it would apply.
        yield Diagnostic(
            code=codes.FIELD_DROPPED,
            severity=Severity.WARNING,
            message=f"the API server drops this dataSource (kind {short(source.get('kind') or '')}): without "
            "dataSourceRef, a dataSource names a PersistentVolumeClaim or a snapshot.storage.k8s.io "
            "VolumeSnapshot, else the claim is created empty",
            path=render_path((*base, "dataSource")),
            hint="to fill the claim from another kind (a volume populator), use dataSourceRef; to clone a claim, "
            "set kind: PersistentVolumeClaim",
        )
        source = None
    if isinstance(source, dict):
        yield from _data_source(source, (*base, "dataSource"))
    if isinstance(ref, dict):
        yield from _data_source(ref, (*base, "dataSourceRef"))
        namespace = ref.get("namespace")
        if isinstance(namespace, str) and namespace:
            problem = label_problem(namespace)
            if problem:
                yield _error((*base, "dataSourceRef", "namespace"), f"namespace {short(namespace)} {problem}")
    if isinstance(source, dict) and isinstance(ref, dict):
        if ref.get("namespace"):
            yield _error(
                (*base, "dataSource"),
                "dataSource may not be specified when dataSourceRef.namespace is specified",
                "keep only dataSourceRef for a cross-namespace source",
            )
        elif any(source.get(k) != ref.get(k) for k in ("apiGroup", "kind", "name")):
            yield _error(
                (*base, "dataSource"),
                "dataSource must match dataSourceRef (apiGroup, kind and name)",
                "set one of them; the API server copies it to the other",
            )


#: What a dataSource may name without a dataSourceRef: (apiGroup, kind).
_LEGACY_DATA_SOURCES = (("", "PersistentVolumeClaim"), ("snapshot.storage.k8s.io", "VolumeSnapshot"))


def stored_data_source(spec: Mapping[str, Any]) -> Any:
    """``spec.dataSource`` as the API server stores a new claim: dropped (None) when there is no
    ``dataSourceRef`` and it names neither a PersistentVolumeClaim nor a VolumeSnapshot, a missing
    kind included (kubernetes pkg/api/persistentvolumeclaim EnforceDataSourceBackwardsCompatibility,
    which PrepareForCreate runs before validation: the claim is then created empty, without an error)."""
    source = spec.get("dataSource")
    if not isinstance(source, dict) or isinstance(spec.get("dataSourceRef"), dict):
        return source
    named = (source.get("apiGroup") or "", source.get("kind"))
    return source if named in _LEGACY_DATA_SOURCES else None


def _access_modes(modes: Any, path: Path) -> Iterator[Diagnostic]:
    if modes is None or (isinstance(modes, list) and not modes):
        yield _error(path, "at least 1 access mode is required", f"for example accessModes: [{ACCESS_MODES[0]}]")
        return
    if not isinstance(modes, list):
        return  # a schema error
    known = [m for m in modes if m in ACCESS_MODES]
    if "ReadWriteOncePod" in known and any(m != "ReadWriteOncePod" for m in known):
        yield _error(
            path,
            "may not use ReadWriteOncePod with other access modes",
            "ReadWriteOncePod stands alone: drop the other modes",
        )


def _storage_request(resources: Any, path: Path) -> Iterator[Diagnostic]:
    # The server's path is spec.resources[storage]; the value sits at resources.requests.storage.
    where = (*path, "requests", "storage")
    requests = _dict(_dict(resources).get("requests"))
    if "storage" not in requests:
        yield _error(
            where,
            "a storage request is required (spec.resources.requests.storage)",
            "request the claim's size, e.g. storage: 100Gi",
        )
        return
    value = requests["storage"]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return  # a schema error
    try:
        amount = parse_quantity(str(value)).value
    except QuantityError:
        return  # the schema's quantity pattern (or range) reports it
    if amount <= 0:
        yield _error(where, f"storage request {short(value)} must be greater than zero")


def _selector(selector: dict[str, Any], path: Path) -> Iterator[Diagnostic]:
    for key, value in _dict(selector.get("matchLabels")).items():
        problem = qualified_name_problem(str(key))
        if problem:
            yield _error((*path, "matchLabels", key), f"invalid label key {short(key)}: {problem}")
        if isinstance(value, str):
            problem = label_value_problem(value)
            if problem:
                yield _error((*path, "matchLabels", key), f"invalid label value {short(value)}: {problem}")
    expressions = selector.get("matchExpressions")
    for index, expression in enumerate(expressions if isinstance(expressions, list) else []):
        if not isinstance(expression, dict):
            continue
        at: Path = (*path, "matchExpressions", index)
        label_key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values")
        if isinstance(label_key, str):
            problem = qualified_name_problem(label_key)
            if problem:
                yield _error((*at, "key"), f"invalid label key {short(label_key)}: {problem}")
        count = len(values) if isinstance(values, list) else 0
        if operator in ("In", "NotIn") and count == 0:
            yield _error((*at, "values"), f"values must be specified when operator is {operator!r}")
        elif operator in ("Exists", "DoesNotExist") and count:
            yield _error((*at, "values"), f"values must be empty when operator is {operator!r}")
        for v_index, item in enumerate(values if isinstance(values, list) else []):
            problem = label_value_problem(item) if isinstance(item, str) else None
            if problem:
                yield _error((*at, "values", v_index), f"invalid label value {short(item)}: {problem}")


def _data_source(source: dict[str, Any], path: Path) -> Iterator[Diagnostic]:
    for field in ("name", "kind"):
        if not source.get(field):
            yield _error((*path, field), f"missing required field {field!r}")
    group, kind = source.get("apiGroup") or "", source.get("kind")
    if not group and kind != "PersistentVolumeClaim":
        yield _error(
            path,
            f"kind {short(kind)} must be 'PersistentVolumeClaim' when referencing the default apiGroup",
            "set apiGroup for other kinds (e.g. snapshot.storage.k8s.io for VolumeSnapshot)",
        )
    if isinstance(group, str) and group:
        problem = subdomain_problem(group)
        if problem:
            yield _error((*path, "apiGroup"), f"apiGroup {short(group)} {problem}")


# -- entry point ------------------------------------------------------------------------------------

#: Built-in rules per core kind, run after its schema.
_RULES: dict[tuple[str, str], Callable[[Mapping[str, Any]], Iterator[Diagnostic]]] = {
    ("v1", "PersistentVolumeClaim"): pvc_problems,
}
_VALIDATORS: dict[tuple[str, str], Any] = {}
_LOCK = threading.Lock()


def _validator(key: tuple[str, str]) -> Any:
    with _LOCK:
        if key not in _VALIDATORS:
            from trainspec.check.schema.structural import StructuralValidator  # lazy: imports jsonschema

            _VALIDATORS[key] = StructuralValidator(CORE_KINDS[key] or {}, converted=True)
        return _VALIDATORS[key]


def is_core_kind(api_version: Any, kind: Any) -> bool:
    """Whether ``(apiVersion, kind)`` is a core kind handled here (checked or deliberately not)."""
    return (api_version, kind) in CORE_KINDS


def check_core_kind(manifest: Mapping[str, Any]) -> list[Diagnostic]:
    """The API server's findings (TS500) for a core-kind manifest, sorted by path; ``[]`` for
    kinds accepted unchecked and for kinds that are not core kinds at all."""
    api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return []  # CORE_KINDS is keyed by strings: not a core kind
    typed_key = (api_version, kind)
    if CORE_KINDS.get(typed_key) is None:
        return []
    found = _validator(typed_key).validate(dict(manifest))
    rules = _RULES.get(typed_key)
    if rules is not None:
        found.extend(rules(manifest))
    return sorted(found, key=lambda d: d.path)
