"""Reading a previous output tree (``--previous DIR``) walks it as every command walks a directory.

The one walker (``dsl.load.discovery.discover``) with ``file_links=False``: hidden entries are
skipped, links (to files or directories) are never read, and a part of the tree that cannot be
read stops the comparison with its name instead of silently hiding its objects' updates.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trainspec.check.day2 import read_previous

PVC = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: team}}\n"


def _names(objects: list[dict]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objects)


def test_a_tree_is_walked_in_full_and_hidden_entries_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "one.yaml").write_text(PVC.format(name="one"))
    (tmp_path / "a" / "b" / "two.YML").write_text(PVC.format(name="two"))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "three.yaml").write_text(PVC.format(name="three"))
    (tmp_path / "notes.txt").write_text(PVC.format(name="four"))
    assert _names(read_previous(str(tmp_path))) == ["one", "two"]


def test_links_in_the_tree_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.yaml").write_text(PVC.format(name="outside"))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "real.yaml").write_text(PVC.format(name="real"))
    (tree / "linked.yaml").symlink_to(outside / "x.yaml")
    (tree / "dir").symlink_to(outside)
    assert _names(read_previous(str(tree))) == ["real"]


def test_an_unreadable_directory_is_named_not_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "x.yaml").write_text(PVC.format(name="x"))
    real = os.scandir

    def scandir(path: os.PathLike | str) -> object:
        if Path(path).name == "locked":  # simulated: the tests may run as root
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(ValueError, match=r"locked: cannot read the directory: permission denied"):
        read_previous(str(tmp_path))
