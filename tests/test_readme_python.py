"""The README's Python example is real: every ```python block followed by "prints" and a ```text
block runs as a user would run it (in a directory of its own: it writes ``deploy/``), and prints
exactly that text."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = re.compile(r"^```python\n(.*?)^```\n\nprints[^\n]*:\n\n```text\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _examples() -> list[tuple[str, str]]:
    return EXAMPLE.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_has_a_python_example_with_its_output() -> None:
    (code, _), *_ = _examples()
    for step in ("trainspec.validate(", "trainspec.compile(", ".to_yaml()", ".write(", "ValidationError"):
        assert step in code


@pytest.mark.parametrize("index", range(len(_examples())))
def test_the_python_example_prints_what_the_readme_shows(index: int, tmp_path: Path) -> None:
    code, expected = _examples()[index]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAINSPEC_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
    assert (tmp_path / "deploy").is_dir() or ".write(" not in code
