"""Built-in Kubernetes pieces the CRDs do not describe.

* ObjectMeta: a CRD's root ``metadata`` is just ``type: object``; the API server validates it
  with its own rules (name format, label syntax, known keys). :data:`OBJECT_META` is a strict
  JSON Schema for it, with custom keywords checked in :mod:`.schema`.
* The name and label rules those keywords use (also used by the webhook rules).

The core kinds themselves (PersistentVolumeClaim's schema and built-in rules) are in
:mod:`.core_kinds`; ``CORE_KINDS`` and ``PVC_SCHEMA`` are still importable from here.
"""

from __future__ import annotations

import re
from typing import Any

from trainspec.dsl.wellknown import (
    DNS1123_LABEL_MAX,
    DNS1123_LABEL_PATTERN,
    DNS1123_SUBDOMAIN_MAX,
    DNS1123_SUBDOMAIN_PATTERN,
    LABEL_VALUE_MAX,
    LABEL_VALUE_PATTERN,
    QUALIFIED_NAME_PATTERN,
)

DNS1123_LABEL = re.compile(DNS1123_LABEL_PATTERN)
DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_PATTERN)
_QUALIFIED_NAME = re.compile(QUALIFIED_NAME_PATTERN)
_LABEL_VALUE = re.compile(LABEL_VALUE_PATTERN)


def subdomain_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 subdomain (object names), or None."""
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        return f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters (has {len(value)})"
    if not DNS1123_SUBDOMAIN.fullmatch(value):
        return "must be a lowercase RFC 1123 subdomain ([a-z0-9], '-', '.', alphanumeric at both ends)"
    return None


def label_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 label (namespaces), or None."""
    if len(value) > DNS1123_LABEL_MAX:
        return f"must be no more than {DNS1123_LABEL_MAX} characters (has {len(value)})"
    if not DNS1123_LABEL.fullmatch(value):
        return "must be a lowercase RFC 1123 label ([a-z0-9] and '-', alphanumeric at both ends)"
    return None


def qualified_name_problem(key: str) -> str | None:
    """Why ``key`` is not a valid label/annotation key (``[prefix/]name``), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return "prefix before '/' must not be empty"
    if slash:
        problem = subdomain_problem(prefix)
        if problem:
            return f"prefix {prefix!r} {problem}"
    if not name:
        return "name part must not be empty"
    if len(name) > DNS1123_LABEL_MAX:
        return f"name part must be no more than {DNS1123_LABEL_MAX} characters (has {len(name)})"
    if not _QUALIFIED_NAME.fullmatch(name):
        return "name part must consist of alphanumerics, '-', '_' or '.', alphanumeric at both ends"
    return None


def label_value_problem(value: str) -> str | None:
    """Why ``value`` is not a valid label value, or None."""
    if len(value) > LABEL_VALUE_MAX:
        return f"must be no more than {LABEL_VALUE_MAX} characters (has {len(value)})"
    if not _LABEL_VALUE.fullmatch(value):
        return "must be empty or alphanumerics, '-', '_' or '.', alphanumeric at both ends"
    return None


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


def __getattr__(name: str) -> Any:
    # The core kinds moved to .core_kinds (which imports this module); old imports keep working.
    if name in ("CORE_KINDS", "PVC_SCHEMA"):
        from . import core_kinds

        return getattr(core_kinds, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
