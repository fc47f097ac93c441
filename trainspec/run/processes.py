"""Run a job's processes like the pods of one JobSet: together, prefixed, and stopped together.

Each member (a node, the launcher, the sharding stage) runs in a process group of its own, so
that everything it starts (torchrun's workers, mpirun's ranks) can be signalled at once. The
rules follow what a cluster does:

* when a member's main process exits, the rest of its group is killed, as a container's
  processes end with it;
* when a member fails, the others get SIGTERM, then SIGKILL after the grace period, as the
  JobSet's failure policy deletes the other pods; the exit status is the first failure's;
* SIGINT or SIGTERM to trainspec stops every group the same way (a second one kills at once),
  and the exit status is 128 + the signal's number.

Output is read line by line and written with the member's prefix (``[node 0] ...``); stderr
stays stderr.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from types import FrameType

    #: What ``signal.signal`` returns: None for a handler that was not installed from Python.
    _Handler = Callable[[int, FrameType | None], Any] | int | None

#: Seconds between SIGTERM and SIGKILL (Kubernetes' default terminationGracePeriodSeconds).
GRACE_SECONDS = 30.0
#: Longest piece of a line written at once: a process printing without newlines still shows.
_CHUNK = 64 << 10
_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class Member:
    """One process group to run."""

    label: str
    argv: Sequence[str]
    env: dict[str, str]
    cwd: str | None = None


@dataclass
class Outcome:
    """How a run ended."""

    code: int
    #: The label of the first member that failed (None: none failed).
    failed: str | None = None
    #: The signal that stopped the run (None: it ran to its end).
    interrupted: int | None = None
    codes: dict[str, int] = field(default_factory=dict)


class StartError(Exception):
    """A member's program could not be started (not found, not executable)."""

    def __init__(self, member: Member, error: OSError) -> None:
        super().__init__(f"{member.argv[0]}: {error.strerror or error}")
        self.member = member
        self.error = error


def exit_code(returncode: int) -> int:
    """A Popen return code as a shell reports it: killed by signal N is 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


class _Running:
    def __init__(self, member: Member, proc: subprocess.Popen[bytes], threads: list[threading.Thread]) -> None:
        self.member = member
        self.proc = proc
        self.threads = threads
        self.code: int | None = None


def _pump(stream: BinaryIO, prefix: bytes, sink: BinaryIO, lock: threading.Lock) -> None:
    """Copy ``stream`` to ``sink`` line by line, each line prefixed (thread body)."""
    for line in iter(lambda: stream.readline(_CHUNK), b""):
        if not line.endswith(b"\n"):
            line += b"\n"
        with lock:
            try:
                sink.write(prefix + line)
                sink.flush()
            except (BrokenPipeError, ValueError):  # our reader went away; keep draining the child
                pass
    stream.close()


def _signal_group(running: _Running, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(running.proc.pid, sig)


class Supervisor:
    """Starts members, relays their output, and ends them all together."""

    def __init__(self, stdout: BinaryIO, stderr: BinaryIO, *, grace: float = GRACE_SECONDS) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.grace = grace
        self._lock = threading.Lock()
        self._stop: int | None = None
        self._kill_now = False

    # -- signals: the first asks every group to stop, the second kills them -----------------------

    def _on_signal(self, signum: int, _frame: object) -> None:
        if self._stop is None:
            self._stop = signum
        else:
            self._kill_now = True

    def _install(self) -> dict[int, _Handler]:
        if threading.current_thread() is not threading.main_thread():
            return {}  # only the main thread may set handlers (an embedding caller keeps its own)
        return {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    def run(self, members: Sequence[Member]) -> Outcome:
        """Run ``members`` to the end (see the module docstring); raises :class:`StartError`."""
        previous = self._install()
        running: list[_Running] = []
        try:
            for member in members:
                running.append(self._start(member))
                if self._stop is not None:
                    break
            return self._wait(running)
        except BaseException:
            for item in running:  # never leave a group behind, whatever went wrong here
                _signal_group(item, signal.SIGKILL)
            raise
        finally:
            for item in running:
                if item.proc.poll() is None:
                    _signal_group(item, signal.SIGKILL)
                    item.proc.wait()
                for thread in item.threads:
                    thread.join(timeout=5)
            for sig, handler in previous.items():
                # None (installed outside Python) cannot be handed back: the default is the nearest.
                signal.signal(sig, signal.SIG_DFL if handler is None else handler)

    def _start(self, member: Member) -> _Running:
        try:
            proc = subprocess.Popen(
                list(member.argv),
                env=member.env,
                cwd=member.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise StartError(member, exc) from None
        prefix = f"[{member.label}] ".encode()
        threads = [
            threading.Thread(target=_pump, args=(stream, prefix, sink, self._lock), daemon=True)
            for stream, sink in ((proc.stdout, self.stdout), (proc.stderr, self.stderr))
        ]
        for thread in threads:
            thread.start()
        return _Running(member, proc, threads)

    def _wait(self, running: list[_Running]) -> Outcome:
        outcome = Outcome(code=0)
        deadline: float | None = None
        while True:
            for item in running:
                if item.code is None and (rc := item.proc.poll()) is not None:
                    item.code = exit_code(rc)
                    outcome.codes[item.member.label] = item.code
                    _signal_group(item, signal.SIGKILL)  # what the leader left behind ends with it
                    if item.code != 0 and outcome.failed is None and self._stop is None:
                        outcome.failed, outcome.code = item.member.label, item.code
            alive = [item for item in running if item.code is None]
            if not alive:
                break
            if deadline is None and (outcome.failed is not None or self._stop is not None):
                for item in alive:
                    _signal_group(item, signal.SIGTERM)
                deadline = time.monotonic() + self.grace
            if deadline is not None and (self._kill_now or time.monotonic() >= deadline):
                for item in alive:
                    _signal_group(item, signal.SIGKILL)
            time.sleep(_POLL_SECONDS)
        if self._stop is not None:
            outcome.interrupted = self._stop
            outcome.code = 128 + self._stop
        return outcome
