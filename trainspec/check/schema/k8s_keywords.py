"""The ``x-k8s-*`` keywords of the converted schemas: the API server's own rules on names,
labels, annotations and list types, which OpenAPI cannot say.

Each rule is a plain function ``(value, instance) -> [(message, path), ...]`` (``path``: the
keys below the instance the finding is at), shared by both validators of :mod:`.structural`:
the compiled one (:mod:`.compiled`) and jsonschema, which gets them through :data:`JSONSCHEMA`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from trainspec.check._paths import short
from trainspec.dsl.kube_facts import ANNOTATIONS_TOTAL_MAX
from trainspec.k8s.name_rules import label_problem, label_value_problem, qualified_name_problem, subdomain_problem

Finding = tuple[str, tuple[Any, ...]]


def _name(mode: Any, instance: Any) -> list[Finding]:
    """``x-k8s-name: subdomain|label``: an object name or namespace."""
    if isinstance(instance, str):
        problem = subdomain_problem(instance) if mode == "subdomain" else label_problem(instance)
        if problem:
            return [(f"invalid name {short(instance)}: {problem}", ())]
    return []


def _name_required(enabled: Any, instance: Any) -> list[Finding]:
    """``x-k8s-name-required``: ObjectMeta needs ``name`` or ``generateName``."""
    if enabled and isinstance(instance, dict) and not instance.get("name") and not instance.get("generateName"):
        return [("missing required field 'name' (or 'generateName')", ("name",))]
    return []


def _labels(enabled: Any, instance: Any) -> list[Finding]:
    """``x-k8s-labels``: label keys and values."""
    if not (enabled and isinstance(instance, dict)):
        return []
    out: list[Finding] = []
    for key, value in instance.items():
        problem = qualified_name_problem(str(key))
        if problem:
            out.append((f"invalid label key {short(key)}: {problem}", (key,)))
        if isinstance(value, str):
            problem = label_value_problem(value)
            if problem:
                out.append((f"invalid label value {short(value)}: {problem}", (key,)))
    return out


def _annotations(enabled: Any, instance: Any) -> list[Finding]:
    """``x-k8s-annotations``: annotation keys, and the size of them all."""
    if not (enabled and isinstance(instance, dict)):
        return []
    out: list[Finding] = []
    for key in instance:
        problem = qualified_name_problem(str(key))
        if problem:
            out.append((f"invalid annotation key {short(key)}: {problem}", (key,)))
    # The API server counts bytes (Go's len), not characters (apimachinery ValidateAnnotationsSize).
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in instance.items())
    if size > ANNOTATIONS_TOTAL_MAX:
        out.append((f"annotations are too long: {size} bytes, the limit is {ANNOTATIONS_TOTAL_MAX}", ()))
    return out


def _list_map_keys(keys: Any, instance: Any) -> list[Finding]:
    """``x-k8s-list-map-keys``: no two entries of a ``list-type: map`` share their keys."""
    if not isinstance(instance, list):
        return []
    out: list[Finding] = []
    seen: dict[tuple[Any, ...], int] = {}
    for index, item in enumerate(instance):
        if not isinstance(item, dict):
            continue
        key = tuple(repr(item.get(k)) for k in keys)
        if key in seen:
            described = ", ".join(f"{k}={short(item.get(k))}" for k in keys)
            out.append((f"duplicate entry ({described}): already at index {seen[key]}", (index,)))
        else:
            seen[key] = index
    return out


def _list_set(enabled: Any, instance: Any) -> list[Finding]:
    """``x-k8s-list-set``: no value twice in a ``list-type: set``."""
    if not (enabled and isinstance(instance, list)):
        return []
    out: list[Finding] = []
    seen: list[Any] = []
    for index, item in enumerate(instance):
        if any(type(item) is type(other) and item == other for other in seen):
            out.append((f"duplicate value {short(item)} in a set", (index,)))
        seen.append(item)
    return out


#: Keyword -> rule.
RULES: dict[str, Callable[[Any, Any], list[Finding]]] = {
    "x-k8s-name": _name,
    "x-k8s-name-required": _name_required,
    "x-k8s-labels": _labels,
    "x-k8s-annotations": _annotations,
    "x-k8s-list-map-keys": _list_map_keys,
    "x-k8s-list-set": _list_set,
}


def _for_jsonschema(rule: Callable[[Any, Any], list[Finding]]) -> Callable[..., Iterator[Any]]:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        from jsonschema import ValidationError

        for message, path in rule(value, instance):
            yield ValidationError(message, path=list(path)) if path else ValidationError(message)

    return keyword


#: The same rules as jsonschema keyword functions (``validators.extend``).
JSONSCHEMA: dict[str, Callable[..., Iterator[Any]]] = {
    keyword: _for_jsonschema(rule) for keyword, rule in RULES.items()
}
