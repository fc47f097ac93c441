"""Turn loaded YAML documents into spec models, and model errors into located diagnostics."""

from __future__ import annotations

import enum
import types
import typing
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic, Related
from trainspec.dsl.errors import ValidationError, short_repr, suggest
from trainspec.dsl.framework.modeling import Model
from trainspec.dsl.load.strict_yaml import Mark, SourceDoc
from trainspec.dsl.spec.models import API_GROUP, API_VERSION, KINDS, Spec
from trainspec.dsl.spec.project import Project

#: Error kind (:data:`trainspec.dsl.errors.ERROR_KINDS`) -> diagnostic code: every kind, one code each.
CODE_BY_ERROR = {
    "unknown_field": codes.UNKNOWN_FIELD,
    "required": codes.MISSING_FIELD,
    **dict.fromkeys(
        (
            "model_type",
            "frozen_instance",
            "string_type",
            "int_type",
            "float_type",
            "float_parsing",
            "bool_type",
            "bool_parsing",
            "list_type",
            "dict_type",
            "string_pattern_mismatch",
        ),
        codes.WRONG_TYPE,
    ),
    **dict.fromkeys(
        (
            "greater_than_equal",
            "less_than_equal",
            "enum",
            "literal_error",
            "too_short",
            "too_long",
            "string_too_short",
            "string_too_long",
            "ts_value",
            "ts_range",
        ),
        codes.OUT_OF_RANGE,
    ),
    "ts_quantity": codes.INVALID_QUANTITY,
    "ts_duration": codes.INVALID_DURATION,
    "ts_name": codes.INVALID_NAME,
    "ts_uri": codes.INVALID_URI,
    "ts_credential": codes.CREDENTIAL,
    "ts_checkpoint_forms": codes.CHECKPOINT_FORMS,
    "ts_params": codes.INVALID_PARAM_COUNT,
    "ts_label": codes.INVALID_LABEL,
    "ts_env_name": codes.INVALID_ENV_NAME,
    "ts_shard_mode": codes.SHARD_MODE_ASSIGNMENT,
    "ts_checkpoint_auto": codes.CHECKPOINT_SIZE,
}
_CODE_BY_ERROR = CODE_BY_ERROR  # the name pyspec imports

#: Errors that mean "this YAML scalar has the wrong type"; with a plain YAML 1.1 scalar they are TS109.
_TYPE_ERRORS = {"string_type", "enum", "literal_error"}

#: Every kind a document may declare.
ALL_KINDS: tuple[str, ...] = (*KINDS, "Pipeline", "Project")


def _model_of(kind: str) -> type[Model] | None:
    """The model of a kind; the pipeline models are imported for a Pipeline document only."""
    if kind == "Pipeline":
        from trainspec.dsl.spec.pipeline_spec import Pipeline

        return Pipeline
    return Project if kind == "Project" else KINDS.get(kind)


_HINTS = {
    codes.MISSING_FIELD: "add the field; see `trainspec schema` for what it takes",
    codes.OUT_OF_RANGE: "use a value inside the field's range; `trainspec schema` lists each field's bounds",
    codes.INVALID_QUANTITY: "write a quantity such as 8, 500m, 64Gi or 1600Gi",
    codes.INVALID_DURATION: "write a duration such as 72h, 90m or 1h30m",
    codes.INVALID_NAME: "use lower-case letters, digits and '-', starting with a letter, at most 63 characters",
    codes.INVALID_URI: "write s3://bucket/path, gs://bucket/path, hf://org/name, pvc://claim/path or an absolute path, as the "
    "field allows",
    codes.CHECKPOINT_FORMS: "keep exactly one of size, claimName or uri",
    codes.INVALID_PARAM_COUNT: "write a count such as 70B, 405B, 7.5B or 350M",
    codes.INVALID_LABEL: "a key is [prefix/]name, the name at most 63 letters, digits, '-', '_' or '.' (alphanumeric at both "
    "ends), the prefix a lower-case DNS subdomain; a label value is empty or at most 63 of the same characters",
    codes.INVALID_ENV_NAME: "use letters, digits and '_', not starting with a digit",
    codes.SHARD_MODE_ASSIGNMENT: "remove data.mode (hashed and round-robin shard in copy mode), or use assignment: contiguous",
    codes.CHECKPOINT_SIZE: "add checkpoint.model: {parameters: 70B, dtype: bf16, optimizer: adamw}, or give a size",
}


