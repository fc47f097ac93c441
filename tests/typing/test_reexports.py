"""Every public name a package lists in ``__all__`` is a public name to a type checker too.

The packages re-export lazily (a ``__getattr__`` over a table, so importing them loads nothing more)
and declare the names for type checkers in an ``if TYPE_CHECKING:`` block. Under ``mypy --strict``
(no implicit re-export), and to pyright for an installed ``py.typed`` package, a name imported
there is private unless it is imported as ``X as X`` or listed in a literal ``__all__``: a user's
``from trainspec.stages import my_shards`` then fails their type check although it runs.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Runs mypy as a subprocess (seconds; slow: see pyproject's marker).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("trainspec", "trainspec.stages", "trainspec.kfp", "trainspec.k8s", "trainspec.client")


def _mypy() -> str:
    found = shutil.which("mypy", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("mypy is not installed, and CI=true requires the type tests: pip install -e '.[test]'")
        pytest.skip("mypy is not installed (pip install -e '.[test]' installs it)")
    return found


def test_every_name_in_all_is_an_explicit_export_under_mypy_strict(tmp_path: Path) -> None:
    snippets = []
    for package in PACKAGES:  # a file each: packages share names (trainspec.Network, trainspec.k8s.Network)
        names = list(importlib.import_module(package).__all__)
        assert names, package
        snippets.append(tmp_path / f"imports_{package.replace('.', '_')}.py")
        snippets[-1].write_text(f"from {package} import {', '.join(names)}\n", encoding="utf-8")
    done = subprocess.run(
        [
            _mypy(),
            "--strict",
            "--follow-imports=silent",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--python-version",
            "3.11",
            *map(str, snippets),
        ],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(ROOT)},
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    private = re.findall(r'Module "([\w.]+)" does not explicitly export attribute "(\w+)"', done.stdout)
    assert private == [], private
    assert done.returncode == 0, done.stdout + done.stderr
