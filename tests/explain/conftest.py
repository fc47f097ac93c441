"""Shared helpers for the explain tests: run the CLI in the repository root."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from trainspec.cli.main import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``run_cli("explain", ...)`` -> (exit code, stdout, stderr), run from the repository root."""
    monkeypatch.chdir(REPO)

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run
