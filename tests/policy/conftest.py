"""Shared helper for the policy tests: run the CLI in-process."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from trainspec.cli.main import main


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``run_cli("diff", ...)`` -> (exit code, stdout, stderr)."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run
