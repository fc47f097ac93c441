"""The keeper of one member of a local run: starts its program, and ends everything the program started
when the program's main process ends or when ``trainspec run`` goes away, even by SIGKILL.

``trainspec run`` starts one keeper per member (``python -I -S keeper.py FD PROGRAM ARGS...``, by path
and with the standard library only, so it starts in milliseconds whatever the environment) and keeps
the other end of the socket ``FD``. The keeper:

* starts the program in a session (and process group) of its own, with the member's environment, its
  output going straight to trainspec's pipes, and answers ``started PID`` (or ``error ERRNO TEXT``);
* forwards SIGTERM and SIGINT to the program's process group (trainspec's "please stop");
* when the program's main process exits, kills whatever it left running and exits with its status,
  as a container's processes end with its main process;
* when the socket closes (trainspec closed it to kill the member, or trainspec died: the kernel closes
  it then, SIGKILL included), kills everything and exits.

"Everything" is the program's process group, and on Linux every descendant of the keeper, wherever it
moved: the keeper is a child subreaper (``PR_SET_CHILD_SUBREAPER``), so what is orphaned below it is
reparented to it rather than to init, and it kills by walking ``/proc`` until nothing is left. That
covers the workers torchrun starts in sessions of their own. The program's main process also dies with
the keeper (``PR_SET_PDEATHSIG``), should the keeper itself be killed: armed from the keeper's only
thread, as that signal follows the death of the thread that forked, not of the process. Out of reach:
processes that a program hands to another parent (a daemon started through systemd, a container
runtime); elsewhere than Linux, whatever left the program's process group.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable

#: prctl(2) options (linux/prctl.h).
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: Give up on descendants that do not die within this (a process stuck in the kernel), not to hold the run.
_KILL_WITHIN = 30.0
_FORWARDED = (signal.SIGTERM, signal.SIGINT)


def _prctl() -> Callable[..., int] | None:
    """libc's prctl (Linux), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


def _die_with(parent: int, prctl: Callable[..., int] | None) -> Callable[[], None] | None:
    """A preexec function: the program's main process gets SIGKILL when the keeper dies."""
    if prctl is None:
        return None

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the keeper died before the signal was armed
            os._exit(137)

    return arm


def _descendants(root: int) -> list[int]:
    """Live (not zombie) descendants of ``root``, from ``/proc`` (empty where there is none)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        if fields and fields[0] not in (b"Z", b"X"):
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


class _Keeper:
    def __init__(self, control: socket.socket, program: list[str]) -> None:
        self.control = control
        self.program = program
        self.group = 0
        self.status: int | None = None
        self.main: subprocess.Popen[bytes] | None = None

    def reap(self) -> None:
        """Collect every ended child (orphans reparented here included); note the main process's status."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.main is not None and pid == self.main.pid:
                code = os.waitstatus_to_exitcode(status)
                self.status = 128 - code if code < 0 else code
                self.main.returncode = code  # reaped here: the Popen object must not wait for it

    def kill_all(self) -> int:
        """SIGKILL to the program's group and every descendant until none is left and the main process
        is reaped (or the bound passed); returns the main process's exit status."""
        deadline = time.monotonic() + _KILL_WITHIN
        while True:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.group, signal.SIGKILL)
            left = _descendants(os.getpid())
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            self.reap()
            if (not left and self.status is not None) or time.monotonic() > deadline:
                return 128 + signal.SIGKILL if self.status is None else self.status
            time.sleep(0.005)  # SIGKILL takes effect asynchronously: look again

    def run(self) -> int:
        prctl = _prctl()
        if prctl is not None:
            prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        os.set_blocking(wake_read, False)
        # Python handlers (not SIG_IGN, which the program would inherit): signals only wake the loop.
        for sig in (signal.SIGCHLD, *_FORWARDED):
            signal.signal(sig, lambda _signum, _frame: None)
        signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
        try:
            self.main = subprocess.Popen(
                self.program, stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with(os.getpid(), prctl)
            )
        except OSError as exc:
            self._say(f"error {exc.errno or 0} {exc.strerror or exc}")
            return 127 if isinstance(exc, FileNotFoundError) else 126
        self.group = self.main.pid
        self._say(f"started {self.main.pid}")
        while self.status is None:
            ready, _, _ = select.select([self.control.fileno(), wake_read], [], [])
            if wake_read in ready:
                with contextlib.suppress(BlockingIOError):
                    for signum in os.read(wake_read, 512):
                        if signum in _FORWARDED:
                            with contextlib.suppress(ProcessLookupError, PermissionError):
                                os.killpg(self.group, signum)
                self.reap()
            if self.control.fileno() in ready and not self._read():
                break  # trainspec closed the socket or is gone: end everything now
        return self.kill_all()

    def _read(self) -> bool:
        """False once the other end is closed."""
        try:
            return bool(self.control.recv(64))
        except OSError:
            return False

    def _say(self, line: str) -> None:
        with contextlib.suppress(OSError):
            self.control.sendall(line.encode() + b"\n")


def main(argv: list[str]) -> int:
    """``keeper.py FD PROGRAM ARGS...``: see the module docstring."""
    control = socket.socket(fileno=int(argv[1]))
    return _Keeper(control, argv[2:]).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
