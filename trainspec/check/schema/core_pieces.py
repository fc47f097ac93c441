"""Built-in Kubernetes pieces the CRDs do not describe.

ObjectMeta: a CRD's root ``metadata`` is just ``type: object``; the API server validates it
with its own rules (name format, label syntax, known keys). :data:`OBJECT_META` is a strict
JSON Schema for it, with custom keywords checked in :mod:`.structural` with the name and label rules
of :mod:`trainspec.k8s.name_rules`.

The core kinds themselves (PersistentVolumeClaim's schema and built-in rules) are in
:mod:`.core_kinds`.
"""

from __future__ import annotations

from typing import Any

_STRING = {"type": "string"}
_STRING_MAP = {"type": "object", "additionalProperties": _STRING}

#: Strict JSON Schema for ObjectMeta. ``x-k8s-*`` keywords are implemented in .schema.
OBJECT_META: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "x-k8s-name-required": True,
    "properties": {
        "name": {"type": "string", "x-k8s-name": "subdomain"},
        "generateName": _STRING,
        "namespace": {"type": "string", "x-k8s-name": "label"},
        "labels": {"type": "object", "additionalProperties": _STRING, "x-k8s-labels": True},
        "annotations": {"type": "object", "additionalProperties": _STRING, "x-k8s-annotations": True},
        "finalizers": {"type": "array", "items": _STRING},
        "ownerReferences": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["apiVersion", "kind", "name", "uid"],
                "properties": {
                    "apiVersion": _STRING,
                    "kind": _STRING,
                    "name": _STRING,
                    "uid": _STRING,
                    "controller": {"type": "boolean"},
                    "blockOwnerDeletion": {"type": "boolean"},
                },
            },
        },
        "uid": _STRING,
        "resourceVersion": _STRING,
        "generation": {"type": "integer"},
        "creationTimestamp": {"type": ["string", "null"]},
        "deletionTimestamp": {"type": ["string", "null"]},
        "deletionGracePeriodSeconds": {"type": "integer"},
        "managedFields": {"type": "array", "items": {"type": "object"}},
        "selfLink": _STRING,
    },
}
