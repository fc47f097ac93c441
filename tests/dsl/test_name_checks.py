"""The name checks and the image reader of trainspec.dsl.kube_facts accept exactly what their
patterns accept: they stand in for ``re.fullmatch`` so that no pattern is compiled at start-up."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings, strategies as st

from trainspec.dsl import kube_facts as kf

#: The characters the rules turn on, the ones next to them (upper case, '_', ':', '/', '@'),
#: and some that no rule takes (a space, a newline, a non-ASCII letter and digit).
_ALPHABET = "abz019AZ-_.:/@[]%+ \n\u00e9\u0663"
_TEXT = st.text(alphabet=_ALPHABET, max_size=12)

CHECKS = [
    (kf.is_dns1035_label, kf.DNS1035_LABEL_PATTERN),
    (kf.is_dns1123_label, kf.DNS1123_LABEL_PATTERN),
    (kf.is_dns1123_subdomain, kf.DNS1123_SUBDOMAIN_PATTERN),
    (kf.is_qualified_name, kf.QUALIFIED_NAME_PATTERN),
    (kf.is_label_value, kf.LABEL_VALUE_PATTERN),
    (kf.is_env_name, kf.ENV_NAME_PATTERN),
    (kf.is_secret_key, kf.SECRET_KEY_PATTERN),
]
NAMES = [
    "",
    "a",
    "-",
    ".",
    "..",
    "..a",
    ".a",
    "a.",
    "a-b",
    "a--b",
    "-a",
    "a-",
    "0a",
    "a0",
    "A",
    "a_b",
    "_a",
    "a.b.c",
    "a..b",
    "abc\n",
    "a b",
    "\u00e9",
    "\u0663",
]


@pytest.mark.parametrize(("check", "pattern"), CHECKS, ids=[c.__name__ for c, _ in CHECKS])
@pytest.mark.parametrize("text", NAMES)
def test_a_check_accepts_what_its_pattern_accepts(check: object, pattern: str, text: str) -> None:
    assert callable(check)
    assert check(text) == bool(re.fullmatch(pattern, text))


@pytest.mark.parametrize(("check", "pattern"), CHECKS, ids=[c.__name__ for c, _ in CHECKS])
@settings(max_examples=400, deadline=None)
@given(text=_TEXT)
def test_a_check_agrees_with_its_pattern_on_generated_names(check: object, pattern: str, text: str) -> None:
    assert callable(check)
    assert check(text) == bool(re.fullmatch(pattern, text))


def _by_pattern(text: str) -> str | None:
    match = re.fullmatch(kf.IMAGE_REFERENCE_PATTERN, text)
    return match["name"] if match else None


_COMPONENT = st.text(alphabet="ab09._-", min_size=1, max_size=6)
_IMAGE = st.builds(
    lambda registry, parts, tag, digest: registry + "/".join(parts) + tag + digest,
    st.sampled_from(["", "registry.example.com/", "localhost:5000/", "Reg.io/", "[::1]:5000/", "nvcr.io/"]),
    st.lists(_COMPONENT, min_size=1, max_size=3),
    st.sampled_from(["", ":", ":latest", ":2.1-cuda12", ":_x", ":.x", ":-x", ":a/b", ":x:y", ":" + "t" * 129]),
    st.sampled_from(["", "@sha256:" + "a" * 64, "@sha256:short", "@"]),
)


@settings(max_examples=600, deadline=None)
@given(text=st.one_of(_IMAGE, _TEXT))
@example(text="pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime")
@example(text="repo:")
@example(text="a__b/c---d:e")
@example(text="a___b")
@example(text="a._b")
@example(text="host:5000/repo")
@example(text="Upper/repo:tag")
@example(text="repo:tag@sha256:" + "0" * 64)
def test_the_image_reader_finds_the_repository_the_pattern_finds(text: str) -> None:
    assert kf.image_repository(text) == _by_pattern(text)
