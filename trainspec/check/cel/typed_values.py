"""Values as the API server shows them to a CEL rule: typed, pruned and escaped by the schema.

Engine-neutral: the result is plain Python (``bool``, ``int``, ``float``, ``str``, ``bytes``,
``list``, ``dict``, ``None``, and :class:`datetime.datetime` / :class:`datetime.timedelta` for
the string formats the server converts). Each engine turns these into its own CEL values.

What the server does and this follows (apiextensions-apiserver, ``UnstructuredToVal`` and the
schema's CEL declaration type):

* ``integer`` is a CEL int, ``number`` a double (also when written as ``1``), an int-or-string
  stays what it is (CEL ``dyn``);
* strings with ``format: date-time``/``datetime``/``date`` are timestamps, ``duration`` a
  duration, ``byte`` bytes (base64-decoded); a value that does not parse stays a string (the
  structural schema reports it);
* fields the schema does not declare are pruned, unless the object preserves unknown fields
  or has ``additionalProperties``;
* property names are escaped (``a-b`` -> ``a__dash__b``). A name that is a CEL keyword
  (``namespace``) is reachable both escaped and plain: kube-apiserver accepts
  ``self.metadata.namespace`` and ``self.metadata.__namespace__`` alike since it recognises
  keywords as field names (Kubernetes 1.30). A name that cannot be escaped (it starts with a
  digit or holds other characters) is not visible to rules at all;
* at a resource root and in embedded resources, ``metadata`` shows only ``name`` and
  ``generateName``; ``apiVersion`` and ``kind`` are visible;
* an integer beyond int64 is a double (how the server decodes such a JSON number).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from trainspec.dsl.kube_facts import INT64_MAX

#: Identifiers CEL reserves (the CEL spec's RESERVED list, as Kubernetes escapes them).
CEL_RESERVED = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)
_ESCAPABLE = re.compile(r"^[A-Za-z_./-][A-Za-z0-9_./-]*$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w)")
_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "w": 604800.0,
}


@functools.lru_cache(maxsize=4096)  # field names repeat in every manifest
def escape_property(name: str) -> str | None:
    """How a CEL rule spells property ``name`` (``a-b`` -> ``a__dash__b``), as Kubernetes does;
    None when the name cannot be escaped (the field is then invisible to rules)."""
    if not _ESCAPABLE.match(name):
        return None
    if name in CEL_RESERVED:
        return f"__{name}__"
    return (
        name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")
    )


def type_matches(schema: Mapping[str, Any], value: Any) -> bool:
    """Does ``value`` have the schema's type? (Mismatches are TS500s; rules there are skipped,
    as the API server skips every rule once the structural schema found a type error.)"""
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
    expected = schema.get("type")
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "array":
        return isinstance(value, list)
    if expected == "object":
        return isinstance(value, dict)
    return True


def _parse_duration(text: str) -> dt.timedelta | None:
    # Go's time.ParseDuration plus the d/w units of the OpenAPI "duration" format.
    body = text.strip()
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("+-")
    if body == "0":
        return dt.timedelta(0)
    position, seconds = 0, 0.0
    while position < len(body):
        match = _DURATION_PART.match(body, position)
        if match is None:
            return None
        seconds += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    if not body or abs(seconds) > 9.2e9:
        return None
    return dt.timedelta(seconds=sign * seconds)


def _parse_timestamp(text: str, date_only: bool) -> dt.datetime | None:
    try:
        if date_only:
            day = dt.date.fromisoformat(text)
            return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)
        if not re.match(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}", text):
            return None
        moment = dt.datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.timezone.utc)


def _string_value(schema: Mapping[str, Any], value: str) -> Any:
    kind = schema.get("format")
    converted: Any = None
    if kind in ("date-time", "datetime"):
        converted = _parse_timestamp(value, date_only=False)
    elif kind == "date":
        converted = _parse_timestamp(value, date_only=True)
    elif kind == "duration":
        converted = _parse_duration(value)
    elif kind == "byte":
        try:
            converted = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            converted = None
    return value if converted is None else converted


def _number(value: int) -> Any:
    if -INT64_MAX - 1 <= value <= INT64_MAX:
        return value
    return float(value) if value.bit_length() <= 1023 else float("inf") if value > 0 else float("-inf")


def cel_value(schema: Mapping[str, Any], value: Any, *, root: bool = False, memo: dict[Any, Any] | None = None) -> Any:
    """``value`` as the API server shows it to CEL: typed, pruned and escaped by ``schema``.

    ``memo``: conversions of mappings and lists already made, by ``(id(schema), id(value), root)``
    (the walker converts a node's value for its rules, then nodes below it for theirs: with the
    memo each part is converted once). The caller keeps ``value`` alive while the memo is used.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value) if schema.get("type") == "number" else _number(value)
    if isinstance(value, str):
        return _string_value(schema, value) if schema.get("type") == "string" else value
    if not isinstance(value, (list, dict)):
        return value
    key = (id(schema), id(value), root)
    if memo is not None and key in memo:
        return memo[key]
    if isinstance(value, list):
        items = schema.get("items")
        items = items if isinstance(items, Mapping) else {}
        converted: Any = [cel_value(items, v, memo=memo) for v in value]
    else:
        converted = _object_value(schema, value, root, memo)
    if memo is not None:
        memo[key] = converted
    return converted


def cel_fields(
    schema: Mapping[str, Any],
    value: dict[str, Any],
    fields: frozenset[str],
    *,
    root: bool = False,
    memo: dict[Any, Any] | None = None,
    fill: Callable[[Any, Any], Any] | None = None,
) -> dict[str, Any]:
    """:func:`cel_value` of the object ``value`` with only the ``fields`` a rule selects (by the
    names rules spell them with), the rest left out: a rule that only selects those fields cannot
    tell. ``fill(schema, value)``: defaults applied to each field kept (its schema's)."""
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    chosen = {}
    for key, item in value.items():
        if key in fields or (isinstance(key, str) and escape_property(key) in fields):
            below = properties.get(key, extra)
            chosen[key] = fill(below, item) if fill is not None and isinstance(below, Mapping) else item
    return _object_value(schema, chosen, root, memo)


def _object_value(
    schema: Mapping[str, Any], value: dict[str, Any], root: bool, memo: dict[Any, Any] | None = None
) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    keep_all = schema.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = root or schema.get("x-kubernetes-embedded-resource") is True
    out: dict[str, Any] = {}
    for key, item in value.items():
        if embedded and key == "metadata" and isinstance(item, dict):
            # Rules see only name and generateName of an object's metadata.
            out[key] = {k: item[k] for k in ("name", "generateName") if isinstance(item.get(k), str)}
        elif embedded and key in ("apiVersion", "kind"):
            out[key] = item
        elif key in properties:
            name = escape_property(key)
            if name is None:
                continue
            out[name] = cel_value(properties[key], item, memo=memo)
            if key in CEL_RESERVED:
                out[key] = out[name]
        elif isinstance(extra, Mapping):
            out[key] = cel_value(extra, item, memo=memo)
        elif keep_all or extra is True:
            out[key] = _plain(item)
    return out


def _plain(value: Any) -> Any:
    """An undeclared (preserved) value: no schema, so only the int64 bound applies."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return _number(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
