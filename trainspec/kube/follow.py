"""Follow a TrainJob's trainer pods' logs: the newest pod per node index, prefixed with node and rank.

Each pod's stream runs in its own thread while following, so one quiet node does not hold back
the others. A stream that ends while the pod still runs (its container restarted) is opened
again; a node whose pod JobSet replaced is followed in the new pod from its start. Log lines
carry timestamps, so a reconnect skips what was printed.

``tail``, ``since`` and ``previous`` are kubectl's ``--tail``, ``--since`` and ``--previous``,
handed to the log API (``tailLines``, ``sinceSeconds``, ``previous``) for each pod's first read;
a reconnect asks for what followed the last line printed instead. ``timestamps`` prints each
line's timestamp after the node and rank prefix.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from trainspec.k8s import wellknown as W
from trainspec.kube.retry import is_transient
from trainspec.kube.state import newest_per_index

STARTED_PHASES = frozenset({"Running", "Succeeded", "Failed"})
DONE_PHASES = frozenset({"Succeeded", "Failed"})
#: Overlap asked for on reconnect; duplicates inside it are skipped by timestamp.
RECONNECT_SLACK = 5
#: torchrun's default line prefix (``--tee``): ``[<role><local rank>]:``.
TORCHRUN_PREFIX = re.compile(r"^\[[A-Za-z_]*?(\d+)\]:")


def stamp_key(stamp: str) -> str | None:
    """An RFC 3339 timestamp as a sortable string (nanoseconds padded: kubelet trims zeros)."""
    if len(stamp) < 20 or stamp[4] != "-" or stamp[10] != "T" or not stamp.endswith("Z"):
        return None
    head, _, fraction = stamp[:-1].partition(".")
    return f"{head}.{fraction.ljust(9, '0')}"


def since_seconds(last: str | None, now: Callable[[], float] = time.time) -> int | None:
    """How far back a reconnect must read to cover ``last`` (None: from the start)."""
    if last is None:
        return None
    from datetime import datetime, timezone

    try:
        seen = datetime.strptime(last[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None
    return max(1, int(now() - seen) + RECONNECT_SLACK)


def line_prefix(node: int, procs_per_node: int, text: str) -> tuple[str, str]:
    """``(prefix, text)``: ``node-1 rank-5 |`` when the line names its local rank (torchrun ``--tee``),
    else the node's rank range ``node-1 ranks-4..7 |`` (``rank-1`` for one process per node)."""
    match = TORCHRUN_PREFIX.match(text)
    if match and int(match.group(1)) < procs_per_node:
        rank = node * procs_per_node + int(match.group(1))
        return f"node-{node} rank-{rank} |", text[match.end() :].lstrip()
    if procs_per_node <= 1:
        return f"node-{node} rank-{node} |", text
    first = node * procs_per_node
    return f"node-{node} ranks-{first}..{first + procs_per_node - 1} |", text