def build_spec(doc: SourceDoc) -> tuple[Spec | Project | None, list[Diagnostic]]:
    """Validate one document. Returns (None, []) for a document that is not a trainspec spec."""
    data = doc.data
    api_version = data.get("apiVersion")
    if not isinstance(api_version, str) or not api_version.startswith(API_GROUP + "/"):
        return None, []
    if api_version != API_VERSION:
        mark = doc.mark(("apiVersion",))
        return None, [
            error_at(
                doc,
                codes.UNSUPPORTED_API_VERSION,
                ("apiVersion",),
                mark,
                f"apiVersion {api_version} is not supported",
                hint=f"use apiVersion: {API_VERSION}",
            )
        ]
    kind = data.get("kind")
    model = _model_of(kind) if isinstance(kind, str) else None
    if model is None:
        mark = doc.mark(("kind",))
        close = suggest(str(kind), list(ALL_KINDS))
        hint = f"did you mean {close}?" if close else f"kinds are: {', '.join(ALL_KINDS)}"
        return None, [
            error_at(doc, codes.UNKNOWN_KIND, ("kind",), mark, f"unknown kind {kind!r} for {API_VERSION}", hint=hint)
        ]
    ambiguous = _ambiguous_strings(doc, model) if doc.plain else []
    try:
        spec = typing.cast("Spec | Project", model.model_validate(data))
    except ValidationError as exc:
        return None, [*(_from_error(doc, model, err) for err in exc.errors()), *ambiguous]
    return (None, ambiguous) if ambiguous else (spec, _document_rules(doc, spec))


def _document_rules(doc: SourceDoc, spec: Spec | Project) -> list[Diagnostic]:
    """Rules over a valid document that no single field type holds, for the kinds whose single-spec
    checks do not cover them (a job's are in :func:`trainspec.dsl.spec.semantics.check_job`): a
    credential anywhere in a Runtime (TS304), and the project's default queue and priority, which
    become label values (TS206)."""
    from trainspec.dsl.spec.models import Runtime

    if isinstance(spec, Runtime):
        from trainspec.dsl.spec.semantics import check_runtime_secrets

        return [
            error_at(doc, code, path, locate(doc, path), message, hint=hint)
            for code, path, message, hint in check_runtime_secrets(spec)
        ]
    if isinstance(spec, Project):
        from trainspec.dsl.spec.job_spec import label_object_name_problem

        found = []
        defaults = spec.spec.defaults
        for name, value in (("queue", defaults.queue), ("priority", defaults.priority)):
            problem = label_object_name_problem(value) if value is not None else None
            if problem is not None:
                path = ("spec", "defaults", name)
                hint = "Kueue reads the name from a label of the job, and label values are at most 63 characters"
                found.append(error_at(doc, codes.INVALID_NAME, path, locate(doc, path), problem, hint=hint))
        return found
    return []


def _ambiguous_strings(doc: SourceDoc, model: type[Model]) -> list[Diagnostic]:
    """Plain scalars such as ``1e3`` in string fields: a string here, a number to YAML 1.2 readers."""
    found = []
    for path, raw in doc.plain.items():
        if isinstance(value_at(doc.data, path), str) and _leaf(model, path) in (str, None):
            found.append(
                error_at(
                    doc,
                    codes.YAML11_IMPLICIT,
                    path,
                    doc.mark(path),
                    f"{raw} is a string to this reader but a number to YAML 1.2 readers",
                    hint=f'quote it: "{raw}"',
                )
            )
    return found


def error_at(
    doc: SourceDoc,
    code: Code,
    path: tuple[Any, ...],
    mark: Mark,
    message: str,
    *,
    hint: str | None = None,
    related: tuple[Related, ...] = (),
) -> Diagnostic:
    """An error of ``doc`` at ``mark`` about the field ``path`` (the loader's and the validator's one shape)."""
    return Diagnostic.located(code, message, doc.file, mark, path, hint=hint, related=related)


def _from_error(doc: SourceDoc, model: type[Model], err: dict[str, Any]) -> Diagnostic:
    kind = err["type"]
    loc = _clean_loc(err["loc"])
    is_key = bool(err["loc"]) and err["loc"][-1] == "[key]"
    code = CODE_BY_ERROR.get(kind, codes.WRONG_TYPE)  # tests/dsl/test_error_kinds.py keeps every kind listed
    hint = (err.get("ctx") or {}).get("hint") or _HINTS.get(code)  # a value's own hint, else its code's
    value = value_at(doc.data, loc)
    if kind == "unknown_field":
        mark = doc.keys.get(loc) or doc.mark(loc)
        name = str(loc[-1])
        allowed = _field_names(model, loc[:-1])
        close = [suggested] if (suggested := suggest(name, allowed)) else []
        hint = f"did you mean {close[0]}?" if close else (f"allowed here: {', '.join(allowed)}" if allowed else None)
        return error_at(doc, code, loc, mark, f"unknown field {name!r}", hint=hint)
    if kind == "required":
        parent = loc[:-1]
        return error_at(doc, code, loc, locate(doc, parent), f"{loc[-1]} is required", hint=f"add {loc[-1]}: ...")
    mark = (doc.keys.get(loc) if is_key else None) or locate(doc, loc)
    raw = doc.plain.get(loc)
    if raw is not None and kind in _TYPE_ERRORS and not isinstance(value, str):
        shown = "null" if value is None else repr(value).lower() if isinstance(value, bool) else repr(value)
        what = type(value).__name__ if value is not None else "null"
        return error_at(
            doc,
            codes.YAML11_IMPLICIT,
            loc,
            mark,
            f"{raw} is read by YAML as {what} {shown}, but this field takes a string",
            hint=f'quote it: "{raw}"',
        )
    if kind == "enum":
        hint = _choice_hint(err.get("input", value), (err.get("ctx") or {}).get("choices") or [], hint)
    return error_at(doc, code, loc, mark, _message(kind, err, value), hint=hint)


