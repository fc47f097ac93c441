"""Structural validation: a CRD's OpenAPI v3 schema as a strict JSON Schema.

The conversion mimics ``kubectl apply --validate=strict`` plus the API server's own schema
checks:

* every object schema that lists ``properties`` (or lists nothing at all) is closed with
  ``additionalProperties: false``, unless it says ``x-kubernetes-preserve-unknown-fields``,
  because the API server would silently prune those fields and strict clients reject them;
* ``x-kubernetes-int-or-string`` becomes ``type: [integer, string]``;
* ``nullable`` admits ``null``; OpenAPI 3.0's boolean ``exclusiveMinimum`` is rewritten;
* the root ``metadata`` (just ``type: object`` in CRDs) becomes strict ObjectMeta, and
  embedded resources get ``apiVersion``/``kind``/``metadata``;
* ``x-kubernetes-list-type: map``/``set`` become duplicate checks (the API server rejects
  duplicate keys);
* ``format`` is dropped: most formats are not checkable offline in a faithful way; the integer
  formats ``int32``/``int64`` become ``minimum``/``maximum``, as the API server checks them.

Every jsonschema error becomes a TS500 :class:`Diagnostic` with a dotted path.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from typing import Any

from trainspec.check._paths import render_path, short
from trainspec.check.schema.core_pieces import OBJECT_META
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.kube_facts import ANNOTATIONS_TOTAL_MAX, INT32_MAX, INT64_MAX
from trainspec.k8s.name_rules import label_problem, label_value_problem, qualified_name_problem, subdomain_problem

# OpenAPI keywords copied unchanged into the JSON Schema.
_COPIED = (
    "enum",
    "required",
    "minimum",
    "maximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
)

_EMBEDDED_META = {k: v for k, v in OBJECT_META.items() if k != "x-k8s-name-required"}
#: Integer formats -> their (minimum, maximum); the API server rejects values outside.
_INT_FORMATS = {"int32": (-INT32_MAX - 1, INT32_MAX), "int64": (-INT64_MAX - 1, INT64_MAX)}


def convert(node: Mapping[str, Any], *, root: bool = False) -> dict[str, Any]:
    """Convert one OpenAPI v3 (structural) schema node to a strict Draft 7 JSON Schema."""
    out: dict[str, Any] = {k: node[k] for k in _COPIED if k in node}
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    schema_type: Any = node.get("type")
    if node.get("x-kubernetes-int-or-string") is True:
        schema_type = ["integer", "string"]
    for bound in ("Minimum", "Maximum"):
        flag = node.get(f"exclusive{bound}")
        if flag is True and bound.lower() in out:  # OpenAPI 3.0 boolean form
            out[f"exclusive{bound}"] = out.pop(bound.lower())
        elif isinstance(flag, (int, float)) and not isinstance(flag, bool):
            out[f"exclusive{bound}"] = flag
    int_format = node.get("format")  # the user's CRD: not necessarily a string (a list is unhashable)
    int_range = _INT_FORMATS.get(int_format) if node.get("type") == "integer" and isinstance(int_format, str) else None
    if int_range is not None:  # the integer formats the API server does check ("format int32")
        low, high = int_range
        out["minimum"] = max(out["minimum"], low) if isinstance(out.get("minimum"), (int, float)) else low
        out["maximum"] = min(out["maximum"], high) if isinstance(out.get("maximum"), (int, float)) else high

    properties = node.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {name: convert(sub) for name, sub in properties.items()}
    items = node.get("items")
    if isinstance(items, Mapping):
        out["items"] = convert(items)

    if node.get("x-kubernetes-embedded-resource") is True:
        embedded = out.setdefault("properties", {})
        embedded.setdefault("apiVersion", {"type": "string"})
        embedded.setdefault("kind", {"type": "string"})
        embedded["metadata"] = _EMBEDDED_META

    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        out["additionalProperties"] = convert(extra)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    elif schema_type == "object" and not preserve:
        out["additionalProperties"] = False

    for combinator in ("allOf", "anyOf", "oneOf"):
        branches = node.get(combinator)
        if isinstance(branches, list) and not (combinator == "anyOf" and node.get("x-kubernetes-int-or-string")):
            out[combinator] = [convert(b) for b in branches if isinstance(b, Mapping)]
    if isinstance(node.get("not"), Mapping):
        out["not"] = convert(node["not"])

    list_type = node.get("x-kubernetes-list-type")
    if list_type == "map" and node.get("x-kubernetes-list-map-keys"):
        out["x-k8s-list-map-keys"] = list(node["x-kubernetes-list-map-keys"])
    elif list_type == "set":
        out["x-k8s-list-set"] = True

    if node.get("nullable") is True:
        if schema_type is not None:
            schema_type = [*([schema_type] if isinstance(schema_type, str) else schema_type), "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    if schema_type is not None:
        out["type"] = schema_type

    if root:
        # apiVersion, kind and metadata are implicit at the root of every custom resource.
        top = out.setdefault("properties", {})
        top.setdefault("apiVersion", {"type": "string"})
        top.setdefault("kind", {"type": "string"})
        top["metadata"] = OBJECT_META
        out["required"] = sorted({*out.get("required", ()), "apiVersion", "kind", "metadata"})
        if not preserve:
            out.setdefault("additionalProperties", False)
    return out


# -- custom keywords (checked by the extended validator) --------------------------------------


def _kw_name(validator: Any, mode: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if isinstance(instance, str):
        problem = subdomain_problem(instance) if mode == "subdomain" else label_problem(instance)
        if problem:
            yield ValidationError(f"invalid name {short(instance)}: {problem}")


def _kw_name_required(validator: Any, enabled: bool, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if enabled and isinstance(instance, dict) and not instance.get("name") and not instance.get("generateName"):
        yield ValidationError("missing required field 'name' (or 'generateName')", path=["name"])


def _kw_labels(validator: Any, enabled: bool, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not (enabled and isinstance(instance, dict)):
        return
    for key, value in instance.items():
        problem = qualified_name_problem(str(key))
        if problem:
            yield ValidationError(f"invalid label key {short(key)}: {problem}", path=[key])
        if isinstance(value, str):
            problem = label_value_problem(value)
            if problem:
                yield ValidationError(f"invalid label value {short(value)}: {problem}", path=[key])


def _kw_annotations(validator: Any, enabled: bool, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not (enabled and isinstance(instance, dict)):
        return
    for key in instance:
        problem = qualified_name_problem(str(key))
        if problem:
            yield ValidationError(f"invalid annotation key {short(key)}: {problem}", path=[key])
    # The API server counts bytes (Go's len), not characters (apimachinery ValidateAnnotationsSize).
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in instance.items())
    if size > ANNOTATIONS_TOTAL_MAX:
        yield ValidationError(f"annotations are too long: {size} bytes, the limit is {ANNOTATIONS_TOTAL_MAX}")


def _kw_list_map_keys(validator: Any, keys: list[str], instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not isinstance(instance, list):
        return
    seen: dict[tuple[Any, ...], int] = {}
    for index, item in enumerate(instance):
        if not isinstance(item, dict):
            continue
        key = tuple(repr(item.get(k)) for k in keys)
        if key in seen:
            described = ", ".join(f"{k}={short(item.get(k))}" for k in keys)
            yield ValidationError(f"duplicate entry ({described}): already at index {seen[key]}", path=[index])
        else:
            seen[key] = index


def _kw_list_set(validator: Any, enabled: bool, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not (enabled and isinstance(instance, list)):
        return
    seen: list[Any] = []
    for index, item in enumerate(instance):
        if any(type(item) is type(other) and item == other for other in seen):
            yield ValidationError(f"duplicate value {short(item)} in a set", path=[index])
        seen.append(item)


_VALIDATOR_CLASS: Any = None


def _validator_class() -> Any:
    """Draft 7 plus the custom keywords, with ``integer`` excluding floats like ``1.0``."""
    global _VALIDATOR_CLASS
    if _VALIDATOR_CLASS is None:
        from jsonschema import Draft7Validator, validators

        checker = Draft7Validator.TYPE_CHECKER.redefine(
            "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
        )
        _VALIDATOR_CLASS = validators.extend(
            Draft7Validator,
            {
                "x-k8s-name": _kw_name,
                "x-k8s-name-required": _kw_name_required,
                "x-k8s-labels": _kw_labels,
                "x-k8s-annotations": _kw_annotations,
                "x-k8s-list-map-keys": _kw_list_map_keys,
                "x-k8s-list-set": _kw_list_set,
            },
            type_checker=checker,
        )
    return _VALIDATOR_CLASS


# -- errors -> diagnostics ---------------------------------------------------------------------

_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
    (type(None), "null"),
)


def _json_type(value: Any) -> str:
    return next((name for cls, name in _JSON_TYPES if isinstance(value, cls)), type(value).__name__)


def did_you_mean(name: str, allowed: list[str]) -> str | None:
    """The closest allowed name, case-insensitively first, or None."""
    folded = {a.lower(): a for a in allowed}
    if name.lower() in folded:
        return folded[name.lower()]
    close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    return close[0] if close else None


def _unknown_fields(error: Any, path: list[Any]) -> Iterator[Diagnostic]:
    allowed = sorted(error.schema.get("properties", {}))
    patterns = [re.compile(p) for p in error.schema.get("patternProperties", {})]
    for key in error.instance:
        if key in allowed or any(p.search(key) for p in patterns):
            continue
        guess = did_you_mean(str(key), allowed)
        message = f"unknown field {str(key)!r}" + (f" (did you mean {guess!r}?)" if guess else "")
        if not allowed:
            hint = "this object takes no fields"
        else:
            listed = ", ".join(allowed[:12]) + (", ..." if len(allowed) > 12 else "")
            hint = f"allowed fields here: {listed}"
        yield Diagnostic(code=codes.CRD_SCHEMA, message=message, path=render_path([*path, key]), hint=hint)


def _message(error: Any) -> str:
    kind, limit, value = error.validator, error.validator_value, error.instance
    if kind == "type":
        expected = " or ".join(limit) if isinstance(limit, list) else limit
        return f"wrong type: expected {expected}, got {_json_type(value)} {short(value)}"
    if kind == "enum":
        allowed = ", ".join(repr(v) for v in limit)
        return f"unsupported value {short(value)}: must be one of {allowed}"
    comparisons = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
    if kind in comparisons:
        return f"value {short(value)} must be {comparisons[kind]} {limit}"
    sizes = {
        "minLength": ("at least", "characters"),
        "maxLength": ("no more than", "characters"),
        "minItems": ("at least", "items"),
        "maxItems": ("no more than", "items"),
        "minProperties": ("at least", "fields"),
        "maxProperties": ("no more than", "fields"),
    }
    if kind in sizes:
        bound, unit = sizes[kind]
        return f"must have {bound} {limit} {unit} (has {len(value)})"
    if kind == "pattern":
        return f"value {short(value)} does not match the pattern {limit!r}"
    if kind == "uniqueItems":
        return "must not contain duplicate items"
    return str(error.message)


class StructuralValidator:
    """A compiled strict JSON Schema for one kind; :meth:`validate` returns TS500s."""

    def __init__(self, schema: Mapping[str, Any], *, root: bool = True, converted: bool = False) -> None:
        #: The JSON Schema actually used (inspectable in tests and for debugging).
        self.json_schema: dict[str, Any] = dict(schema) if converted else convert(schema, root=root)
        self._validator = _validator_class()(self.json_schema)

    def validate(self, instance: Any) -> list[Diagnostic]:
        """All structural problems of ``instance`` (not only the first)."""
        out: list[Diagnostic] = []
        seen_required: set[tuple[str, str]] = set()
        for error in self._validator.iter_errors(instance):
            path = list(error.absolute_path)
            if error.validator == "additionalProperties" and error.validator_value is False:
                out.extend(_unknown_fields(error, path))
            elif error.validator == "required":
                # jsonschema reports each missing key separately; report each once.
                for missing in error.validator_value:
                    if isinstance(error.instance, dict) and missing not in error.instance:
                        key = (render_path(path), missing)
                        if key not in seen_required:
                            seen_required.add(key)
                            out.append(
                                Diagnostic(
                                    code=codes.CRD_SCHEMA,
                                    message=f"missing required field {missing!r}",
                                    path=render_path([*path, missing]),
                                )
                            )
            else:
                out.append(Diagnostic(code=codes.CRD_SCHEMA, message=_message(error), path=render_path(path)))
        return out
