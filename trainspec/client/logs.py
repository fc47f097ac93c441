"""Trainer pods' logs as an iterator of typed lines, read by ``trainspec logs``' own follower.

``trainspec.kube.follow.PodLogs`` writes prefixed lines to a text stream (and follows each node
in a thread of its own); here it runs in a background thread, writing into a queue that the
caller's iterator drains, and each printed line is parsed back into a :class:`LogLine`. So the
client reads exactly what the command prints: the newest pod per node index, across container
restarts and replaced pods, with the same node and rank.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO, cast

from trainspec.client.results import LogLine
from trainspec.kube.follow import PodLogs
from trainspec.kube.retry import is_transient
from trainspec.kube.session import CommandError, api_diagnostic

LOG = logging.getLogger("trainspec.client")
_DONE = object()


class _Sink:
    """A writable text stream that hands over whole lines (what ``PodLogs`` writes to ``out``/``err``)."""

    def __init__(self, put: Callable[[str], Any]) -> None:
        self._put = put
        self._pending = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            self._pending += text
            *lines, self._pending = self._pending.split("\n")
            for line in lines:
                self._put(line)
        return len(text)

    def flush(self) -> None:
        pass


def stream(
    kube: Any,
    namespace: str,
    trainjob: str,
    *,
    nodes: frozenset[int] | None,
    procs_per_node: int,
    follow: bool,
    finished: Callable[[], bool],
    poll_seconds: float,
    tail: int | None = None,
    since: int | None = None,
    previous: bool = False,
) -> Iterator[LogLine]:
    """The lines of the TrainJob's trainer pods; with ``follow``, until the job is finished and every
    stream has ended. Closing the iterator early stops the follower. ``tail``, ``since`` and
    ``previous`` are ``trainspec logs``' ``--tail``, ``--since`` (seconds) and ``--previous``."""
    lines: queue.Queue[Any] = queue.Queue()
    follower = PodLogs(
        kube,
        namespace,
        trainjob,
        nodes=nodes,
        procs_per_node=procs_per_node,
        out=cast(TextIO, _Sink(lines.put)),
        # What the command says on stderr (waiting for pods, which pod is read, a log it cannot
        # read) is the library's log.
        err=cast(TextIO, _Sink(_log)),
        poll_seconds=poll_seconds,
        tail=tail,
        since=since,
        previous=previous,
        timestamps=True,  # LogLine.time
    )

    def run() -> None:
        try:
            follower.run(follow=follow, finished=finished)
        except Exception as exc:  # handed to the reading thread, which raises it there
            lines.put(exc)
        finally:
            lines.put(_DONE)

    threading.Thread(target=run, name=f"trainspec-client-logs-{trainjob}", daemon=True).start()
    try:
        while True:
            item = lines.get()
            if item is _DONE:
                return
            if isinstance(item, CommandError):
                raise item
            if isinstance(item, Exception):
                raise CommandError(
                    api_diagnostic(item, kube, what=f"read the logs of {namespace}/{trainjob}")
                ) from item
            parsed = LogLine.parse(item)
            if parsed is not None:
                yield parsed
    finally:
        follower.stop()


def _log(line: str) -> None:
    if line.startswith(("==> ", "waiting for ")):
        LOG.info(line)
    else:
        LOG.warning(line)


def job_finished(kube: Any, namespace: str, name: str) -> Callable[[], bool]:
    """Whether the TrainJob is gone, complete or failed (a transient error: not yet)."""
    from trainspec.kube import resources as R
    from trainspec.kube.state import job_state

    def finished() -> bool:
        try:
            current = kube.get(R.TRAINJOB, namespace, name)
        except Exception as exc:
            if is_transient(exc):
                return False
            raise
        return current is None or job_state(current)[0] in ("Complete", "Failed")

    return finished
