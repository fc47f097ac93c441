"""Shared fixtures: project paths and a helper to run the CLI in-process or as a real process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
INVALID = EXAMPLES / "invalid"


@pytest.fixture
def root() -> Path:
    return ROOT


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``trainspec`` as a user would: a separate process, real exit code and streams."""
    return subprocess.run(
        [sys.executable, "-m", "trainspec", *args], cwd=cwd or ROOT, capture_output=True, text=True,
        env={**os.environ, **(env or {})}, timeout=120,
    )
