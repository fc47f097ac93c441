"""The README's console blocks are real: every ``$ trainspec ...`` line, run as a user would from
the repository root, prints what the README shows.

The commands run in a copy of the repository (``compile -o deploy/`` writes there), one block
after another in order, with ``../shared`` beside it as it is beside the checkout.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```console\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks() -> list[list[tuple[str, str]]]:
    """(command, expected output) pairs of every console block, in README order."""
    blocks = []
    for body in BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8")):
        pairs: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                pairs.append((line[2:], []))
            elif pairs:
                pairs[-1][1].append(line)
        blocks.append([(cmd, "\n".join(out)) for cmd, out in pairs])
    return blocks


def _runnable(command: str) -> bool:
    words = shlex.split(command)
    # Commands that write files a user picks (kfp -o, > redirects) print little worth pinning.
    return bool(words) and words[0] == "trainspec" and ">" not in words and "kfp" not in words[:2]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("readme")
    copy = base / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", "deploy", "__pycache__", "*.egg-info"))
    shared = ROOT.parent / "shared"
    if shared.is_dir():
        (base / "shared").symlink_to(shared)
    (copy / ".git").mkdir()  # a repository root: project discovery stops here, as in a checkout
    return copy


def _run(command: str, cwd: Path) -> str:
    words = shlex.split(command)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAINSPEC_")}
    env["XDG_CACHE_HOME"] = str(cwd.parent / "cache")
    done = subprocess.run(
        [sys.executable, "-m", "trainspec", *words[1:]],
        cwd=cwd,
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    return (done.stdout + done.stderr).rstrip("\n")


def test_every_console_block_shows_real_output(repo: Path) -> None:
    mismatches = []
    updates: list[tuple[str, str, str]] = []
    ran = 0
    for block in _blocks():
        for command, expected in block:
            if not _runnable(command):
                continue
            if "../shared" in command and not (repo.parent / "shared").is_dir():
                continue
            ran += 1
            actual = _run(command, repo)
            if actual != expected.rstrip("\n"):
                mismatches.append(f"$ {command}\n--- README\n{expected}\n--- actual\n{actual}")
                updates.append((command, expected.rstrip("\n"), actual))
    assert ran >= 8, "the README lost its examples"
    if os.environ.get("UPDATE_GOLDEN") and updates:  # after an intended change: rewrite, then review the diff
        text = (ROOT / "README.md").read_text(encoding="utf-8")
        for command, old, new in updates:
            text = text.replace(f"$ {command}\n{old}\n" if old else f"$ {command}\n", f"$ {command}\n{new}\n", 1)
        (ROOT / "README.md").write_text(text, encoding="utf-8")
        return
    assert not mismatches, "\n\n".join(mismatches)
