"""One builder per Draft 7 keyword of the compiled subset: ``(compiler, schema, value) -> check``.

Each check does what the jsonschema keyword function of the same name does (``_keywords.py``
of jsonschema 4: the same type guards, comparisons and messages), appending :class:`Problem`
records instead of yielding errors. A keyword value of a shape jsonschema would choke on, or
treat in a way this subset does not, raises :class:`Unsupported` (the caller falls back).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, Protocol

from trainspec.check.schema.go_patterns import python_pattern
from trainspec.check.schema.jsonschema_subset import (
    TYPES,
    Check,
    Lazy,
    Problem,
    Unsupported,
    equal,
    is_number,
    number,
    schema_like,
    unique,
)


class Linker(Protocol):
    """What a builder needs of the compiler."""

    def link(self, schema: Any) -> Check:
        """A check of ``schema``, compiled when first called."""
        ...

    def check(self, schema: Any) -> Check:
        """The check of ``schema``, compiled now."""
        ...

    def materialize(self, schema: Any) -> Any:
        """``schema`` wholly in JSON Schema form."""
        ...


def accept(instance: Any, path: Any, out: list[Problem]) -> None:
    """The check of ``true`` (and of a node with no keyword)."""


def refuse(instance: Any, path: Any, out: list[Problem]) -> None:
    """The check of ``false``."""
    out.append(Problem(None, None, instance, False, f"False schema does not allow {instance!r}", path))


def refuse_parent(instance: Any, path: Any, out: list[Problem]) -> None:
    """``false`` reached under a key: jsonschema reports it at the parent (its descend() returns
    before it adds the key to the error's path)."""
    refuse(instance, path[0], out)


def _keyed(c: Linker, schema: Any) -> Check:
    """The check of a sub-schema descended into under a key (a property, an item, an extra key)."""
    return refuse_parent if schema is False else c.link(schema)


def _type(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in TYPES for n in names):
        raise Unsupported("type")  # jsonschema raises UnknownType, or accepts nothing: keep its behaviour
    tests = tuple(TYPES[n] for n in names)
    listed = ", ".join(repr(n) for n in names)

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        for test in tests:
            if test(instance):
                return
        out.append(Problem("type", value, instance, schema, f"{instance!r} is not of type {listed}", path))

    return step


def _enum(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
    if not isinstance(value, list):
        raise Unsupported("enum")
    # The usual enum holds strings only: then only an equal string matches (jsonschema's equal()).
    strings = frozenset(value) if all(isinstance(v, str) for v in value) else None

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        if strings is not None:
            if isinstance(instance, str) and instance in strings:
                return
        elif any(equal(each, instance) for each in value):
            return
        out.append(Problem("enum", value, instance, schema, f"{instance!r} is not one of {value!r}", path))

    return step


def _properties(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and schema_like(v) for k, v in value.items()):
        raise Unsupported("properties")
    links = {name: _keyed(c, sub) for name, sub in value.items()}
    order = {name: i for i, name in enumerate(value)}

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        if not isinstance(instance, dict):
            return
        present = [k for k in instance if k in links]
        if len(present) > 1:
            present.sort(key=order.__getitem__)  # jsonschema descends in the schema's order
        for key in present:
            links[key](instance[key], (path, key), out)

    return step


def _extras(schema: Mapping[str, Any]) -> Callable[[dict[str, Any]], list[Any]]:
    """jsonschema's ``find_additional_properties`` for ``schema`` (keys in the instance's order)."""
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    if not isinstance(properties, Mapping) or not isinstance(patterns, Mapping):
        raise Unsupported("additionalProperties")
    try:
        joined = re.compile("|".join(patterns)) if patterns else None
    except (re.error, TypeError) as exc:
        raise Unsupported("patternProperties") from exc
    if joined is None:
        return lambda instance: [k for k in instance if k not in properties]
    return lambda instance: [k for k in instance if k not in properties and not joined.search(k)]


def _closed_message(schema: Mapping[str, Any], found: list[Any]) -> str:
    if "patternProperties" in schema:
        verb = "does" if len(found) == 1 else "do"
        joined = ", ".join(repr(each) for each in sorted(found))
        patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
        return f"{joined} {verb} not match any of the regexes: {patterns}"
    listed = ", ".join(repr(each) for each in sorted(found, key=str))
    return f"Additional properties are not allowed ({listed} {'was' if len(found) == 1 else 'were'} unexpected)"


def _additional(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
    extras = _extras(schema)
    if isinstance(value, bool):
        if value:
            return accept

        def closed(instance: Any, path: Any, out: list[Problem]) -> None:
            if isinstance(instance, dict):
                found = extras(instance)
                if found:
                    message = _closed_message(schema, found)
                    out.append(Problem("additionalProperties", value, instance, schema, message, path))

        return closed
    if not isinstance(value, (Mapping, Lazy)):
        raise Unsupported("additionalProperties")
    link = _keyed(c, value)

    def each(instance: Any, path: Any, out: list[Problem]) -> None:
        if isinstance(instance, dict):
            for key in extras(instance):
                link(instance[key], (path, key), out)

    return each


def _pattern_properties(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and schema_like(v) for k, v in value.items()):
        raise Unsupported("patternProperties")
    try:
        compiled = [(re.compile(p), _keyed(c, sub)) for p, sub in value.items()]
    except re.error as exc:
        raise Unsupported("patternProperties") from exc

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        if isinstance(instance, dict):
            for pattern, link in compiled:
                for key, item in instance.items():
                    if pattern.search(key):
                        link(item, (path, key), out)

    return step


def _items(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
    if not schema_like(value):
        raise Unsupported("items")  # a list is tuple validation
    link = _keyed(c, value)

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        if isinstance(instance, list):
            for index, item in enumerate(instance):
                link(item, (path, index), out)

    return step


def _required(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
    if not isinstance(value, list):
        raise Unsupported("required")

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        if isinstance(instance, dict):
            out.extend(
                Problem("required", value, instance, schema, f"{name!r} is a required property", path)
                for name in value
                if name not in instance
            )

    return step


def _bound(keyword: str, fails: Callable[[Any, Any], bool], says: str) -> Callable[..., Check]:
    """minimum, maximum and the exclusive ones: a number past ``value``."""

    def build(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
        if not number(value):
            raise Unsupported(keyword)

        def step(instance: Any, path: Any, out: list[Problem]) -> None:
            if is_number(instance) and fails(instance, value):
                message = f"{instance!r} is {says} {value!r}"
                out.append(Problem(keyword, value, instance, schema, message, path))

        return step

    return build


def _size(
    keyword: str, test: Callable[[Any], bool], fails: Callable[[int, Any], bool], says: Any
) -> Callable[..., Check]:
    """minLength/maxLength, minItems/maxItems, minProperties/maxProperties."""

    def build(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
        if not number(value):
            raise Unsupported(keyword)
        wording = says(value)

        def step(instance: Any, path: Any, out: list[Problem]) -> None:
            if test(instance) and fails(len(instance), value):
                out.append(Problem(keyword, value, instance, schema, f"{instance!r} {wording}", path))

        return step

    return build


def _pattern(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
    if not isinstance(value, str):
        raise Unsupported("pattern")
    try:
        search = re.compile(python_pattern(value)).search
    except re.error as exc:
        raise Unsupported("pattern") from exc  # jsonschema raises re.error: so does the fallback

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        if isinstance(instance, str) and not search(instance):
            out.append(Problem("pattern", value, instance, schema, f"{instance!r} does not match {value!r}", path))

    return step


def _multiple_of(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
    if not number(value) or not value:
        raise Unsupported("multipleOf")

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        if not is_number(instance):
            return
        if isinstance(value, float):
            quotient = instance / value
            try:
                failed = int(quotient) != quotient
            except OverflowError:
                failed = (Fraction(instance) / Fraction(value)).denominator != 1
        else:
            failed = bool(instance % value)
        if failed:
            out.append(
                Problem("multipleOf", value, instance, schema, f"{instance!r} is not a multiple of {value}", path)
            )

    return step


def _unique_items(c: Linker, schema: Mapping[str, Any], value: Any) -> Check:
    if not isinstance(value, bool):
        raise Unsupported("uniqueItems")

    def step(instance: Any, path: Any, out: list[Problem]) -> None:
        if value and isinstance(instance, list) and not unique(instance):
            out.append(Problem("uniqueItems", value, instance, schema, f"{instance!r} has non-unique elements", path))

    return step


def _is_object(v: Any) -> bool:
    return isinstance(v, dict)


def _is_array(v: Any) -> bool:
    return isinstance(v, list)


def _is_string(v: Any) -> bool:
    return isinstance(v, str)


#: Keyword -> builder (the combinators are in :mod:`.compiled`).
BUILDERS: dict[str, Callable[[Linker, Mapping[str, Any], Any], Check]] = {
    "type": _type,
    "enum": _enum,
    "properties": _properties,
    "additionalProperties": _additional,
    "patternProperties": _pattern_properties,
    "items": _items,
    "required": _required,
    "minimum": _bound("minimum", lambda i, v: i < v, "less than the minimum of"),
    "maximum": _bound("maximum", lambda i, v: i > v, "greater than the maximum of"),
    "exclusiveMinimum": _bound("exclusiveMinimum", lambda i, v: i <= v, "less than or equal to the minimum of"),
    "exclusiveMaximum": _bound("exclusiveMaximum", lambda i, v: i >= v, "greater than or equal to the maximum of"),
    "minLength": _size(
        "minLength", _is_string, lambda n, v: n < v, lambda v: "should be non-empty" if v == 1 else "is too short"
    ),
    "maxLength": _size(
        "maxLength", _is_string, lambda n, v: n > v, lambda v: "is expected to be empty" if v == 0 else "is too long"
    ),
    "minItems": _size(
        "minItems", _is_array, lambda n, v: n < v, lambda v: "should be non-empty" if v == 1 else "is too short"
    ),
    "maxItems": _size(
        "maxItems", _is_array, lambda n, v: n > v, lambda v: "is expected to be empty" if v == 0 else "is too long"
    ),
    "minProperties": _size(
        "minProperties",
        _is_object,
        lambda n, v: n < v,
        lambda v: "should be non-empty" if v == 1 else "does not have enough properties",
    ),
    "maxProperties": _size(
        "maxProperties",
        _is_object,
        lambda n, v: n > v,
        lambda v: "is expected to be empty" if v == 0 else "has too many properties",
    ),
    "pattern": _pattern,
    "multipleOf": _multiple_of,
    "uniqueItems": _unique_items,
}
