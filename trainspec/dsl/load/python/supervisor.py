"""Run a Python spec module in a child process and supervise it: time, memory, output, exit.

One child per module (``sys.executable -I``, :mod:`trainspec.dsl.load.python.child`), in a session and
process group of its own, so that nothing a module does reaches trainspec's process: its output
goes to pipes trainspec drains (never to trainspec's stdout), its exit status and signals end only
the child, and what it hands back is data (:mod:`trainspec.dsl.load.python.protocol`) checked here and
validated again by :mod:`trainspec.dsl.load.python.module`.

* **Time**: the limit starts when the child is ready to run the module. At the limit the child's
  :mod:`faulthandler` writes where the module was; :data:`GRACE` seconds later trainspec kills the
  whole process group with SIGKILL. Nothing in the child (signal handlers, ``signal.alarm``,
  threads, forks) can stop that. Starting the interpreter has its own limit, :data:`STARTUP_LIMIT`.
* **Memory**: the child caps its address space (:data:`trainspec.dsl.load.python.child.MEMORY_LIMIT`).
* **Output**: at most :data:`~trainspec.dsl.load.python.protocol.MAX_RESULT_BYTES` of result and
  :data:`~trainspec.dsl.load.python.protocol.MAX_RAW_OUTPUT` bytes of output are kept; output is read to
  the end (and counted) so a writer never blocks.
* **Processes left behind**: once the child has ended, every process of its group and session,
  and on Linux every process still carrying its run token in its environment (forks that called
  ``setsid``, daemons), is killed with SIGKILL; a module that left one running gets TS122.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.load.python.protocol import (
    FRAME,
    MAX_RAW_OUTPUT,
    MAX_RESULT_BYTES,
    MAX_TRACE_BYTES,
    READY,
    TOKEN_VARIABLE,
    Payload,
    split_frame,
)
from trainspec.dsl.load.python.trace import ended_at, sweep, timed_out_at
from trainspec.dsl.record import Record

#: Seconds between the time limit and the kill: the child's traceback of where it was lands first.
GRACE = 0.3
#: Seconds the interpreter may take to start and import trainspec before the module runs.
STARTUP_LIMIT = 60.0
_PROCESS = "the Python process for the spec module"
#: Seconds between checks of the child's state where the system cannot signal its exit (no pidfd).
_POLL = 0.01

_running: dict[int, str] = {}  # process group -> token, for kill_running()
_running_lock = threading.Lock()


class Outcome(Record):
    """How a child ended: a complete result (``payload``) or a diagnostic code and reason."""

    payload: Payload | None = None
    #: TS115 (time limit), TS120 (no complete result) or TS121 (result too large); None: complete.
    code: Code | None = None
    reason: str = ""
    #: The spec line the module was at when it ended this way, when the child said so.
    line: int | None = None
    #: Descriptor-level output (the first bytes) and how many more bytes were written.
    raw: bytes = b""
    raw_dropped: int = 0
    #: Processes the module left running after it handed its result back (all killed).
    leftovers: int = 0


def run_child(filename: str, *, timeout: float | None, run_name: str) -> Outcome:
    """Run the spec module at ``filename`` (absolute) in a supervised child; see the module docstring."""
    import json

    from trainspec.dsl.load.python.child import BOOTSTRAP, MEMORY_LIMIT

    if not sys.executable:
        return Outcome(code=codes.PYTHON_ENDED, reason=f"{_PROCESS} could not start: sys.executable is empty")
    token = os.urandom(8).hex()
    out_r, out_w = os.pipe()
    res_r, res_w = os.pipe()
    trace_r, trace_w = os.pipe()
    release_r, release_w = os.pipe()  # the child waits on it after handing back its result
    request = {
        "file": filename,
        "run_name": run_name,
        "path": [p for p in sys.path if isinstance(p, str)],
        "result_fd": res_w,
        "trace_fd": trace_w,
        "release_fd": release_r,
        "timeout": timeout,
        "memory": MEMORY_LIMIT,
        "parent": os.getpid(),
    }
    try:
        child = subprocess.Popen(
            [sys.executable, "-I", "-c", BOOTSTRAP, json.dumps(request)],
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=out_w,
            pass_fds=(res_w, trace_w, release_r),
            start_new_session=True,
            env={**os.environ, TOKEN_VARIABLE: token},
        )
    except OSError as exc:
        for fd in (out_r, out_w, res_r, res_w, trace_r, trace_w, release_r, release_w):
            os.close(fd)
        return Outcome(code=codes.PYTHON_ENDED, reason=f"{_PROCESS} could not start ({exc.strerror or exc})")
    for fd in (out_w, res_w, trace_w, release_r):
        os.close(fd)
    with _running_lock:
        _running[child.pid] = token
    watch = _Watch(child, out_r, res_r, trace_r)
    try:
        state = watch.run(timeout)
    finally:
        leftovers = sweep(child.pid, token)
        os.close(release_w)
        child.wait()
        with _running_lock:
            _running.pop(child.pid, None)
        watch.finish()
    return _outcome(filename, child, watch, state, leftovers, timeout)


def kill_running() -> None:
    """Kill every child still running (trainspec itself is being interrupted)."""
    with _running_lock:
        running = list(_running.items())
    for pgid, token in running:
        sweep(pgid, token)


class _Watch:
    """Reads a child's pipes until it exits, its time is up, or it hands back too much."""

    def __init__(self, child: subprocess.Popen[bytes], out_fd: int, result_fd: int, trace_fd: int) -> None:
        self.child = child
        self.out_fd, self.result_fd, self.trace_fd = out_fd, result_fd, trace_fd
        self.limits = {out_fd: MAX_RAW_OUTPUT, result_fd: len(READY) + 32 + MAX_RESULT_BYTES, trace_fd: MAX_TRACE_BYTES}
        self.data: dict[int, bytearray] = {fd: bytearray() for fd in self.limits}
        self.dropped: dict[int, int] = dict.fromkeys(self.limits, 0)
        self.ready = False
        self.frame_end: int | None = None

    def run(self, timeout: float | None) -> str:
        """``handed`` (the result can be judged), ``exited``, ``timeout``, ``startup`` or ``overflow``."""
        import selectors

        started = time.monotonic()
        deadline: float | None = started + STARTUP_LIMIT
        selector = selectors.DefaultSelector()
        for fd in self.limits:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        pidfd = _pidfd(self.child.pid)
        if pidfd is not None:
            selector.register(pidfd, selectors.EVENT_READ)
        try:
            while True:
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    return "timeout" if self.ready else "startup"
                wait = None if deadline is None else deadline - now
                if pidfd is None:
                    wait = _POLL if wait is None else min(wait, _POLL)
                for key, _ in selector.select(wait):
                    if key.fd == pidfd:
                        continue
                    if not self._read(key.fd):
                        selector.unregister(key.fd)
                if len(self.data[self.result_fd]) + self.dropped[self.result_fd] > self.limits[self.result_fd]:
                    return "overflow"
                if not self.ready and self.data[self.result_fd].startswith(READY):
                    self.ready = True
                    deadline = time.monotonic() + timeout + GRACE if timeout else None
                if self.ready and self._frame_in():
                    return "handed"
                if _exited(self.child.pid):
                    return "exited"
        finally:
            selector.close()
            if pidfd is not None:
                os.close(pidfd)

    def _frame_in(self) -> bool:
        """Whether the result can be judged: a whole frame follows READY, or a header that is none.

        The header is read once, so a large result is never copied while it streams in.
        """
        data = self.data[self.result_fd]
        if self.frame_end is None:
            window = bytes(data[len(READY) : len(READY) + len(FRAME) + 24])
            newline = window.find(b"\n")
            if newline < 0 and len(window) < len(FRAME) + 24:
                return False  # the header is still coming
            size = window[len(FRAME) : newline] if newline > 0 else b""
            whole = newline > 0 and window.startswith(FRAME) and size.isdigit()
            self.frame_end = len(READY) + newline + 1 + int(size) if whole else -1
        return self.frame_end < 0 or self.frame_end <= len(data)

    def _read(self, fd: int) -> bool:
        """Read what is there (keeping up to the fd's limit); False at end of file."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not chunk:
            return False
        room = max(self.limits[fd] + 1 - len(self.data[fd]), 0)
        self.data[fd] += chunk[:room]
        self.dropped[fd] += len(chunk) - len(chunk[:room])
        return True

    def finish(self) -> None:
        """Read what is left to the end of each pipe (every writer is dead now), then close them."""
        import select

        for fd in self.limits:
            waits = 0
            while len(self.data[fd]) <= self.limits[fd] and waits < 10:
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:  # a writer in the kernel's hands still: wait for it, boundedly
                    waits += 1
                    select.select([fd], [], [], 0.05)
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                room = max(self.limits[fd] + 1 - len(self.data[fd]), 0)
                self.data[fd] += chunk[:room]
                self.dropped[fd] += len(chunk) - len(chunk[:room])
            os.close(fd)


def _exited(pid: int) -> bool:
    """Whether the child has ended, leaving it unreaped: its pid (and group) stay its own until the sweep is done."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped already
        return True


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:  # an older kernel, or the child already reaped
        return None
    return fd


