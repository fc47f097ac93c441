"""Running a Python spec module without letting it harm the run that loads it.

A spec module is the user's code, run in trainspec's own process (its objects must come back
as they are). Around it:

* **Output is captured**, so ``compile -o -`` and ``--format json`` stay clean: ``sys.stdout``
  and ``sys.stderr`` are replaced (each write remembers the spec line that made it), and file
  descriptors 1 and 2 are pointed at a pipe drained by a thread, which catches ``os.write``,
  C libraries and child processes. Only the first :data:`MAX_CAPTURED` characters of each are
  kept. Standard input is empty (``/dev/null``): ``input()`` cannot wait for a terminal.
* **Time is limited.** In the main thread ``signal.setitimer`` raises :class:`SpecTimeout` (a
  ``BaseException``, so ``except Exception`` in the module cannot swallow it; it repeats every
  :data:`_REPEAT` seconds in case ``except BaseException`` does). Signals reach only the main
  thread, so elsewhere (a library caller's worker thread) the fallback is a ``sys.settrace``
  deadline, checked on every line: it stops Python loops, but not one blocking C call such
  as a long ``time.sleep``, and only once if the module catches ``BaseException``.
* **Hygiene:** ``sys.path``, ``sys.argv``, the working directory, ``sys.dont_write_bytecode``
  (no ``__pycache__`` is written into the user's tree) and ``sys.modules`` are restored
  afterwards; modules imported from the spec's directory (a helper ``common.py``) are
  forgotten, so two spec directories may each have their own.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import FrameType

#: Characters of output kept from a spec module, per channel (Python writes; descriptor writes).
MAX_CAPTURED = 2000
#: Seconds between repeated timeouts once the limit is reached.
_REPEAT = 0.1
#: Descriptor-level capture needs ``select`` on a pipe (POSIX); elsewhere only Python writes are captured.
_FD_CAPTURE = os.name == "posix"


class SpecTimeout(BaseException):
    """The spec module ran past its time limit."""


@dataclass
class Captured:
    """What a module wrote: Python-level pieces with their spec line, and raw descriptor output."""

    pieces: list[tuple[int | None, str, str]] = field(default_factory=list)  # (line, stream, text)
    kept: int = 0
    dropped: int = 0
    raw: bytes = b""
    raw_dropped: int = 0

    def add(self, stream: str, text: str, line: int | None) -> None:
        room = MAX_CAPTURED - self.kept
        piece = text[: max(room, 0)]
        self.dropped += len(text) - len(piece)
        if not piece:
            return
        self.kept += len(piece)
        if self.pieces and self.pieces[-1][:2] == (line, stream) and not self.pieces[-1][2].endswith("\n"):
            self.pieces[-1] = (line, stream, self.pieces[-1][2] + piece)
        else:
            self.pieces.append((line, stream, piece))

    def __bool__(self) -> bool:
        return bool(self.pieces or self.raw or self.dropped or self.raw_dropped)


@dataclass
class RunResult:
    """A module's globals, or the exception that stopped it (``SpecTimeout`` for the time limit)."""

    namespace: dict[str, Any] | None
    error: BaseException | None
    output: Captured


def run_module(filename: str, *, timeout: float | None, run_name: str) -> RunResult:
    """Run the module at ``filename`` (an absolute path) as described in the module docstring."""
    import runpy

    output = Captured()
    directory = os.path.dirname(filename)
    with _hygiene(directory), _captured(filename, output):
        try:
            with _deadline(timeout):
                namespace = runpy.run_path(filename, run_name=run_name)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the module may raise anything (SystemExit included)
            return RunResult(None, exc, output)
    return RunResult(namespace, None, output)


# -- the time limit ---------------------------------------------------------------------------------


@contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    if not seconds or seconds <= 0:
        yield
        return
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        try:
            previous = signal.getsignal(signal.SIGALRM)
            signal.signal(signal.SIGALRM, previous)  # probes: raises where signals cannot be handled
        except (ValueError, TypeError, OSError):
            pass
        else:
            with _alarm(seconds):
                yield
            return
    with _traced(seconds):
        yield


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    armed = [True]

    def on_alarm(signum: int, frame: Any) -> None:
        if armed[0]:
            raise SpecTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    started = time.monotonic()
    outer = signal.setitimer(signal.ITIMER_REAL, seconds, _REPEAT)
    try:
        yield
    finally:
        while True:  # the alarm may fire once more before it is disarmed: disarm regardless
            try:
                armed[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                break
            except SpecTimeout:
                continue
        signal.signal(signal.SIGALRM, previous)
        if outer[0] > 0:  # a caller had its own timer running: give it back what is left of it
            signal.setitimer(signal.ITIMER_REAL, max(outer[0] - (time.monotonic() - started), 0.001), outer[1])


@contextmanager
def _traced(seconds: float) -> Iterator[None]:
    deadline = time.monotonic() + seconds
    previous = sys.gettrace()

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise SpecTimeout
        return tracer

    sys.settrace(tracer)
    try:
        yield
    finally:
        sys.settrace(previous)


# -- output -----------------------------------------------------------------------------------------


class _TextSink(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` while a module runs: keeps text and the spec line writing it."""

    def __init__(self, output: Captured, stream: str, fd: int, filename: str) -> None:
        super().__init__()
        self._output, self._stream, self._fd, self._filename = output, stream, fd, filename

    @property
    def encoding(self) -> str:  # type: ignore[override]  # typeshed: a settable attribute; fixed here
        return "utf-8"

    @property
    def buffer(self) -> Any:
        return _BinarySink(self)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd  # pointed at the capture pipe meanwhile

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._output.add(self._stream, text, _spec_line(self._filename))
        return len(text)


class _BinarySink(io.RawIOBase):
    def __init__(self, text: _TextSink) -> None:
        super().__init__()
        self._text = text

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._text.write(bytes(data).decode("utf-8", errors="replace"))
        return len(data)


def _spec_line(filename: str) -> int | None:
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == filename:
            return frame.f_lineno
        frame = frame.f_back
    return None


class _Drain(threading.Thread):
    """Reads the capture pipe so writers never block; keeps the first bytes."""

    def __init__(self, fd: int, output: Captured) -> None:
        super().__init__(name="trainspec-spec-output", daemon=True)
        self._fd, self._output = fd, output
        self._stop_event = threading.Event()

    def run(self) -> None:
        import select

        while True:
            stopping = self._stop_event.is_set()
            ready, _, _ = select.select([self._fd], [], [], 0 if stopping else 0.05)
            if ready:
                try:
                    chunk = os.read(self._fd, 65536)  # a pipe holds at most this much
                except OSError:
                    return
                if not chunk:
                    return  # every writer has closed it
                room = max(MAX_CAPTURED - len(self._output.raw), 0)
                self._output.raw += chunk[:room]
                self._output.raw_dropped += len(chunk) - len(chunk[:room])
            if stopping:
                return  # one last read after the module finished; a child still writing is not waited for

    def finish(self) -> None:
        self._stop_event.set()
        self.join()


def _flush_all() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


def _flush_c_stdio() -> None:
    """Flush C ``stdout`` buffers, so text printed by C code lands in the pipe, not later on the terminal."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError, ImportError):
        pass


@contextmanager
def _captured(filename: str, output: Captured) -> Iterator[None]:
    _flush_all()
    saved_streams = sys.stdout, sys.stderr, sys.stdin
    if not _FD_CAPTURE:
        sys.stdout = _TextSink(output, "stdout", 1, filename)
        sys.stderr = _TextSink(output, "stderr", 2, filename)
        sys.stdin = io.StringIO("")
        try:
            yield
        finally:
            sys.stdout, sys.stderr, sys.stdin = saved_streams
        return
    read_fd, write_fd = os.pipe()
    devnull = os.open(os.devnull, os.O_RDONLY)
    drain = _Drain(read_fd, output)
    drain.start()
    saved_fds: dict[int, int | None] = {}
    try:
        for fd, target in ((1, write_fd), (2, write_fd), (0, devnull)):
            try:
                saved_fds[fd] = os.dup(fd)
            except OSError:
                saved_fds[fd] = None  # closed in this process: closed again afterwards
            os.dup2(target, fd)
        sys.stdout = _TextSink(output, "stdout", 1, filename)
        sys.stderr = _TextSink(output, "stderr", 2, filename)
        sys.stdin = io.StringIO("")
        yield
    finally:
        _flush_all()
        _flush_c_stdio()
        sys.stdout, sys.stderr, sys.stdin = saved_streams
        for fd, saved in saved_fds.items():
            if saved is None:
                os.close(fd)
            else:
                os.dup2(saved, fd)
                os.close(saved)
        os.close(write_fd)
        os.close(devnull)
        drain.finish()
        os.close(read_fd)


# -- hygiene ----------------------------------------------------------------------------------------


@contextmanager
def _hygiene(directory: str) -> Iterator[None]:
    path_list = sys.path
    saved_path = list(path_list)
    saved_argv = sys.argv
    saved_argv_items = list(saved_argv)
    saved_modules = dict(sys.modules)
    saved_bytecode = sys.dont_write_bytecode
    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    sys.path.insert(0, directory)
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        added = {directory, *(p for p in sys.path if isinstance(p, str) and p not in saved_path)}
        path_list[:] = saved_path
        sys.path = path_list
        saved_argv[:] = saved_argv_items
        sys.argv = saved_argv
        sys.dont_write_bytecode = saved_bytecode
        _restore_modules(saved_modules, added)
        if cwd is not None:
            try:
                if os.getcwd() != cwd:
                    os.chdir(cwd)
            except OSError:
                os.chdir(cwd)


def _restore_modules(saved: dict[str, Any], added_paths: set[str]) -> None:
    roots = [os.path.realpath(p) + os.sep for p in added_paths if p]
    installed = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    for name in [n for n in sys.modules if n not in saved]:
        if name.split(".")[0] != "trainspec" and _loaded_from(sys.modules[name], roots, installed):
            del sys.modules[name]
    for name, module in saved.items():
        if sys.modules.get(name) is not module:
            sys.modules[name] = module


def _loaded_from(module: Any, roots: list[str], installed: tuple[str, ...]) -> bool:
    """Whether ``module`` came from one of ``roots`` (the spec's directory, paths it added)."""
    places = [getattr(module, "__file__", None), *list(getattr(module, "__path__", None) or [])]
    for place in places:
        if not isinstance(place, str):
            continue
        real = os.path.realpath(place)
        if any(real.startswith(root) for root in roots) and not real.startswith(installed):
            return True
    return False
