"""The one version parser (``trainspec.dsl.versions``), which ``--target``, a project's
``spec.target`` and the KFP launcher's ``trainer_api`` all read versions with."""

from __future__ import annotations

import pytest

from trainspec.compiler.targets import parse_target_option
from trainspec.dsl.versions import parse_version
from trainspec.kfp import merge


@pytest.mark.parametrize(
    ("text", "version"),
    [("2.3", (2, 3)), ("v2.3.0", (2, 3)), (" 0.19 ", (0, 19)), ("0.19.2", (0, 19)), ("10.11", (10, 11))],
)
def test_versions_are_major_and_minor(text: str, version: tuple[int, int]) -> None:
    assert parse_version(text) == version


@pytest.mark.parametrize("text", ["two", "2", "", "2.x", "2.3.0.1", "V2.3", "2.3-rc1", "2 .3"])
def test_anything_else_is_refused_saying_what_a_version_looks_like(text: str) -> None:
    with pytest.raises(ValueError, match=r"is not a version like 2\.3"):
        parse_version(text)


def test_every_reader_of_versions_uses_it() -> None:
    assert parse_target_option("trainer=v2.2.1,kueue=0.16")["trainer"] == (2, 2)
    assert merge.parse_trainer_api("v2.3.0") == (2, 3)
    for text in ("2.x", "V2.3"):
        with pytest.raises(ValueError, match=r"is not a version like 2\.3"):
            parse_target_option(f"trainer={text}")
        with pytest.raises(merge.MergeError, match=r"is not a version like 2\.3"):
            merge.parse_trainer_api(text)