def _outcome(
    filename: str,
    child: subprocess.Popen[bytes],
    watch: _Watch,
    state: str,
    leftovers: int,
    timeout: float | None,
) -> Outcome:
    from trainspec.dsl.load.python.protocol import decode

    out_fd, res_fd, trace_fd = watch.out_fd, watch.result_fd, watch.trace_fd
    raw = bytes(watch.data[out_fd][:MAX_RAW_OUTPUT])
    raw_dropped = watch.dropped[out_fd] + max(len(watch.data[out_fd]) - MAX_RAW_OUTPUT, 0)
    trace = bytes(watch.data[trace_fd]).decode("ascii", errors="replace")
    base = Outcome(raw=raw, raw_dropped=raw_dropped)
    if state == "overflow":
        return _with(
            base,
            codes.PYTHON_RESULT_TOO_LARGE,
            f"the spec module handed back more than {MAX_RESULT_BYTES >> 20} MiB of specs",
        )
    if state == "timeout":
        return _with(base, codes.PYTHON_TIMEOUT, f"{timeout:g}s", timed_out_at(trace, filename))
    if state == "startup":
        return _with(base, codes.PYTHON_ENDED, f"{_PROCESS} did not start within {STARTUP_LIMIT:g}s")
    result = bytes(watch.data[res_fd])
    if len(result) > watch.limits[res_fd]:
        return _with(
            base,
            codes.PYTHON_RESULT_TOO_LARGE,
            f"the spec module handed back more than {MAX_RESULT_BYTES >> 20} MiB of specs",
        )
    how = _exit_words(child.returncode)
    if not result.startswith(READY):
        return _with(base, codes.PYTHON_ENDED, f"{_PROCESS} failed before running it ({how})")
    body, problem = split_frame(result[len(READY) :])
    if body is None and state != "handed":
        where = ended_at(trace, filename, child.pid)
        return _with(
            base, codes.PYTHON_ENDED, f"the spec module ended without handing back its specs ({how}; {problem})", where
        )
    payload, problem = decode(body) if body is not None else (None, problem)
    if payload is None:
        return _with(
            base, codes.PYTHON_ENDED, f"the spec module handed back a result trainspec cannot read ({problem})"
        )
    return Outcome(payload=payload, raw=raw, raw_dropped=raw_dropped, leftovers=leftovers)


def _with(base: Outcome, code: Code, reason: str, line: int | None = None) -> Outcome:
    return Outcome(code=code, reason=reason, line=line, raw=base.raw, raw_dropped=base.raw_dropped)


def _exit_words(status: int) -> str:
    if status >= 0:
        return f"exit status {status}"
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = f"signal {-status}"
    return f"killed by {name}"
