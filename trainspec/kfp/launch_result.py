"""What a launch ends with: its result, its errors (SIGTERM's among them), and the TrainJob state.

Kept apart from the launcher so the component, the tests and callers can use them without
the kubernetes client.
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from trainspec.dsl.errors import TrainspecError
from trainspec.kube.state import job_state

#: Exit status after SIGTERM, as a shell reports a process killed by it (128 + 15).
SIGTERM_EXIT = 143

__all__ = [
    "LaunchResult",
    "LauncherError",
    "Terminated",
    "TrainJobFailed",
    "TrainJobTimeout",
    "job_state",
    "sigterm_raises",
]


@dataclass
class LaunchResult:
    """The final status of one launch; ``to_json`` is the step's status artifact."""

    name: str
    namespace: str
    phase: str
    reason: str = ""
    message: str = ""
    run_id: str = ""
    attached: bool = False
    conditions: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    def metadata(self) -> dict[str, str]:
        """Small string fields for the artifact's metadata (shown in the KFP UI)."""
        return {"name": self.name, "namespace": self.namespace, "phase": self.phase, "reason": self.reason}


class LauncherError(RuntimeError, TrainspecError):
    """The launch failed; ``result`` holds the last known status when there is one."""

    def __init__(self, message: str, result: LaunchResult | None = None) -> None:
        super().__init__(message)
        self.result = result


class TrainJobFailed(LauncherError):
    """The TrainJob reached ``Failed``."""


class TrainJobTimeout(LauncherError):
    """The launcher's timeout passed; the TrainJob was deleted."""


class Terminated(SystemExit):
    """SIGTERM arrived (the run was cancelled). A SystemExit, so no ``except Exception`` stops it."""

    def __init__(self) -> None:
        super().__init__(SIGTERM_EXIT)


class Timeout(BaseException):
    """Internal: the deadline passed. A BaseException, so ``except Exception`` wrappers let it through;
    :func:`~trainspec.kfp.launcher.run_launcher` turns it into :class:`TrainJobTimeout`."""


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` in the main thread (elsewhere: no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
