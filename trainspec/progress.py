"""A one-line progress display for long work (compiling thousands of specs, sharding, waiting).

Standard library only, stderr only, and silent unless stderr is a terminal: piped or CI output
(and ``--format json`` readers) never sees a carriage return. ``TRAINSPEC_PROGRESS=0`` turns it
off on a terminal too, ``TRAINSPEC_PROGRESS=1`` forces it on (for demos and tests).

Usage::

    with Progress("sharding", total=len(files)) as bar:
        for f in files:
            ...
            bar.advance(detail=f.name)

    with Progress("waiting for admission") as wait:   # no total: a spinner
        while not admitted():
            wait.update(detail=reason)

Nothing is drawn during the first ``delay`` seconds (quick work stays quiet), the line is redrawn
at most every ``interval`` seconds (so a tight loop costs nothing), and it is erased on close, so
the output that follows starts on a clean line.
"""

from __future__ import annotations

import _thread
import os
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

#: The environment switch: "0" never shows progress, "1" always does, unset: only on a TTY.
ENV = "TRAINSPEC_PROGRESS"
SPINNER = "|/-\\"
#: Lines are cut to this many characters so they never wrap (a wrapped line cannot be erased).
DEFAULT_WIDTH = 79


def enabled_for(stream: TextIO, environ: dict[str, str] | None = None) -> bool:
    """Whether progress should be drawn on ``stream``: a TTY that is not a dumb terminal, unless
    ``TRAINSPEC_PROGRESS`` says otherwise."""
    env = os.environ if environ is None else environ
    forced = env.get(ENV)
    if forced in ("0", "1"):
        return forced == "1"
    if env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed or detached stream
        return False


class Progress:
    """A progress line on stderr; every method is a cheap no-op when it is disabled."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        interval: float = 0.1,
        delay: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        width: int | None = None,
    ) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.detail = ""
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled_for(self.stream) if enabled is None else enabled
        self.interval = interval
        self.clock = clock
        # Work that ends within ``delay`` seconds draws nothing: no flicker for a quick compile.
        self._start = clock() if self.enabled else 0.0
        self.delay = delay
        self.width = width or _terminal_width()
        self._last_draw: float | None = None
        self._drawn = 0  # characters on the line now (to erase them)
        self._frame = 0
        self._lock = _thread.allocate_lock()  # the builtin lock: no `threading` import on start-up

    # -- updates -------------------------------------------------------------------------------

    def advance(self, n: int = 1, *, detail: str | None = None) -> None:
        """``n`` more items done (with an optional short note, e.g. the current file).

        Safe from several threads (the sharding stage reads in a thread pool).
        """
        with self._lock:
            self.update(self.done + n, detail=detail)

    def update(self, done: int | None = None, *, detail: str | None = None, total: int | None = None) -> None:
        """Set the count, note or total; redraws if the last draw is older than ``interval``."""
        if done is not None:
            self.done = done
        if detail is not None:
            self.detail = detail
        if total is not None:
            self.total = total
        if not self.enabled:
            return
        now = self.clock()
        if now - self._start < self.delay:
            return
        if self._last_draw is not None and now - self._last_draw < self.interval:
            return
        self._last_draw = now
        self._draw()

    def text(self) -> str:
        """The line as it would be drawn now (without carriage return or padding)."""
        if self.total:
            percent = min(100, self.done * 100 // self.total)
            head = f"{self.label}: {self.done}/{self.total} ({percent}%)"
        elif self.total == 0:
            head = f"{self.label}: done"
        else:
            head = f"{self.label} {SPINNER[self._frame % len(SPINNER)]}" + (f" {self.done}" if self.done else "")
        line = f"{head} {self.detail}" if self.detail else head
        return line if len(line) <= self.width else line[: max(0, self.width - 3)] + "..."

    def _draw(self) -> None:
        line = self.text()
        self._frame += 1
        pad = " " * max(0, self._drawn - len(line))  # cover what a longer previous line left
        try:
            self.stream.write("\r" + line + pad)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing, never fail the work
            self.enabled = False
            return
        self._drawn = len(line)

    # -- end -----------------------------------------------------------------------------------

    def close(self) -> None:
        """Erase the line, so whatever is printed next starts at column 0."""
        if not self.enabled or not self._drawn:
            return
        try:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
        except (OSError, ValueError):
            pass
        self._drawn = 0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _terminal_width() -> int:
    import shutil

    columns = shutil.get_terminal_size((DEFAULT_WIDTH + 1, 24)).columns
    return max(20, columns - 1)  # never the last column: some terminals wrap there


def pass_reporter(progress: Progress, labels: dict[str, str] | None = None) -> Callable[[str, int, int], None]:
    """A callback for ``pipeline.Options(progress=...)``: shows "<label>: i/n (..%) <pass>" as the
    compiler moves from pass to pass."""
    names = labels or {}

    def report(name: str, index: int, total: int) -> None:
        progress.update(index, total=total, detail=names.get(name, name))

    return report
