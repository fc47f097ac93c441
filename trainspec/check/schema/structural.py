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

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from trainspec.check._paths import render_path, short
from trainspec.check.schema.core_pieces import OBJECT_META
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.kube_facts import INT32_MAX, INT64_MAX

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
    return convert_node(node, root=root, child=convert)


def convert_node(
    node: Mapping[str, Any], *, root: bool = False, child: Callable[[Mapping[str, Any]], Any] = convert
) -> dict[str, Any]:
    """One node of :func:`convert`, its sub-schemas (OpenAPI nodes) passed through ``child``:
    :func:`convert` itself for the whole tree at once, :class:`.jsonschema_subset.Lazy` for a
    node whose children are converted when a manifest first reaches them (:mod:`.compiled`).
    The pieces trainspec adds (ObjectMeta, ``apiVersion``/``kind`` strings) are JSON Schema already."""
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
        out["properties"] = {name: child(sub) for name, sub in properties.items()}
    items = node.get("items")
    if isinstance(items, Mapping):
        out["items"] = child(items)

    if node.get("x-kubernetes-embedded-resource") is True:
        embedded = out.setdefault("properties", {})
        embedded.setdefault("apiVersion", {"type": "string"})
        embedded.setdefault("kind", {"type": "string"})
        embedded["metadata"] = _EMBEDDED_META

    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        out["additionalProperties"] = child(extra)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    elif schema_type == "object" and not preserve:
        out["additionalProperties"] = False

    for combinator in ("allOf", "anyOf", "oneOf"):
        branches = node.get(combinator)
        if isinstance(branches, list) and not (combinator == "anyOf" and node.get("x-kubernetes-int-or-string")):
            out[combinator] = [child(b) for b in branches if isinstance(b, Mapping)]
    if isinstance(node.get("not"), Mapping):
        out["not"] = child(node["not"])

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


# -- the jsonschema fallback (schemas outside the compiled subset) ------------------------------


_VALIDATOR_CLASS: Any = None


def _go_pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's ``pattern``, with the pattern read as Go reads it (:mod:`.go_patterns`)."""
    from jsonschema import ValidationError

    from trainspec.check.schema.go_patterns import python_pattern

    if isinstance(instance, str) and not re.search(
        python_pattern(pattern) if isinstance(pattern, str) else pattern, instance
    ):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _validator_class() -> Any:
    """Draft 7 plus the custom keywords, with ``integer`` excluding floats like ``1.0``."""
    global _VALIDATOR_CLASS
    if _VALIDATOR_CLASS is None:
        from jsonschema import Draft7Validator, validators

        checker = Draft7Validator.TYPE_CHECKER.redefine(
            "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
        )
        from trainspec.check.schema.k8s_keywords import JSONSCHEMA

        keywords = {**JSONSCHEMA, "pattern": _go_pattern}
        _VALIDATOR_CLASS = validators.extend(Draft7Validator, keywords, type_checker=checker)
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
    import difflib  # only for unknown fields: not on the path of a clean check

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
    """A strict JSON Schema for one kind; :meth:`validate` returns TS500s.

    Validation runs compiled (:mod:`.compiled`: each node converted and compiled when a manifest
    first reaches it); a schema outside the compiled subset is validated by jsonschema itself,
    with the same answers either way.
    """

    def __init__(
        self, schema: Mapping[str, Any], *, root: bool = True, converted: bool = False, compiled: bool = True
    ) -> None:
        """``compiled=False``: jsonschema only (the reference the compiled validator is tested against)."""
        from trainspec.check.schema.compiled import CompiledValidator, Compiler
        from trainspec.check.schema.jsonschema_subset import Lazy

        self._schema, self._root = schema, root
        self._json_schema: dict[str, Any] | None = dict(schema) if converted else None
        top: Any = self._json_schema if converted else convert_node(schema, root=root, child=Lazy)

        def expand(node: Mapping[str, Any]) -> Mapping[str, Any]:
            return convert_node(node, child=Lazy)

        def materialize(sub: Any) -> Any:
            return convert(sub.node) if isinstance(sub, Lazy) else sub

        self._compiled = CompiledValidator(top, Compiler(expand, materialize))
        # jsonschema's validator, once the compiled subset did not cover the schema
        self._fallback: Any = None if compiled else _validator_class()(self.json_schema)

    @property
    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema validated against (converted on first access: inspectable in tests)."""
        if self._json_schema is None:
            self._json_schema = convert(self._schema, root=self._root)
        return self._json_schema

    def _errors(self, instance: Any) -> Any:
        if self._fallback is None:
            from trainspec.check.schema.jsonschema_subset import Unsupported

            try:
                return self._compiled.iter_errors(instance)
            except Unsupported:
                self._fallback = _validator_class()(self.json_schema)
        return self._fallback.iter_errors(instance)

    def validate(self, instance: Any) -> list[Diagnostic]:
        """All structural problems of ``instance`` (not only the first)."""
        out: list[Diagnostic] = []
        seen_required: set[tuple[str, str]] = set()
        for error in self._errors(instance):
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
