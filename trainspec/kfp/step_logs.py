"""Follow the log of a job's rank-0 pod into the launcher's stdout (the KFP step log).

Which pod and container is the job dialect's answer (``LaunchFacts.log_selector``): a TrainJob's
node-0 (container ``node``), a PyTorchJob's Master, an MPIJob's launcher, a RayJob's submitter
(which follows the Ray driver's log). A background thread: it waits until the pod exists and has
started (a log request for a pending pod is an error), follows that container, and reconnects
after a broken stream. Log lines carry timestamps so a reconnect skips lines already printed; when JobSet
replaces the pod after a failure, the new pod is followed from its start.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, TextIO

from trainspec.kfp import launcher_names as N
from trainspec.kube.follow import DONE_PHASES, STARTED_PHASES, since_seconds, stamp_key
from trainspec.kube.retry import is_transient


def selector_text(labels: dict[str, str]) -> str:
    """``k=v,k=v``: a label selector's query form."""
    return ",".join(f"{key}={value}" for key, value in labels.items())


def node0_selector(trainjob: str) -> str:
    """The label selector of a TrainJob's first pod (completion index 0 of rjob ``node``)."""
    return selector_text(N.facts_of({"kind": "TrainJob", "metadata": {"name": trainjob}}).log_selector)


class LogFollower:
    """Streams the log lines of the job's rank-0 pod, prefixed, to ``out`` until :meth:`finish` is called.

    ``job`` is the job object as compiled or applied (a name alone: a TrainJob of that name).
    """

    def __init__(
        self,
        kube: Any,
        namespace: str,
        job: str | dict[str, Any],
        *,
        out: TextIO | None = None,
        poll_seconds: float = 5.0,
        lock: threading.Lock | None = None,
    ) -> None:
        obj = {"kind": "TrainJob", "metadata": {"name": job}} if isinstance(job, str) else job
        facts = N.facts_of(obj)
        self.kube = kube
        self.namespace = namespace
        self.selector, self.container, self.label = (
            selector_text(facts.log_selector),
            facts.log_container,
            facts.log_label,
        )
        self.out = out or sys.stdout
        self.poll_seconds = poll_seconds
        self.lock = lock or threading.Lock()
        self._stop = threading.Event()
        self._final = threading.Event()
        # pod uid -> (timestamp of the last printed line, lines printed with that timestamp): a
        # reconnect skips what is older and as many lines of that very timestamp as were printed.
        self._last: dict[str, tuple[str, int]] = {}
        self._done: set[str] = set()  # pod uids streamed to their end
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
                self._print(f"[logs] cannot read {self.label} logs: {type(exc).__name__}: {exc}")

    def _pass(self, *, follow: bool) -> None:
        pods = self.kube.list_pods(self.namespace, self.selector)
        started = [p for p in pods if (p.get("status") or {}).get("phase") in STARTED_PHASES]
        started.sort(key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or "")
        for pod in started:
            meta = pod.get("metadata") or {}
            uid = meta.get("uid") or meta.get("name", "")
            if uid in self._done:
                continue
            if uid not in self._announced:
                self._announced.add(uid)
                self._print(f"[logs] following {self.namespace}/{meta.get('name')} (container {self.container})")
            phase = (pod.get("status") or {}).get("phase")
            self._stream(meta["name"], uid, follow=follow and phase not in DONE_PHASES)
            if phase in DONE_PHASES or not follow:
                self._done.add(uid)

    def _stream(self, pod: str, uid: str, *, follow: bool) -> None:
        resume = self._last.get(uid)
        skip_same = resume[1] if resume else 0
        for line in self.kube.stream_log(
            self.namespace,
            pod,
            self.container,
            follow=follow,
            since_seconds=since_seconds(resume[0] if resume else None),
        ):
            stamp, _, text = line.partition(" ")
            key = stamp_key(stamp)
            if key is None:  # not a timestamped line: print it whole
                self._print(f"{self.label} | {line}")
                continue
            if resume is not None and key < resume[0]:
                continue  # printed before the reconnect
            if resume is not None and key == resume[0] and skip_same > 0:
                skip_same -= 1
                continue
            previous = self._last.get(uid)
            self._last[uid] = (key, previous[1] + 1 if previous and previous[0] == key else 1)
            self._print(f"{self.label} | {text}")
