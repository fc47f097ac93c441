"""Kubernetes name checks as the JobSet webhook applies them, each returning every problem.

The webhook calls apimachinery's validators (``IsDNS1035Label``, ``IsDNS1123Subdomain``,
``IsValidLabelValue``, ``IsDomainPrefixedPath``), which report the length and the format
separately; these functions do the same, so a message can say both at once. They also hold
the name the webhook validates a JobSet under when only ``generateName`` is set.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from trainspec.k8s.wellknown import (
    DNS1035_LABEL_PATTERN,
    DNS1123_SUBDOMAIN_MAX,
    DNS1123_SUBDOMAIN_PATTERN,
    GENERATED_NAME_PREFIX_MAX,
    GENERATED_NAME_RANDOM,
    HTTP_PATH_PATTERN,
    LABEL_VALUE_MAX,
    LABEL_VALUE_PATTERN,
    NAME_MAX,
)

_DNS1035 = re.compile(DNS1035_LABEL_PATTERN)
_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_PATTERN)
_LABEL_VALUE = re.compile(LABEL_VALUE_PATTERN)
_HTTP_PATH = re.compile(HTTP_PATH_PATTERN)
#: Stands in for the random characters of a generated name ('x' is among those the API server
#: draws from, so the stand-in is exactly as valid as any real generated name).
_RANDOM_STAND_IN = "x" * GENERATED_NAME_RANDOM


def too_long(value: str, limit: int) -> str | None:
    """The length problem of ``value`` against ``limit``, or None."""
    return f"must be no more than {limit} characters (has {len(value)})" if len(value) > limit else None


def dns1035_problems(value: str) -> list[str]:
    """Why ``value`` is not an RFC 1035 label (length and format separately); [] when it is."""
    out = [p for p in (too_long(value, NAME_MAX),) if p]
    if not _DNS1035.match(value):
        out.append(
            "must be an RFC 1035 label: lowercase letters, digits and '-', starting with a letter "
            "and ending with a letter or digit"
        )
    return out


def subdomain_problems(value: str) -> list[str]:
    """Why ``value`` is not an RFC 1123 subdomain; [] when it is."""
    out = [p for p in (too_long(value, DNS1123_SUBDOMAIN_MAX),) if p]
    if not _SUBDOMAIN.match(value):
        out.append(
            "must be an RFC 1123 subdomain: lowercase letters, digits, '-' and '.', starting and "
            "ending with a letter or digit"
        )
    return out


def label_value_problems(value: str) -> list[str]:
    """Why ``value`` is not a valid label value; [] when it is."""
    out = [p for p in (too_long(value, LABEL_VALUE_MAX),) if p]
    if not _LABEL_VALUE.match(value):
        out.append(
            "must be a label value: empty, or letters, digits, '-', '_' and '.', starting and ending "
            "with a letter or digit"
        )
    return out


def domain_prefixed_path_problems(value: str) -> list[str]:
    """Why ``value`` is not a domain-prefixed path such as ``example.com/my-tool``; [] when it is."""
    if not value:
        return ["must not be empty"]
    host, slash, path = value.partition("/")
    if not slash or not host or not path:
        return ["must be a domain-prefixed path such as 'example.com/my-tool'"]
    out = [f"domain {host!r} {problem}" for problem in subdomain_problems(host)]
    if not _HTTP_PATH.match(path):
        out.append(f"path part {path!r} has characters a URL path does not allow")
    return out


def name_for_validation(metadata: Mapping[str, Any]) -> tuple[str | None, str]:
    """The name the webhook validates an object under, and the field it comes from.

    ``metadata.name`` when set; else ``generateName`` as the API server completes it (its first
    GENERATED_NAME_PREFIX_MAX characters plus random ones); else None.
    """
    name = metadata.get("name")
    if isinstance(name, str) and name:
        return name, "metadata.name"
    prefix = metadata.get("generateName")
    if isinstance(prefix, str) and prefix:
        return prefix[:GENERATED_NAME_PREFIX_MAX] + _RANDOM_STAND_IN, "metadata.generateName"
    return None, "metadata.name"


def generated_name_note(metadata: Mapping[str, Any]) -> str | None:
    """A hint that explains the generated-name budget when ``generateName`` decides the name."""
    name, origin = name_for_validation(metadata)
    if origin != "metadata.generateName" or name is None:
        return None
    return (
        f"generateName {metadata.get('generateName')!r} gives names of {len(name)} characters (the API "
        f"server keeps at most {GENERATED_NAME_PREFIX_MAX} characters of it and adds "
        f"{GENERATED_NAME_RANDOM} random ones)"
    )
