"""docs/gitops.md's walkthrough is real: its commands, run in order in a new Git repository made
from docs/gitops/, print what the page shows."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "gitops.md"
BLOCK = re.compile(r"^```console\n(.*?)^```", re.MULTILINE | re.DOTALL)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def commands() -> list[tuple[str, str]]:
    """Every ``$ command`` of the page's console blocks with the output shown under it, in order."""
    pairs: list[tuple[str, list[str]]] = []
    for body in BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        for line in body.splitlines():
            if line.startswith("$ "):
                pairs.append((line[2:], []))
            elif pairs:
                pairs[-1][1].append(line)
    return [(command, "\n".join(out)) for command, out in pairs]


def test_the_walkthrough_prints_what_the_page_shows(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "docs" / "gitops", repo)
    bindir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        "GIT_AUTHOR_NAME": "trainspec docs",
        "GIT_AUTHOR_EMAIL": "docs@trainspec.invalid",
        "GIT_COMMITTER_NAME": "trainspec docs",
        "GIT_COMMITTER_EMAIL": "docs@trainspec.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(tmp_path),
        "COLUMNS": "200",
    }
    env.pop("TRAINSPEC_DEBUG", None)
    for setup in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "specs"]):
        subprocess.run(setup, cwd=repo, env=env, check=True, capture_output=True, timeout=60)
    steps = commands()
    assert len(steps) >= 10, "the walkthrough lost its commands"
    printed: list[str] = []
    for command, expected in steps:
        if command.startswith("trainspec "):
            command = f"{sys.executable} -m trainspec {command[len('trainspec ') :]}"
        done = subprocess.run(
            ["bash", "-c", command],
            check=False,
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        shown = (done.stdout + done.stderr).rstrip("\n")
        printed.append(shown)
        if not os.environ.get("UPDATE_GOLDEN"):
            assert shown == expected, f"$ {command}\n--- the page shows ---\n{expected}\n--- it printed ---\n{shown}"
    if os.environ.get("UPDATE_GOLDEN"):  # after an intended change: rewrite the outputs, review the diff
        PAGE.write_text(_with_outputs(PAGE.read_text(encoding="utf-8"), printed), encoding="utf-8")


def _with_outputs(text: str, printed: list[str]) -> str:
    outputs = iter(printed)

    def block(match: re.Match[str]) -> str:
        lines = [
            f"{line}\n{out}" if (out := next(outputs)) else line
            for line in re.findall(r"^\$ .*$", match.group(1), re.M)
        ]
        return "```console\n" + "\n".join(lines) + "\n```"

    return BLOCK.sub(block, text)
