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
        [sys.executable, "-m", "trainspec", *args],
        cwd=cwd or ROOT,
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


SHARED = ROOT.parent / "shared"


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under CI a missing ``../shared`` (real CRDs, upstream examples, API-server verdicts) is a
    failure: without it the CRD and differential tests would skip and CI would be green for nothing."""
    if (
        os.environ.get("CI", "").lower() == "true"
        and not (SHARED / "crds").is_dir()
        and not os.environ.get("TRAINSPEC_CRDS_DIR")
    ):
        raise pytest.UsageError(f"CI=true but {SHARED} is missing: the CRD tests would silently skip")
