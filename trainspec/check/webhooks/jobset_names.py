"""Names as the JobSet webhook checks them: domain-prefixed paths and generated names.

The webhook calls apimachinery's validators; the name rules themselves (``IsDNS1035Label``,
``IsDNS1123Subdomain``, ``IsValidLabelValue``) are :mod:`trainspec.k8s.name_rules`'. This module
adds ``IsDomainPrefixedPath`` and the name the webhook validates a JobSet under when only
``generateName`` is set.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from trainspec.k8s.name_rules import subdomain_problems
from trainspec.k8s.wellknown import (
    GENERATED_NAME_PREFIX_MAX,
    GENERATED_NAME_RANDOM,
    HTTP_PATH_PATTERN,
)

_HTTP_PATH = re.compile(HTTP_PATH_PATTERN)
#: Stands in for the random characters of a generated name ('x' is among those the API server
#: draws from, so the stand-in is exactly as valid as any real generated name).
_RANDOM_STAND_IN = "x" * GENERATED_NAME_RANDOM


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
