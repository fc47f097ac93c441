"""The structure of a Grafana dashboard in the classic JSON model, as a JSON Schema.

Written from Grafana's "Dashboard JSON model" documentation (the classic model: ``title``,
``uid`` of at most 40 characters, ``panels``, ``schemaVersion``, ``time``, ``templating.list``,
``annotations.list``; each panel an ``id``, a ``type``, a ``title`` and a ``gridPos`` on the
24-column grid with ``h``/``w``/``x``/``y``; queries as ``targets`` with a ``refId``, a
``datasource`` reference ``{type, uid}`` and, for Prometheus, an ``expr``). Only what a
dashboard needs to load and what trainspec writes is pinned; Grafana accepts more.
"""

from __future__ import annotations

from typing import Any

DATASOURCE_REF = {
    "type": "object",
    "required": ["type", "uid"],
    "properties": {"type": {"type": "string", "minLength": 1}, "uid": {"type": "string", "minLength": 1}},
}
GRID_POS = {
    "type": "object",
    "required": ["h", "w", "x", "y"],
    "additionalProperties": False,
    "properties": {
        "h": {"type": "integer", "minimum": 1},
        "w": {"type": "integer", "minimum": 1, "maximum": 24},
        "x": {"type": "integer", "minimum": 0, "maximum": 23},
        "y": {"type": "integer", "minimum": 0},
        "static": {"type": "boolean"},
    },
}
TARGET = {
    "type": "object",
    "required": ["refId", "expr", "datasource"],
    "properties": {
        "refId": {"type": "string", "pattern": "^[A-Z]+$"},
        "expr": {"type": "string", "minLength": 1},
        "datasource": DATASOURCE_REF,
        "legendFormat": {"type": "string"},
    },
}
#: The panel types trainspec emits (Grafana core panel plugins).
PANEL_TYPES = ["row", "timeseries", "stat", "gauge", "bargauge", "table", "text"]
PANEL = {
    "type": "object",
    "required": ["id", "type", "title", "gridPos"],
    "properties": {
        "id": {"type": "integer", "minimum": 1},
        "type": {"enum": PANEL_TYPES},
        "title": {"type": "string"},
        "gridPos": GRID_POS,
        "datasource": DATASOURCE_REF,
        "targets": {"type": "array", "items": TARGET},
        "fieldConfig": {
            "type": "object",
            "required": ["defaults", "overrides"],
            "properties": {"defaults": {"type": "object"}, "overrides": {"type": "array"}},
        },
        "options": {"type": "object"},
        "collapsed": {"type": "boolean"},
        "panels": {"type": "array"},
    },
    # A query panel has its queries; a row has none of its own.
    "if": {"properties": {"type": {"not": {"const": "row"}}}},
    "then": {"required": ["targets", "datasource", "fieldConfig"], "properties": {"targets": {"minItems": 1}}},
}
VARIABLE = {
    "type": "object",
    "required": ["name", "type"],
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
        "type": {"enum": ["query", "datasource", "custom", "constant", "interval", "textbox", "adhoc"]},
    },
}
DASHBOARD: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["title", "uid", "panels", "schemaVersion", "time", "templating", "annotations"],
    "properties": {
        "id": {"type": ["integer", "null"]},
        "uid": {"type": "string", "minLength": 1, "maxLength": 40, "pattern": "^[A-Za-z0-9_-]+$"},
        "title": {"type": "string", "minLength": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "timezone": {"type": "string"},
        "editable": {"type": "boolean"},
        "graphTooltip": {"enum": [0, 1, 2]},
        "time": {
            "type": "object",
            "required": ["from", "to"],
            "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
        },
        "refresh": {"type": ["string", "boolean"]},
        "schemaVersion": {"type": "integer", "minimum": 36},
        "version": {"type": "integer", "minimum": 0},
        "panels": {"type": "array", "minItems": 1, "items": PANEL},
        "templating": {
            "type": "object",
            "required": ["list"],
            "properties": {"list": {"type": "array", "items": VARIABLE}},
        },
        "annotations": {"type": "object", "required": ["list"], "properties": {"list": {"type": "array"}}},
        "links": {"type": "array"},
    },
}
