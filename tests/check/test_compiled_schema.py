"""The compiled structural validator answers exactly as jsonschema does.

Differential: manifests generated from every shipped CRD's schema (valid values, and values
made wrong on purpose: wrong types, unknown and missing fields, bounds, patterns, enums,
duplicates, nulls) are validated by the compiled validator and by jsonschema; the TS500
findings must be the same, in the same order. Plus the keyword edge cases jsonschema has
(``True`` is not ``1``, ``oneOf`` with several matches, patterns, odd schemas that fall back).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from trainspec.check.schema.core_kinds import CORE_KINDS
from trainspec.check.schema.crds import _iter_crd_documents, _versions_of
from trainspec.check.schema.go_patterns import python_pattern
from trainspec.check.schema.podmonitor_schema import HAND_WRITTEN
from trainspec.check.schema.structural import StructuralValidator
from trainspec.check.schema.vendored import DATA_DIR, bundles

_ODD = [None, True, False, 0, 1, -1, 2**31, 1.5, "", "x", "Bad_Name!", "a" * 300, [], [1], {}, {"z": 1}]


def _shipped_schemas() -> list[tuple[str, Mapping[str, Any]]]:
    out = []
    for bundle in bundles():
        for path in bundle.files:
            doc = json.loads(path.read_text(encoding="utf-8"))
            for crd in _iter_crd_documents(doc):
                out += [(f"{v.kind}/{v.version}", v.schema) for v in _versions_of(crd, str(path))]
    return out


def _value(rng: random.Random, node: Mapping[str, Any], depth: int) -> Any:
    """A value for the OpenAPI ``node``: mostly well formed, sometimes wrong in one way."""
    if rng.random() < 0.06:
        return rng.choice(_ODD)
    if "enum" in node and node["enum"] and rng.random() < 0.8:
        return rng.choice(node["enum"]) if rng.random() < 0.9 else "NotAnEnumValue"
    kind = node.get("type")
    if node.get("x-kubernetes-int-or-string"):
        kind = rng.choice(["integer", "string"])
    if kind == "object" or "properties" in node:
        return _object(rng, node, depth)
    if kind == "array":
        items = node.get("items") if isinstance(node.get("items"), Mapping) else {}
        count = 0 if depth > 7 else rng.choice([0, 1, 1, 2, 3])
        values = [_value(rng, items, depth + 1) for _ in range(count)]
        if values and rng.random() < 0.15:
            values.append(values[0])  # a duplicate: list-type set/map, uniqueItems
        return values
    if kind == "integer":
        low, high = node.get("minimum", -5), node.get("maximum", 100)
        return rng.choice([low, high, low - 1, high + 1, 0, 3, 2**40]) if rng.random() < 0.3 else rng.randint(0, 9)
    if kind == "number":
        return rng.choice([0, 0.5, -1.25, 3, 1e20])
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "string":
        if rng.random() < 0.2:
            length = node.get("maxLength", 10) + rng.choice([-1, 0, 1])
            return "a" * max(length, 0)
        return rng.choice(["abc", "a-b.c", "UPPER", "10Gi", "1.5", "", "x/y", "2024-01-01T00:00:00Z", "a b"])
    return rng.choice(_ODD)


def _object(rng: random.Random, node: Mapping[str, Any], depth: int) -> dict[str, Any]:
    properties = node.get("properties") or {}
    out: dict[str, Any] = {}
    if depth < 9:
        names = list(properties)
        chosen = [n for n in names if n in (node.get("required") or ()) and rng.random() < 0.9]
        chosen += rng.sample(names, min(len(names), rng.choice([0, 1, 2, 3, 5])))
        for name in dict.fromkeys(chosen):
            sub = properties[name]
            out[name] = _value(rng, sub if isinstance(sub, Mapping) else {}, depth + 1)
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping) and depth < 9:
        for key in rng.sample(["a", "b.c/d", "Key_1", "x" * 70], rng.choice([0, 1, 2])):
            out[key] = _value(rng, extra, depth + 1)
    if rng.random() < 0.08:
        out[rng.choice(["unknownField", "spce", "Name"])] = 1
    return out


def _ordered(found: list[Any]) -> list[Any]:
    # As check_manifest orders them. jsonschema walks the extra keys of an additionalProperties
    # schema as a set (its order changes with the hash seed), so only the order within a path is its own.
    return sorted(found, key=lambda d: (d.path, d.code))


def _same(schema: Mapping[str, Any], instances: list[Any], **options: Any) -> None:
    compiled = StructuralValidator(schema, **options)
    reference = StructuralValidator(schema, compiled=False, **options)
    for instance in instances:
        expected = _ordered(reference.validate(instance))
        assert _ordered(compiled.validate(instance)) == expected, json.dumps(instance)[:2000]


@pytest.mark.parametrize(("name", "schema"), _shipped_schemas(), ids=lambda v: v if isinstance(v, str) else "")
def test_generated_manifests_get_jsonschemas_findings(name: str, schema: Mapping[str, Any]) -> None:
    rng = random.Random(name)
    instances = []
    for _ in range(60):
        manifest = _object(rng, schema, 0)
        manifest.setdefault("apiVersion", "x/v1")
        manifest.setdefault("kind", name.partition("/")[0])
        if rng.random() < 0.9:
            manifest["metadata"] = {"name": rng.choice(["ok", "Bad_Name", "a" * 260]), "labels": {"a/b": "c"}}
        instances.append(manifest)
    _same(schema, instances)


def test_core_kinds_and_hand_written_schemas() -> None:
    rng = random.Random(7)
    for schema in [s for s in CORE_KINDS.values() if s]:
        _same(schema, [_object(rng, schema, 0) for _ in range(80)], converted=True)
    for schema in HAND_WRITTEN.values():
        _same(schema, [_object(rng, schema, 0) for _ in range(80)])


_EDGES = {
    "enum with a bool and a number": ({"enum": [1, "a", None, [1], {"a": 1}]}, [True, 1, 1.0, "a", None, [True], [1]]),
    "uniqueItems": ({"type": "array", "uniqueItems": True}, [[1, True], [1, 1.0], [{"a": 1}, {"a": 1}], [[1], [True]]]),
    "oneOf, two branches match": (
        {"oneOf": [{"type": "integer"}, {"minimum": 0}, {"type": "string"}]},
        [1, -1, "a", 2.5, None],
    ),
    "anyOf and not": ({"anyOf": [{"type": "string"}, {"maximum": 3}], "not": {"enum": [2]}}, [2, 5, "a", None]),
    "multipleOf": ({"multipleOf": 0.1}, [0.3, 1, 1e308, True]),
    "patternProperties": (
        {"type": "object", "patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False},
        [{"x-a": 1, "y": 2}, {"x-b": "s", "z": 1, "w": 2}],
    ),
    "additionalProperties as a schema": (
        {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "integer"}},
        [{"a": "s", "b": "t", "c": 1}],
    ),
    "false schemas": ({"properties": {"a": False}, "items": False}, [{"a": 1}, [1]]),
    "sizes and bounds": (
        {"minLength": 1, "maxLength": 2, "minItems": 1, "maxItems": 0, "minProperties": 1, "maxProperties": 0},
        ["", "abc", [], [1], {}, {"a": 1}],
    ),
}


@pytest.mark.parametrize("name", list(_EDGES))
def test_keyword_edge_cases(name: str) -> None:
    schema, instances = _EDGES[name]
    _same(schema, instances, converted=True)


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/definitions/a", "definitions": {"a": {"type": "integer"}}},
        {"properties": {"a": {"if": {"type": "integer"}, "then": {"minimum": 3}}}},
        {"properties": {"a": {"const": 3}}},
    ],
)
def test_schemas_outside_the_subset_fall_back_to_jsonschema(schema: dict[str, Any]) -> None:
    _same(schema, [{"a": 1}, {"a": "x"}, 5], converted=True)


def test_an_unknown_type_raises_as_jsonschema_does() -> None:
    from jsonschema.exceptions import UnknownType

    with pytest.raises(UnknownType):
        StructuralValidator({"properties": {"a": {"type": "widget"}}}, converted=True).validate({"a": 1})


def test_go_flags_inside_a_pattern_are_read_as_go_reads_them() -> None:
    # Kueue 0.19's AdmissionCheck: `(?i)` after `^` is Go syntax that Python rejects; check failed
    # with an internal error on any AdmissionCheck with parameters.
    schema = {"properties": {"kind": {"type": "string", "pattern": "^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$"}}}
    for compiled in (True, False):
        validator = StructuralValidator(schema, converted=True, compiled=compiled)
        assert validator.validate({"kind": "ProvisioningRequestConfig"}) == []
        assert [d.message for d in validator.validate({"kind": "9x"})] == [
            "value '9x' does not match the pattern '^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$'"
        ]


@pytest.mark.parametrize(
    ("go", "python"),
    [
        ("^[a-z]+$", "^[a-z]+$"),  # Python reads it already: unchanged
        ("^(?i)[a-z]$", "^(?i:[a-z]$)"),
        ("a((?i)b|c)d", "a((?i:b|c))d"),
        ("[(?i)]x", "[(?i)]x"),
        ("[]a](?s).", "[]a](?s:.)"),
    ],
)
def test_python_pattern(go: str, python: str) -> None:
    assert python_pattern(go) == python


def test_shipped_data_dir_is_there() -> None:
    assert DATA_DIR.is_dir() and _shipped_schemas()


def test_the_verdict_cache_key_covers_the_compiled_validator(monkeypatch: pytest.MonkeyPatch) -> None:
    # Stored verdicts are keyed by the checker's code: a changed validator module is a new key,
    # so a verdict of another version of the compiled validator (or of jsonschema) is never used.
    from pathlib import Path

    from trainspec.check import crd_cache

    before = crd_cache._fingerprint()
    read_bytes = Path.read_bytes

    def edited(self: Path) -> bytes:
        data = read_bytes(self)
        return data + b"\n# edited" if self.name in ("compiled.py", "keyword_checks.py") else data

    monkeypatch.setattr(Path, "read_bytes", edited)
    assert crd_cache._fingerprint() != before
