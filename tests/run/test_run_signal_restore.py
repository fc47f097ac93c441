"""The supervisor puts back the signal handlers it replaced, even ones Python cannot name.

Found by mypy: ``signal.signal`` returns None for a handler that was not installed from Python
(an embedding program's), and handing that None back raised TypeError after the run.
"""

from __future__ import annotations

import io
import os
import signal
import sys
from typing import Any

import pytest

from trainspec.run import processes
from trainspec.run.processes import Member, Supervisor


def test_a_handler_not_installed_from_python_is_restored_as_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, Any]] = []

    def fake_signal(sig: int, handler: Any) -> Any:
        if handler is None:  # what the real signal.signal does with None
            raise TypeError("signal handler must be signal.SIG_IGN, signal.SIG_DFL, or a callable object")
        calls.append((sig, handler))
        return None  # the previous handler was installed outside Python

    monkeypatch.setattr(processes.signal, "signal", fake_signal)
    outcome = Supervisor(io.BytesIO(), io.BytesIO()).run(
        [Member("node 0", [sys.executable, "-c", "pass"], dict(os.environ))]
    )
    assert outcome.code == 0
    assert calls[-2:] == [(signal.SIGINT, signal.SIG_DFL), (signal.SIGTERM, signal.SIG_DFL)]
