"""Schema defaulting, as the API server does it before running CEL rules.

The API server fills in ``default:`` values from the structural schema when it decodes an
object, so CEL rules see defaulted fields (for example Kueue's ``preemption: {}`` becomes
``{withinClusterQueue: Never, reclaimWithinCohort: Never, borrowWithinCohort: {policy:
Never}}``). Defaults inside a defaulted value are applied too.

Copy on write: the result shares every part of the object (and of the schema's default values)
that no default changes, and copies only the mappings and lists on the way to a change. A
compiled manifest is mostly left as it is, so a check no longer deep-copies every manifest.
The result is read, never written (by CEL and the update rules).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def apply_defaults(schema: Mapping[str, Any], value: Any) -> Any:
    """``value`` with the schema's defaults filled in (``value`` is untouched; unchanged parts are
    shared with it, so treat the result as read-only)."""
    return _fill(schema, value)


def _fill(schema: Mapping[str, Any], value: Any) -> Any:
    """``value`` defaulted: the same object when no default applies below it, else a new one."""
    plan = _plan(schema)
    if plan is None:
        return value  # most of a CRD's schema has no default anywhere below: nothing to walk
    fields, properties, extra, items = plan
    if isinstance(value, dict):
        out, _ = _own_level(fields, value)  # a shallow copy once anything changes
        for name, sub, _, _ in fields:
            if name in out:
                filled = _fill(sub, out[name])
                if filled is not out[name]:
                    if out is value:
                        out = dict(value)
                    out[name] = filled
        if extra is not None:
            for key, item in list(out.items()):
                if not (properties is not None and key in properties):
                    filled = _fill(extra, item)
                    if filled is not item:
                        if out is value:
                            out = dict(value)
                        out[key] = filled
        return out
    if isinstance(value, list) and items is not None:
        changed = None
        for index, item in enumerate(value):
            filled = _fill(items, item)
            if filled is not item:
                if changed is None:
                    changed = list(value)
                changed[index] = filled
        if changed is not None:
            return changed
    return value


def fill_level(schema: Mapping[str, Any], value: Any) -> Any:
    """:func:`apply_defaults` at the top level of ``value`` only: the nulls dropped and the defaults
    added there (each default filled whole), the values already there left as they are (a walk
    fills them when it reaches them: the CEL walk goes only where rules are)."""
    plan = _plan(schema)
    if plan is None or not isinstance(value, dict):
        return value
    out, added = _own_level(plan[0], value)
    for name, sub in added:
        out[name] = _fill(sub, out[name])
    return out


def _own_level(fields: list[tuple[str, Any, bool, bool]], value: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """``value`` with the nulls of its non-nullable fields dropped and its absent defaults added
    (the default itself, never written to), copied only if either happened; and the defaulted
    ``(name, schema)`` pairs. In the schema's order, as the server goes."""
    out = value
    added = []
    for name, sub, default, drop_null in fields:
        # A null is not "absent" for a non-nullable field: the API server drops the null and then
        # defaults; for nullable fields the null is kept.
        if drop_null and name in out and out[name] is None:
            if out is value:
                out = dict(value)
            del out[name]
        if default and name not in out:
            if out is value:
                out = dict(value)
            out[name] = sub["default"]
            added.append((name, sub))
    return out, added


_Plan = tuple[list[tuple[str, Any, bool, bool]], "Mapping[str, Any] | None", Any, Any]


def _plan(schema: Any) -> _Plan | None:
    """What defaulting does at ``schema`` (memoised on its identity): the fields that have a
    default or defaults below them, the schema of other keys and of items when defaults are below
    those; None when nothing below ``schema`` has a default. A sub-schema that is not a mapping
    has none (the structural step has already refused such a CRD). Built only for the nodes a
    walk reaches; whether defaults are below a node is a cheaper question (:func:`_below`)."""
    found = _PLANS.get(id(schema))
    if found is not None and found[0] is schema:
        return found[1]
    plan: _Plan | None = None
    if isinstance(schema, Mapping) and _below(schema):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else None
        fields = [
            (name, sub, "default" in sub, "default" in sub and not sub.get("nullable"))
            for name, sub in (properties or {}).items()
            if isinstance(sub, Mapping) and ("default" in sub or _below(sub))
        ]
        extra, items = schema.get("additionalProperties"), schema.get("items")
        extra = extra if isinstance(extra, Mapping) and _below(extra) else None
        items = items if isinstance(items, Mapping) and _below(items) else None
        plan = (fields, properties, extra, items)
    if len(_PLANS) > 500_000:  # bound the memo in long-lived processes (tests, servers)
        _PLANS.clear()
    _PLANS[id(schema)] = (schema, plan)
    return plan


def _below(schema: Mapping[str, Any]) -> bool:
    """Is there a ``default`` anywhere below ``schema``? (Memoised; stops at the first one found.)"""
    found = _BELOW.get(id(schema))
    if found is not None and found[0] is schema:
        return found[1]
    value = False
    properties = schema.get("properties")
    for sub in properties.values() if isinstance(properties, Mapping) else ():
        if isinstance(sub, Mapping) and ("default" in sub or _below(sub)):
            value = True
            break
    else:
        for sub in (schema.get("additionalProperties"), schema.get("items")):
            if isinstance(sub, Mapping) and _below(sub):
                value = True
                break
    if len(_BELOW) > 500_000:
        _BELOW.clear()
    _BELOW[id(schema)] = (schema, value)
    return value


_PLANS: dict[int, tuple[Any, _Plan | None]] = {}
_BELOW: dict[int, tuple[Any, bool]] = {}
