"""Schema defaulting, as the API server does it before running CEL rules.

The API server fills in ``default:`` values from the structural schema when it decodes an
object, so CEL rules see defaulted fields (for example Kueue's ``preemption: {}`` becomes
``{withinClusterQueue: Never, reclaimWithinCohort: Never, borrowWithinCohort: {policy:
Never}}``). Defaults inside a defaulted value are applied too.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def apply_defaults(schema: Mapping[str, Any], value: Any) -> Any:
    """A deep copy of ``value`` with the schema's defaults filled in (``value`` is untouched)."""
    result = copy.deepcopy(value)
    _fill(schema, result)
    return result


def _fill(schema: Mapping[str, Any], value: Any) -> None:
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for name, sub in properties.items():
                # A null is not "absent" for a non-nullable field: the API server drops the
                # null and then defaults; for nullable fields the null is kept.
                if name in value and value[name] is None and "default" in sub and not sub.get("nullable"):
                    del value[name]
                if name not in value and "default" in sub:
                    value[name] = copy.deepcopy(sub["default"])
                if name in value:
                    _fill(sub, value[name])
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key, item in value.items():
                if not (isinstance(properties, Mapping) and key in properties):
                    _fill(extra, item)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in value:
                _fill(items, item)
