"""The JSON Schemas of the spec language (``trainspec/schemas/*.json``), built from the spec models.

Run through ``python -m tools.regenerate [--check]``; they need no CRDs.
"""

from __future__ import annotations

import enum
import inspect
import json
import types
import typing
from typing import Any

from trainspec.dsl.framework.modeling import MISSING, FieldInfo, Model
from trainspec.dsl.spec.models import API_VERSION, Runtime, TrainingJob
from trainspec.dsl.spec.pipeline_spec import Pipeline
from trainspec.schemas import FILES, SCHEMA_DIR

__all__ = ["SCHEMA_DIR", "build", "generate", "render"]

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


def _doc(cls: type) -> str | None:
    """The class's own docstring (not the one Python < 3.11 gives every enum)."""
    own = cls.__dict__.get("__doc__")
    if not own or (issubclass(cls, enum.Enum) and own == "An enumeration."):
        return None
    return inspect.cleandoc(own)


def _model_schema(model: type[Model], defs: dict[str, Any]) -> dict[str, Any]:
    """``model`` as a closed object; every model and enum it reaches goes into ``defs``."""
    schema: dict[str, Any] = {"additionalProperties": False, "title": model.__name__, "type": "object"}
    if _doc(model):
        schema["description"] = _doc(model)
    schema["properties"] = {f.alias: _field_schema(f, defs) for f in model.model_fields.values()}
    required = [f.alias for f in model.model_fields.values() if f.required]
    if required:
        schema["required"] = required
    return schema


def _field_schema(info: FieldInfo, defs: dict[str, Any]) -> dict[str, Any]:
    schema = _type_schema(info.annotation, defs, info)
    bare = info.annotation
    if typing.get_origin(bare) in (typing.Union, types.UnionType):
        bare = next(a for a in typing.get_args(bare) if a is not type(None))
    if not (isinstance(bare, type) and issubclass(bare, (Model, enum.Enum))):  # a $ref carries its own title
        schema["title"] = info.alias.title()  # as the published schemas have always had it: "Claimname"
    if info.default is not MISSING:
        schema["default"] = info.default.value if isinstance(info.default, enum.Enum) else info.default
    schema["description"] = info.description
    return schema


def _type_schema(annotation: Any, defs: dict[str, Any], info: FieldInfo | None = None) -> dict[str, Any]:
    """The schema of one annotation; ``info`` adds the field's constraints to its leaf type."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        described = next((m for m in annotation.__metadata__ if hasattr(m, "__json_schema__")), None)
        return described.__json_schema__() if described is not None else _type_schema(args[0], defs, info)
    if origin in (typing.Union, types.UnionType):  # Optional[X] and X | Model: validation allows no other union
        alternatives: list[dict[str, Any]] = []
        for arg in (a for a in args if a is not type(None)):
            inner = _type_schema(arg, defs, info)
            alternatives.extend(inner["anyOf"] if list(inner) == ["anyOf"] else [inner])
        if type(None) in args:
            alternatives.append({"type": "null"})
        return {"anyOf": alternatives}
    if origin is list:
        return {"items": _type_schema(args[0], defs), "type": "array", **_limits(info, "minItems", "maxItems")}
    if origin is dict:
        schema: dict[str, Any] = {"additionalProperties": _type_schema(args[1], defs), "type": "object"}
        names = {k: v for k, v in _type_schema(args[0], defs).items() if k != "type"}
        if names:
            schema["propertyNames"] = names
        return {**schema, **_limits(info, "minProperties", "maxProperties")}
    if origin is typing.Literal:
        return {"const": args[0], "type": "string"} if len(args) == 1 else {"enum": list(args), "type": "string"}
    if isinstance(annotation, type) and issubclass(annotation, Model):
        if annotation.__name__ not in defs:
            defs[annotation.__name__] = {}  # reserved first: models may refer to each other
            defs[annotation.__name__] = _model_schema(annotation, defs)
        return {"$ref": f"#/$defs/{annotation.__name__}"}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        schema = {"enum": [m.value for m in annotation], "title": annotation.__name__, "type": "string"}
        if _doc(annotation):
            schema["description"] = _doc(annotation)
        defs[annotation.__name__] = schema
        return {"$ref": f"#/$defs/{annotation.__name__}"}
    if hasattr(annotation, "__json_schema__"):
        return annotation.__json_schema__()
    schema = {"type": _JSON_TYPES[annotation]}
    if info is not None:
        schema.update(_limits(info, "minLength", "maxLength"))
        bounds = {"minimum": info.ge, "maximum": info.le, "pattern": info.pattern}
        schema.update({k: v for k, v in bounds.items() if v is not None})
    return schema


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _limits(info: FieldInfo | None, low: str, high: str) -> dict[str, Any]:
    if info is None:
        return {}
    return {k: v for k, v in ((low, info.min_length), (high, info.max_length)) if v is not None}


#: The kinds a spec file holds, each with a schema of its own (the project file has its own schema).
KINDS = ("Runtime", "TrainingJob", "Pipeline")


def build() -> dict[str, dict[str, Any]]:
    """kind -> schema, plus "all": one schema that dispatches on kind."""
    defs: dict[str, Any] = {}
    for model in (Runtime, TrainingJob, Pipeline):
        _type_schema(model, defs)
    for kind in KINDS:
        defs[kind] = _require_kind(defs[kind], kind)
    out: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        out[kind] = {
            "$schema": DRAFT,
            "$id": BASE_ID + FILES[kind],
            "title": f"trainspec {kind}",
            "$ref": f"#/$defs/{kind}",
            "$defs": defs,
        }
    out["all"] = {
        "$schema": DRAFT,
        "$id": BASE_ID + FILES["all"],
        "title": "trainspec spec (Runtime, TrainingJob or Pipeline)",
        "type": "object",
        "required": ["apiVersion", "kind"],
        "properties": {"kind": {"enum": list(KINDS)}},
        "allOf": [
            {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": {"$ref": f"#/$defs/{kind}"}}
            for kind in KINDS
        ],
        "$defs": defs,
    }
    return out


def render(schema: dict[str, Any]) -> str:
    """The one serialisation of a schema file: indented, sorted keys, final newline."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def generate() -> dict[str, str]:
    """File name (relative to :data:`SCHEMA_DIR`) -> the text of each committed schema."""
    return {FILES[kind]: render(schema) for kind, schema in build().items()}
