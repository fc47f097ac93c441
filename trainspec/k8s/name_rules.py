"""The Kubernetes rules for object names, namespaces and label keys and values: their one owner.

Each ``*_problems`` function says every way a value breaks the rule (the length and the form
apart, as apimachinery's validators do), each ``*_problem`` the first of them, or None. One
message style for all: ``must be no more than 63 characters (has 70)``, ``must be an RFC 1123
subdomain: lowercase letters, ...``. The checker's schema, CEL and webhook rules
(:mod:`trainspec.check`), the Kueue pre-flight (:mod:`trainspec.kueue`) and the cluster commands
(:mod:`trainspec.kube`) all apply them, so they live below all. The patterns and limits are
:mod:`trainspec.dsl.kube_facts`'s, which the spec language's own field types use too (with the
spec language's wording, "not a valid RFC 1035 name (example: llama-sft)"). Standard library only.
"""

from __future__ import annotations

import re

from trainspec.dsl.kube_facts import (
    DNS1035_LABEL_PATTERN,
    DNS1123_LABEL_MAX,
    DNS1123_LABEL_PATTERN,
    DNS1123_SUBDOMAIN_MAX,
    DNS1123_SUBDOMAIN_PATTERN,
    LABEL_VALUE_MAX,
    LABEL_VALUE_PATTERN,
    QUALIFIED_NAME_PATTERN,
)

DNS1035_LABEL = re.compile(DNS1035_LABEL_PATTERN)
DNS1123_LABEL = re.compile(DNS1123_LABEL_PATTERN)
DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_PATTERN)
_QUALIFIED_NAME = re.compile(QUALIFIED_NAME_PATTERN)
_LABEL_VALUE = re.compile(LABEL_VALUE_PATTERN)

#: The message style of every rule: the length, then the form in words (what the API server checks).
_FORMS = {
    "dns1035": "must be an RFC 1035 label: lowercase letters, digits and '-', starting with a letter "
    "and ending with a letter or digit",
    "label": "must be an RFC 1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit",
    "subdomain": "must be an RFC 1123 subdomain: lowercase letters, digits, '-' and '.', starting and "
    "ending with a letter or digit",
    "label value": "must be a label value: empty, or letters, digits, '-', '_' and '.', starting and "
    "ending with a letter or digit",
}


def too_long(value: str, limit: int) -> str | None:
    """The length problem of ``value`` against ``limit``, or None."""
    return f"must be no more than {limit} characters (has {len(value)})" if len(value) > limit else None


def _problems(value: str, limit: int, pattern: re.Pattern[str], form: str) -> list[str]:
    long = too_long(value, limit)
    return [*([long] if long else []), *([] if pattern.fullmatch(value) else [_FORMS[form]])]


def dns1035_problems(value: str) -> list[str]:
    """Why ``value`` is not an RFC 1035 label (TrainJob, Service and job names): the length and the
    form, each said apart as apimachinery's ``IsDNS1035Label`` does; [] when it is one."""
    return _problems(value, DNS1123_LABEL_MAX, DNS1035_LABEL, "dns1035")


def label_problems(value: str) -> list[str]:
    """Why ``value`` is not an RFC 1123 label (namespaces); [] when it is one."""
    return _problems(value, DNS1123_LABEL_MAX, DNS1123_LABEL, "label")


def subdomain_problems(value: str) -> list[str]:
    """Why ``value`` is not an RFC 1123 subdomain (most object names); [] when it is one."""
    return _problems(value, DNS1123_SUBDOMAIN_MAX, DNS1123_SUBDOMAIN, "subdomain")


def label_value_problems(value: str) -> list[str]:
    """Why ``value`` is not a valid label value; [] when it is one."""
    return _problems(value, LABEL_VALUE_MAX, _LABEL_VALUE, "label value")


def dns1035_problem(value: str) -> str | None:
    """The first of :func:`dns1035_problems` (the length before the form), or None."""
    return next(iter(dns1035_problems(value)), None)


def subdomain_problem(value: str) -> str | None:
    """The first of :func:`subdomain_problems` (object names), or None."""
    return next(iter(subdomain_problems(value)), None)


def label_problem(value: str) -> str | None:
    """The first of :func:`label_problems` (namespaces), or None."""
    return next(iter(label_problems(value)), None)


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
    long = too_long(name, DNS1123_LABEL_MAX)
    if long:
        return f"name part {long}"
    if not _QUALIFIED_NAME.fullmatch(name):
        return "name part must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
    return None


def label_value_problem(value: str) -> str | None:
    """The first of :func:`label_value_problems`, or None."""
    return next(iter(label_value_problems(value)), None)
