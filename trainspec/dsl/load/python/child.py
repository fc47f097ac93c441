"""The child process that runs one Python spec module (started by :mod:`trainspec.dsl.load.python.supervisor`).

It is started as ``python -I -c BOOTSTRAP REQUEST``: isolated (no ``PYTHON*`` variables, no user
site-packages, not the working directory on ``sys.path``), then given trainspec's own ``sys.path``
so that it imports the same trainspec, and the spec's directory first on it, as a script would
have. Before the module runs, the child

* caps its address space (:data:`MEMORY_LIMIT`) and turns core dumps off;
* asks to be killed with its parent (Linux), so it cannot outlive an interrupted trainspec, and
  becomes the subreaper of what the module starts, so that no orphan leaves its process tree;
* keeps its pipes out of any program the module starts;
* arms :mod:`faulthandler` on the trace pipe: a crash, and the time limit, write where the module
  was; ``os._exit`` and ``os.kill`` leave a ``trainspec-exit`` record there too.

Then it writes :data:`~trainspec.dsl.load.python.protocol.READY`, runs the module
(:func:`trainspec.dsl.load.python.execute.run_module`), hands the payload back as one frame and waits: trainspec
kills it, with every process the module left, once it has read the frame (the release pipe's end
of file, trainspec gone, ends it with ``os._exit(0)`` too). No atexit handler runs. A copy of the
process made by ``os.fork`` in the module never writes a result. The time limit is trainspec's:
it kills the child's whole process group.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

#: Address space a spec module may use (RLIMIT_AS): 4 GiB. Generous for building specs, and for
#: libraries that reserve address space per CPU (OpenBLAS through numpy), yet it stops a runaway
#: module with a MemoryError long before it takes a CI machine's memory.
MEMORY_LIMIT = 4 << 30

#: What ``python -I -c`` runs: trainspec's ``sys.path`` first, so the child imports the same trainspec.
BOOTSTRAP = (
    "import sys, json\n"
    "request = json.loads(sys.argv[1])\n"
    "sys.path[:] = request['path']\n"
    "from trainspec.dsl.load.python.child import main\n"
    "main(request)\n"
)

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_KILL_EVENTS = frozenset({"os.kill", "os.killpg", "signal.pthread_kill"})


def main(request: dict[str, Any]) -> None:
    """Run the module the request names and hand back its result (see the module docstring)."""
    import faulthandler

    from trainspec.dsl.load.python.execute import run_module
    from trainspec.dsl.load.python.protocol import READY, encode

    real_exit = os._exit
    filename: str = request["file"]
    result_fd: int = request["result_fd"]
    trace_fd: int = request["trace_fd"]
    release_fd: int = request["release_fd"]
    timeout: float | None = request["timeout"]
    _limit_resources(request.get("memory") or MEMORY_LIMIT)
    _tie_to_parent(request["parent"])
    for fd in (result_fd, trace_fd, release_fd):
        os.set_inheritable(fd, False)  # a fork keeps them; a program the module runs does not get them
    sys.argv[:] = [filename]
    sys.path.insert(0, os.path.dirname(filename))
    sys.dont_write_bytecode = True  # no __pycache__ written into the user's tree
    faulthandler.enable(file=trace_fd, all_threads=True)
    _record_exits(trace_fd, filename, real_exit)
    pid = os.getpid()
    _write_all(result_fd, READY)
    if timeout:
        faulthandler.dump_traceback_later(timeout, file=trace_fd)
    frame = b""
    try:
        frame = encode(run_module(filename, request["run_name"]))
    except BaseException:  # describing the module failed (it tampered with what that uses): no result
        real_exit(3)
    if timeout:
        faulthandler.cancel_dump_traceback_later()
    _flush_streams()
    if os.getpid() == pid:  # a copy made by os.fork in the module hands nothing back
        try:
            _write_all(result_fd, frame)
        except OSError:
            real_exit(4)
    # Wait to be killed (or for trainspec to go away: end of file): while this process lives, what
    # the module started is still below it, where trainspec finds it and kills it.
    try:
        while os.read(release_fd, 1):
            pass
    except OSError:
        pass
    real_exit(0)


def _limit_resources(memory: int) -> None:
    try:
        import resource
    except ImportError:  # not POSIX: no limits to set
        return
    for limit, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CORE, 0)):
        try:
            _soft, hard = resource.getrlimit(limit)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass


def _tie_to_parent(parent: int) -> None:
    """Linux: be killed when the thread that started this process ends (trainspec killed), and be the
    subreaper of the module's processes, so that a daemon's orphans stay below this process."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError, ImportError):
        return
    if os.getppid() != parent:  # the parent was gone before the request took effect
        os._exit(5)


def _record_exits(fd: int, filename: str, real_exit: Any) -> None:
    """Leave a ``trainspec-exit`` record (with the spec line) when the module ends the process."""
    from trainspec.dsl.load.python.execute import spec_line
    from trainspec.dsl.load.python.protocol import EXIT_RECORD

    def record(event: str) -> None:
        line = spec_line(filename) or 0
        with contextlib.suppress(OSError):
            os.write(fd, f"{EXIT_RECORD} {os.getpid()} {event} {line}\n".encode())

    def _exit(status: int) -> None:
        record("os._exit")
        real_exit(status)

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event in _KILL_EVENTS:
            record(event)

    setattr(os, "_exit", _exit)  # noqa: B010 (a module attribute mypy sees as a function)
    sys.addaudithook(audit)


def _flush_streams() -> None:
    """Flush what the module wrote to the real streams (buffered) before the process ends."""
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    if "ctypes" in sys.modules:  # C code may have printed through stdio buffers
        try:
            import ctypes

            ctypes.CDLL(None).fflush(None)
        except (OSError, AttributeError, TypeError):
            pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
