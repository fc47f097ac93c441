"""How diagnostics name a file: relative to the working directory when below it."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings, strategies as st

from trainspec.dsl.load.discovery import posix_path
from trainspec.dsl.load.loaded import display_name


def _by_the_working_directory(path: str) -> str:
    """The rule spelled out the long way: absolute, then relative to the working directory; as
    given when a ``..`` follows a name (``link/..`` is not where the text says)."""
    parts = Path(path).parts
    if any(part == ".." and any(p not in ("..", "/") for p in parts[:i]) for i, part in enumerate(parts)):
        return Path(path).as_posix()
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


def test_a_climb_out_of_a_linked_directory_names_the_file_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``lnk/../spec.yaml`` with ``lnk`` a link to ``real/sub`` is ``real/spec.yaml``, not ``spec.yaml``."""
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "lnk").symlink_to(tmp_path / "real" / "sub")
    monkeypatch.chdir(tmp_path)
    assert display_name("lnk/../spec.yaml") == "lnk/../spec.yaml"
    assert display_name(str(tmp_path / "lnk" / ".." / "spec.yaml")) == f"{tmp_path.as_posix()}/lnk/../spec.yaml"
    assert display_name("../" + tmp_path.name + "/spec.yaml") == "spec.yaml"  # a leading climb is no name's


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


def test_problems_found_while_walking_are_named_like_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO met in a walk (TS118) and a spec's own problem (TS105), under a directory given by
    its absolute path, are both named from the working directory."""
    from trainspec.dsl.load.spec_sources import load_specs

    specs = tmp_path / "specs"
    specs.mkdir()
    os.mkfifo(specs / "fifo.yaml")
    (specs / "dup.yaml").write_text("apiVersion: trainspec.dev/v1alpha1\nkind: TrainingJob\nkind: TrainingJob\n")
    monkeypatch.chdir(tmp_path)
    _, problems = load_specs([str(specs)])
    named = {d.code: d.file for d in problems}
    assert named["TS118"] == "specs/fifo.yaml" and named["TS105"] == "specs/dup.yaml", named
