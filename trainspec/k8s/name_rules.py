"""The Kubernetes rules for object names, namespaces and label keys and values.

Each function says why a value breaks the rule (the API server's wording), or returns None. The
checker's schema and webhook rules (:mod:`trainspec.check`) and the Kueue pre-flight
(:mod:`trainspec.kueue`) both apply them, so they live below both. Standard library only.
"""

from __future__ import annotations

import re

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
