"""Follow the logs of the trainer's node-0 pod into the launcher's stdout (the KFP step log).

A background thread: it waits until the pod exists and has started (a log request for a
pending pod is an error), follows its ``node`` container, and reconnects after a broken
stream. Log lines carry timestamps so a reconnect skips lines already printed; when JobSet
replaces the pod after a failure, the new pod is followed from its start.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from trainspec.kfp import names as N
from trainspec.kube.retry import is_transient

STARTED_PHASES = frozenset({"Running", "Succeeded", "Failed"})
DONE_PHASES = frozenset({"Succeeded", "Failed"})
#: Overlap asked for on reconnect; duplicates inside it are skipped by timestamp.
RECONNECT_SLACK = 5


def node0_selector(trainjob: str) -> str:
    """The label selector of the trainer's first pod (completion index 0 of rjob ``node``)."""
    return (f"{N.JOBSET_NAME_LABEL}={trainjob},{N.RJOB_LABEL}={N.TRAINER_RJOB},"
            f"{N.COMPLETION_INDEX_LABEL}=0")


class LogFollower:
    """Streams node-0's log lines, prefixed, to ``out`` until :meth:`finish` is called."""

    def __init__(self, kube: Any, namespace: str, trainjob: str, *, out: TextIO | None = None,
                 poll_seconds: float = 5.0, lock: threading.Lock | None = None) -> None:
        self.kube = kube
        self.namespace = namespace
        self.trainjob = trainjob
        self.out = out or sys.stdout
        self.poll_seconds = poll_seconds
        self.lock = lock or threading.Lock()
        self._stop = threading.Event()
        self._final = threading.Event()
        self._last: dict[str, str] = {}  # pod uid -> timestamp of the last printed line
        self._done: set[str] = set()     # pod uids streamed to their end
        self._announced: set[str] = set()
        self._thread = threading.Thread(target=self._run, name="trainspec-logs", daemon=True)

    def start(self) -> LogFollower:
        self._thread.start()
        return self

    def finish(self, timeout: float) -> None:
        """Print what is left (one last non-following read), then stop; wait at most ``timeout``."""
        self._final.set()
        self._stop.set()
        self._thread.join(timeout)

    def _print(self, text: str) -> None:
        with self.lock:
            self.out.write(text + "\n")
            self.out.flush()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._safe_pass(follow=True)
            self._stop.wait(self.poll_seconds)
        if self._final.is_set():
            self._safe_pass(follow=False)

    def _safe_pass(self, *, follow: bool) -> None:
        try:
            self._pass(follow=follow)
        except Exception as exc:  # never fail the launcher over logs; retry on the next pass
            if not is_transient(exc):
                self._print(f"[logs] cannot read node-0 logs: {type(exc).__name__}: {exc}")

    def _pass(self, *, follow: bool) -> None:
        pods = self.kube.list_pods(self.namespace, node0_selector(self.trainjob))
        started = [p for p in pods if (p.get("status") or {}).get("phase") in STARTED_PHASES]
        started.sort(key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or "")
        for pod in started:
            meta = pod.get("metadata") or {}
            uid = meta.get("uid") or meta.get("name", "")
            if uid in self._done:
                continue
            if uid not in self._announced:
                self._announced.add(uid)
                self._print(f"[logs] following {self.namespace}/{meta.get('name')} (container node)")
            phase = (pod.get("status") or {}).get("phase")
            self._stream(meta["name"], uid, follow=follow and phase not in DONE_PHASES)
            if phase in DONE_PHASES or not follow:
                self._done.add(uid)

    def _stream(self, pod: str, uid: str, *, follow: bool) -> None:
        last = self._last.get(uid)
        for line in self.kube.stream_log(self.namespace, pod, N.TRAINER_CONTAINER, follow=follow,
                                         since_seconds=_since_seconds(last)):
            stamp, _, text = line.partition(" ")
            key = _stamp_key(stamp)
            if key is None:  # not a timestamped line: print it whole
                self._print(f"node-0 | {line}")
                continue
            if last is not None and key <= last:
                continue  # printed before the reconnect
            self._last[uid] = last = key
            self._print(f"node-0 | {text}")


def _stamp_key(stamp: str) -> str | None:
    """An RFC 3339 timestamp as a sortable string (nanoseconds padded: kubelet trims zeros)."""
    if len(stamp) < 20 or stamp[4] != "-" or stamp[10] != "T" or not stamp.endswith("Z"):
        return None
    head, _, fraction = stamp[:-1].partition(".")
    return f"{head}.{fraction.ljust(9, '0')}"


def _since_seconds(last: str | None, now: Callable[[], float] = time.time) -> int | None:
    """How far back a reconnect must read to cover ``last`` (None: from the start)."""
    if last is None:
        return None
    from datetime import datetime, timezone

    try:
        seen = datetime.strptime(last[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None
    return max(1, int(now() - seen) + RECONNECT_SLACK)