def _choice_hint(given: Any, choices: list[str], fallback: str | None) -> str | None:
    """did-you-mean for a misspelled choice, else the choices themselves."""
    if not choices:
        return fallback
    close = suggest(given, choices) if isinstance(given, str) else None
    if close:
        return f"did you mean {close!r}?"
    quoted = [repr(c) for c in choices]
    return "choose one of " + (" or ".join(quoted) if len(quoted) < 3 else ", ".join(quoted[:-1]) + " or " + quoted[-1])


def locate(doc: SourceDoc, path: tuple[Any, ...]) -> Mark:
    """Where to point for ``path``: a scalar's value, but the key of a mapping or list.

    A problem with a whole block (``checkpoint:`` with two forms) reads best at its key.
    """
    if path in doc.keys and isinstance(value_at(doc.data, path), (dict, list)):
        return doc.keys[path]
    return doc.mark(path)


def _clean_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop the ``[key]`` marker (an error in a mapping's key, not its value) to get a field path."""
    return tuple(p for p in loc if p != "[key]")


def value_at(data: Any, loc: tuple[Any, ...]) -> Any:
    """The value at a field path of plain data, or None where the path does not exist."""
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return short_repr(value)


def _message(kind: str, err: dict[str, Any], value: Any) -> str:
    ctx = err.get("ctx") or {}
    got = _describe(err.get("input", value))
    if kind.startswith("ts_"):
        return str(err["msg"])
    simple = {
        "greater_than_equal": lambda: f"must be >= {ctx.get('ge')} (got {got})",
        "less_than_equal": lambda: f"must be <= {ctx.get('le')} (got {got})",
        "enum": lambda: f"must be one of {ctx.get('expected')} (got {got})",
        "literal_error": lambda: f"must be {ctx.get('expected')} (got {got})",
        "string_type": lambda: f"must be a string (got {got})",
        "int_type": lambda: f"must be a whole number (got {got})",
        "bool_type": lambda: f"must be true or false (got {got})",
        "float_type": lambda: f"must be a number (got {got})",
        "float_parsing": lambda: f"must be a number (got {got})",
        "list_type": lambda: f"must be a list (got {got})",
        "dict_type": lambda: f"must be a mapping (got {got})",
        "model_type": lambda: f"must be a mapping (got {got})",
        "too_short": lambda: f"must have at least {ctx.get('min_length')} item(s)",
        "too_long": lambda: f"must have at most {ctx.get('max_length')} item(s)",
        "string_too_short": lambda: f"must have at least {ctx.get('min_length')} character(s)",
        "string_too_long": lambda: f"must have at most {ctx.get('max_length')} characters",
    }
    make = simple.get(kind)
    return make() if make else str(err["msg"])


def _field_names(model: type[Model], loc: tuple[Any, ...]) -> list[str]:
    """The YAML names allowed in the mapping at ``loc`` (for did-you-mean)."""
    current = _unwrap(_leaf(model, loc))
    if isinstance(current, type) and issubclass(current, Model):
        return [f.alias or n for n, f in current.model_fields.items()]
    return []


def _leaf(model: type[Model], loc: tuple[Any, ...]) -> Any:
    """The (unwrapped) annotation of the field at ``loc``; None where the path leaves the models."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(part, int):
            args = typing.get_args(current)
            current = args[0] if args else None
        elif isinstance(current, type) and issubclass(current, Model):
            field = next((f for n, f in current.model_fields.items() if (f.alias or n) == part or n == part), None)
            current = field.annotation if field else None
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            return None
    return _unwrap(current)


def _unwrap(annotation: Any) -> Any:
    """Strip Optional/Annotated so the model class (or container) shows."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            models = [a for a in args if isinstance(a, type) and issubclass(a, (Model, enum.Enum))]
            annotation = models[0] if models else args[0]
        else:
            return annotation
