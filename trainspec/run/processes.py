"""Run a job's processes like the pods of one JobSet: together, prefixed, and stopped together.

Each member (a node, the launcher, the sharding stage) runs in a process group of its own, so
that everything it starts (torchrun's workers, mpirun's ranks) can be signalled at once, under a
keeper process (:mod:`.keeper`) that ends everything the member started, wherever it went (on
Linux: sessions of its own included, as torchrun's workers have), when the member's main process
exits and when trainspec goes away, even by SIGKILL: a run never leaves orphans behind. The rules
follow what a cluster does:

* when a member's main process exits, whatever it left running is killed, as a container's
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
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from trainspec.dsl.errors import TrainspecError

if TYPE_CHECKING:
    from types import FrameType

    #: What ``signal.signal`` returns: None for a handler that was not installed from Python.
    _Handler = Callable[[int, FrameType | None], Any] | int | None

#: Seconds between SIGTERM and SIGKILL (Kubernetes' default terminationGracePeriodSeconds).
GRACE_SECONDS = 30.0
#: Longest piece of a line written at once: a process printing without newlines still shows.
_CHUNK = 64 << 10
_POLL_SECONDS = 0.05
#: The keeper, run by path with the standard library only (``-I -S``): no site, no user environment.
KEEPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keeper.py")
#: Bounds for a keeper that hangs (never reached in practice: it answers and ends in milliseconds).
_KEEPER_START_SECONDS = 120.0
_KEEPER_END_SECONDS = 60.0


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


class StartError(TrainspecError):
    """A member's program could not be started (not found, not executable)."""

    def __init__(self, member: Member, error: OSError) -> None:
        super().__init__(f"{member.argv[0]}: {error.strerror or error}")
        self.member = member
        self.error = error


def exit_code(returncode: int) -> int:
    """A Popen return code as a shell reports it: killed by signal N is 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


class _Running:
    """A member under its keeper: ``proc`` is the keeper, ``group`` the member's process group."""

    def __init__(self, member: Member, proc: subprocess.Popen[bytes], control: socket.socket) -> None:
        self.member = member
        self.proc = proc
        self.control: socket.socket | None = control
        self.group: int | None = None
        self.threads: list[threading.Thread] = []
        self.code: int | None = None

    def stop(self, sig: int) -> None:
        """Ask the member to stop: the keeper forwards ``sig`` to the member's process group."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.proc.pid, sig)

    def kill(self) -> None:
        """End the member and everything it started: closing the socket tells its keeper to."""
        if self.control is not None:
            with contextlib.suppress(OSError):
                self.control.close()
            self.control = None

    def ended(self) -> None:
        """After the keeper exited: it ended the member's processes, unless it was killed itself."""
        self.kill()
        if self.proc.returncode is not None and self.proc.returncode < 0 and self.group is not None:
            # The member's main process died with its keeper (PDEATHSIG); the rest of its group may not have.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.group, signal.SIGKILL)

    def finish(self) -> None:
        """Kill, and wait for the keeper (killing the group itself should the keeper not end)."""
        if self.proc.poll() is None:
            self.kill()
            try:
                self.proc.wait(timeout=_KEEPER_END_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                if self.group is not None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(self.group, signal.SIGKILL)
        self.ended()


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


def _handshake(control: socket.socket) -> tuple[int | None, OSError | None]:
    """The keeper's first line: ``started PID`` (the member's group) or ``error ERRNO TEXT``."""
    control.settimeout(_KEEPER_START_SECONDS)
    data = b""
    try:
        while not data.endswith(b"\n"):
            chunk = control.recv(256)
            if not chunk:
                break
            data += chunk
    except OSError as exc:
        return None, exc
    finally:
        control.settimeout(None)
    word, _, rest = data.decode(errors="replace").strip().partition(" ")
    if word == "started" and rest.isdigit():
        return int(rest), None
    if word == "error":
        number, _, text = rest.partition(" ")
        return None, OSError(int(number) if number.isdigit() else 0, text or "cannot start")
    return None, OSError(0, f"the keeper ended before starting the program ({data!r})")


class Supervisor:
    """Starts members, relays their output, and ends them all together."""

    def __init__(
        self, stdout: BinaryIO, stderr: BinaryIO, *, grace: float = GRACE_SECONDS, hold_fds: Sequence[int] = ()
    ) -> None:
        """``hold_fds``: descriptors every keeper keeps open until it has ended its member (not passed
        to the member): the work directory's lock stays held until no process of the run is left."""
        self.stdout = stdout
        self.stderr = stderr
        self.grace = grace
        self.hold_fds = tuple(hold_fds)
        self._lock = threading.Lock()
        self._stop: int | None = None
        self._kill_now = False

    # -- signals: the first asks every group to stop, the second kills them -----------------------

    def _on_signal(self, signum: int, _frame: object) -> None:
        if self._stop is None:
            self._stop = signum
        else:
            self._kill_now = True

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """Stop every member as ``signum`` would, from any thread (a step's timeout): the run ends as
        an interruption by ``signum``; a second call kills at once."""
        self._on_signal(signum, None)

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
            for item in running:  # never leave a member behind, whatever went wrong here
                item.kill()
            raise
        finally:
            for item in running:
                item.finish()
                for thread in item.threads:
                    thread.join(timeout=5)
            for sig, handler in previous.items():
                # None (installed outside Python) cannot be handed back: the default is the nearest.
                signal.signal(sig, signal.SIG_DFL if handler is None else handler)

    def _start(self, member: Member) -> _Running:
        ours, theirs = socket.socketpair()  # both ends non-inheritable: only this keeper gets one
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", KEEPER, str(theirs.fileno()), *member.argv],
                env=member.env,
                cwd=member.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # Ctrl-C reaches trainspec alone, which stops every member in order
                pass_fds=(theirs.fileno(), *self.hold_fds),
            )
        except OSError as exc:
            ours.close()
            raise StartError(member, exc) from None
        finally:
            theirs.close()
        running = _Running(member, proc, ours)
        prefix = f"[{member.label}] ".encode()
        running.threads = [
            threading.Thread(target=_pump, args=(stream, prefix, sink, self._lock), daemon=True)
            for stream, sink in ((proc.stdout, self.stdout), (proc.stderr, self.stderr))
        ]
        for thread in running.threads:
            thread.start()
        running.group, error = _handshake(ours)
        if error is not None:
            running.finish()
            for thread in running.threads:
                thread.join(timeout=5)
            raise StartError(member, error)
        return running

    def _wait(self, running: list[_Running]) -> Outcome:
        outcome = Outcome(code=0)
        deadline: float | None = None
        while True:
            for item in running:
                if item.code is None and (rc := item.proc.poll()) is not None:
                    item.code = exit_code(rc)
                    outcome.codes[item.member.label] = item.code
                    item.ended()  # what the main process left behind ended with it (its keeper saw to that)
                    if item.code != 0 and outcome.failed is None and self._stop is None:
                        outcome.failed, outcome.code = item.member.label, item.code
            alive = [item for item in running if item.code is None]
            if not alive:
                break
            if deadline is None and (outcome.failed is not None or self._stop is not None):
                for item in alive:
                    item.stop(signal.SIGTERM)
                deadline = time.monotonic() + self.grace
            if deadline is not None and (self._kill_now or time.monotonic() >= deadline):
                for item in alive:
                    item.kill()
            time.sleep(_POLL_SECONDS)
        if self._stop is not None:
            outcome.interrupted = self._stop
            outcome.code = 128 + self._stop
        return outcome
