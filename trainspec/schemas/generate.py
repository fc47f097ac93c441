"""Generate the JSON Schemas from the spec models: ``python -m trainspec.schemas.generate [--check]``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pydantic.json_schema import models_json_schema

from trainspec.dsl.models import API_VERSION, Runtime, TrainingJob
from trainspec.schemas import FILES, SCHEMA_DIR

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "https://trainspec.dev/schemas/v1alpha1/"


def _require_kind(schema: dict[str, Any], kind: str) -> dict[str, Any]:
    """apiVersion and kind have Python defaults but a YAML document must state them."""
    schema = dict(schema)
    schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind"})
    props = dict(schema["properties"])
    props["apiVersion"] = {"const": API_VERSION, "description": "Always trainspec.dev/v1alpha1."}
    props["kind"] = {"const": kind, "description": f"Always {kind}."}
    schema["properties"] = props
    return schema


def _strict_keys(node: Any) -> Any:
    """Make map-key patterns binding: pydantic emits ``patternProperties``, which lets other keys through."""
    if isinstance(node, list):
        return [_strict_keys(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _strict_keys(value) for key, value in node.items()}
    patterns = node.get("patternProperties")
    if patterns and len(patterns) == 1 and "additionalProperties" not in node:
        (pattern, value), = patterns.items()
        del node["patternProperties"]
        node["additionalProperties"] = value
        node["propertyNames"] = {**node.get("propertyNames", {}), "pattern": pattern}
    return node


def build() -> dict[str, dict[str, Any]]:
    """kind -> schema, plus "all": one schema that dispatches on kind."""
    _, combined = models_json_schema([(Runtime, "validation"), (TrainingJob, "validation")], by_alias=True,
                                     ref_template="#/$defs/{model}")
    defs = _strict_keys(combined["$defs"])
    for kind in ("Runtime", "TrainingJob"):
        defs[kind] = _require_kind(defs[kind], kind)
    out: dict[str, dict[str, Any]] = {}
    for kind in ("Runtime", "TrainingJob"):
        out[kind] = {"$schema": DRAFT, "$id": BASE_ID + FILES[kind], "title": f"trainspec {kind}",
                     "$ref": f"#/$defs/{kind}", "$defs": defs}
    out["all"] = {
        "$schema": DRAFT, "$id": BASE_ID + FILES["all"], "title": "trainspec spec (Runtime or TrainingJob)",
        "type": "object", "required": ["apiVersion", "kind"],
        "properties": {"kind": {"enum": ["Runtime", "TrainingJob"]}},
        "allOf": [
            {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": {"$ref": f"#/$defs/{kind}"}}
            for kind in ("Runtime", "TrainingJob")
        ],
        "$defs": defs,
    }
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed schemas are stale")
    args = parser.parse_args(argv)
    stale = []
    for kind, schema in build().items():
        path = SCHEMA_DIR / FILES[kind]
        text = render(schema)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(path.name)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"stale schemas: {', '.join(stale)}; run python -m trainspec.schemas.generate", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
