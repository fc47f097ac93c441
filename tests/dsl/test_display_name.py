"""How diagnostics name a file: relative to the working directory when below it."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings, strategies as st

from trainspec.dsl.load.discovery import posix_path
from trainspec.dsl.load.loaded import display_name


def _by_the_working_directory(path: str) -> str:
    """The rule spelled out the long way: absolute, then relative to the working directory."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    if absolute == cwd or not absolute.startswith(cwd.rstrip(os.sep) + os.sep):
        return Path(path).as_posix()
    return Path(os.path.relpath(absolute, cwd)).as_posix()


@pytest.mark.parametrize(
    "path",
    [
        "spec.yaml",
        "./spec.yaml",
        "a/b/spec.yaml",
        "a//b/./spec.yaml",
        "a/../spec.yaml",
        "a/b/../../c/spec.yaml",
        ".",
        "a/..",
        "..",
        "../spec.yaml",
        "../here/spec.yaml",
        "a/../../here/x.yaml",
        "a/../../elsewhere/x.yaml",
        "..spec.yaml",
        "...",
        "-",
    ],
)
def test_a_relative_path_is_named_as_the_long_way_names_it(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert display_name(path) == _by_the_working_directory(path)
    assert display_name(Path(path)) == _by_the_working_directory(str(Path(path)))


def test_an_absolute_path_below_the_working_directory_is_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert display_name(tmp_path / "a" / "spec.yaml") == "a/spec.yaml"
    assert display_name(str(tmp_path.parent / "x.yaml")) == (tmp_path.parent / "x.yaml").as_posix()


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="/.a-", max_size=12))
def test_posix_path_writes_a_path_as_pathlib_writes_it(text: str) -> None:
    assert posix_path(text) == PurePosixPath(text).as_posix()