class PodLogs:
    """The trainer pods' logs of one TrainJob, written to ``out`` with node/rank prefixes."""

    def __init__(
        self,
        kube: Any,
        namespace: str,
        trainjob: str,
        *,
        nodes: frozenset[int] | None = None,
        procs_per_node: int = 1,
        out: TextIO | None = None,
        err: TextIO | None = None,
        poll_seconds: float = 2.0,
        tail: int | None = None,
        since: int | None = None,
        timestamps: bool = False,
        previous: bool = False,
    ) -> None:
        self.kube, self.namespace, self.trainjob = kube, namespace, trainjob
        self.nodes, self.procs = nodes, max(1, procs_per_node)
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.poll_seconds = poll_seconds
        #: kubectl's --tail (None or negative: every line), --since (seconds), --timestamps, --previous.
        self.tail = tail if tail is not None and tail >= 0 else None
        self.since, self.timestamps, self.previous = since, timestamps, previous
        #: Pods whose log could not be read (the command then exits 1).
        self.failed: set[str] = set()
        #: The pods found first: --tail and --since cut their logs; a pod that replaces one later
        #: is read from its start, so a follow loses nothing of it.
        self._first: set[str] | None = None
        self.lock = threading.Lock()
        # pod uid -> (timestamp key of the last printed line, lines printed with that timestamp):
        # a reconnect skips what is older, and as many lines of that very timestamp as were printed.
        self._last: dict[str, tuple[str, int]] = {}
        self._finished: set[str] = set()  # pods streamed to their end
        self._threads: dict[str, threading.Thread] = {}
        self._announced: set[str] = set()
        self._stop = threading.Event()

    def _say(self, text: str, stream: TextIO | None = None) -> None:
        with self.lock:
            target = stream or self.out
            target.write(text + "\n")
            target.flush()

    def selector(self) -> str:
        """The trainer pods of the TrainJob (one node when a single one is asked for)."""
        sel = f"{W.JOBSET_NAME_LABEL}={self.trainjob},{W.REPLICATED_JOB_LABEL}={W.NODE}"
        if self.nodes is not None and len(self.nodes) == 1:
            sel += f",{W.COMPLETION_INDEX_LABEL}={next(iter(self.nodes))}"
        return sel

    def newest(self) -> list[tuple[int, dict[str, Any]]]:
        """``(node index, newest pod)`` of every wanted node that has a pod, by index."""
        pods = self.kube.list_pods(self.namespace, self.selector())
        chosen = [
            (completion, pod)
            for (_, _, completion), pod in newest_per_index(pods).items()
            if self.nodes is None or completion in self.nodes
        ]
        return sorted(chosen, key=lambda item: item[0])

    def run(self, *, follow: bool, finished: Callable[[], bool], max_passes: int | None = None) -> int:
        """Print the logs; with ``follow`` until ``finished()`` holds and every stream ended.

        Waits for pods to exist first. Returns how many pods' logs were read. ``max_passes``
        bounds the polling (tests); None polls until done.
        """
        waited = False
        passes = 0
        while not self._stop.is_set():
            passes += 1
            try:
                started = [(i, p) for i, p in self.newest() if (p.get("status") or {}).get("phase") in STARTED_PHASES]
            except Exception as exc:
                if not is_transient(exc):  # RBAC, a missing CRD...: a located diagnostic, as every command
                    from trainspec.kube.session import CommandError, api_diagnostic

                    what = f"list the pods of TrainJob {self.namespace}/{self.trainjob}"
                    raise CommandError(api_diagnostic(exc, self.kube, what=what)) from None
                started = []
            if started and self._first is None:
                self._first = {_uid(pod) for _, pod in started}
            if not started:
                if finished():
                    self._say(
                        f"TrainJob {self.namespace}/{self.trainjob} is finished and has no pods left to read logs from",
                        self.err,
                    )
                    return 0
                if not waited:
                    self._say(
                        f"waiting for the pods of TrainJob {self.namespace}/{self.trainjob} to start...", self.err
                    )
                    waited = True
            elif not follow:
                for node, pod in started:
                    self._stream(node, pod, follow=False)
                return len(started)
            else:
                for node, pod in started:
                    self._ensure_thread(node, pod)
                alive = [t for t in self._threads.values() if t.is_alive()]
                if not alive and finished():
                    return len(self._announced)
            if max_passes is not None and passes >= max_passes:
                return len(self._announced)
            self._stop.wait(self.poll_seconds)
        return len(self._announced)

    def stop(self) -> None:
        """Stop polling (Ctrl-C); streams end with their connections."""
        self._stop.set()

    def _ensure_thread(self, node: int, pod: dict[str, Any]) -> None:
        uid = _uid(pod)
        if uid in self._finished:
            return
        thread = self._threads.get(uid)
        if thread is not None and thread.is_alive():
            return
        thread = threading.Thread(
            target=self._stream, args=(node, pod), kwargs={"follow": True}, name=f"trainspec-logs-{node}", daemon=True
        )
        self._threads[uid] = thread
        thread.start()

    def _stream(self, node: int, pod: dict[str, Any], *, follow: bool) -> None:
        meta = pod.get("metadata") or {}
        uid = _uid(pod)
        phase = (pod.get("status") or {}).get("phase")
        if uid not in self._announced:
            self._announced.add(uid)
            self._say(f"==> node-{node}: pod {self.namespace}/{meta.get('name')}", self.err)
        resume = self._last.get(uid)
        skip_same = resume[1] if resume else 0
        # The user's --tail/--since shape the first read of the pods found first; a reconnect reads
        # on from the last line printed (its own sinceSeconds; nothing else may cut it).
        fresh = resume is None and uid in (self._first or ())
        options: dict[str, Any] = {"since_seconds": since_seconds(resume[0]) if resume else None}
        if fresh:
            options["since_seconds"] = self.since
            if self.tail is not None:
                options["tail_lines"] = self.tail
        if self.previous:
            options["previous"] = True
        try:
            for line in self.kube.stream_log(
                self.namespace,
                meta["name"],
                W.NODE,
                follow=follow and phase not in DONE_PHASES and not self.previous,
                **options,
            ):
                stamp, _, text = line.partition(" ")
                key = stamp_key(stamp)
                if key is None:
                    text, stamp = line, ""
                else:
                    if resume is not None and key < resume[0]:
                        continue  # printed before the reconnect
                    if resume is not None and key == resume[0] and skip_same > 0:
                        skip_same -= 1
                        continue
                    previous = self._last.get(uid)
                    self._last[uid] = (key, previous[1] + 1 if previous and previous[0] == key else 1)
                prefix, rest = line_prefix(node, self.procs, text)
                if self.timestamps and stamp:  # kubectl --prefix --timestamps: the prefix, then the time
                    prefix += " " + stamp
                self._say(f"{prefix} {rest}")
        except Exception as exc:  # a broken stream: the next pass reconnects
            if not is_transient(exc):
                self._say(self._unreadable(meta.get("name"), exc), self.err)
                self._finished.add(uid)
                self.failed.add(uid)
            return
        if phase in DONE_PHASES or not follow or self.previous:
            self._finished.add(uid)

    def _unreadable(self, pod: Any, exc: Exception) -> str:
        """Why a pod's log cannot be read, in the API server's words."""
        status = getattr(exc, "status", None)
        body = getattr(exc, "body", None)
        message = f"{type(exc).__name__}: {exc}"
        if status:
            from trainspec.kube.client import error_message

            message = error_message(exc)
        if self.previous and status == 400 and body and "previous terminated container" in str(body):
            return (
                f"pod {pod} has no previous container instance (--previous reads the one before the last "
                f"restart; this container has not restarted): {message}"
            )
        return f"cannot read the log of pod {pod}: {message}"


def _uid(pod: dict[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return str(meta.get("uid") or meta.get("name") or "")
