"""One run of a job writes checkpoints at a time: a lease file in the checkpoint directory (in-pod; stdlib only).

A change to a running job's shape starts a new run (``<job>-<run id>``) on the same checkpoint
claim, and both may run for a while. ``<checkpoint dir>/.trainspec-lease.json`` says which one may
write: ``run_id``, ``token``, ``holder`` (host, pid, boot id, pid namespace), ``heartbeat``
(wall-clock seconds), ``ttl``, ``released``, ``nonce``.

* **Taking it.** Rank 0 takes the lease the first time it calls ``latest_checkpoint()`` or
  ``save_checkpoint()`` (or :func:`~trainspec.stages.checkpoints.acquire_lease`): at once when it
  is free, released, expired (heartbeat older than its ttl), held by a process of this host that
  is gone, or already this run's. The fencing ``token`` grows by one each time another run takes
  it. A daemon thread rewrites the heartbeat every ttl / 4 seconds.
* **Waiting, then fencing.** While another run holds it with a fresh heartbeat, rank 0 waits,
  saying so on stderr at most every 30 s; after ``TRAINSPEC_LEASE_WAIT`` seconds it takes the
  lease anyway with token + 1 (and says so): the older run is fenced out.
* **Guarded writes.** ``save_checkpoint`` checks that the file names this run and token before it
  writes, before it publishes (rename, ``COMPLETE`` marker) and before it prunes; otherwise it
  removes what it wrote and raises :class:`~trainspec.stages.errors.CheckpointFenced` naming the
  run that took over. A fenced run's heartbeat thread stops; it re-reads the file just before
  each rename, so it never writes over another run's lease.
* **Other ranks** never take the lease: ``save_checkpoint`` runs on rank 0 in data-parallel
  training, so their ``latest_checkpoint()`` (or a write of their own) waits until the file names
  their run. Every rank then resumes from what an older run wrote last; a write of theirs is
  checked against the token they read.
* **Release** (end of a ``with`` block, interpreter exit) marks it released: a waiting run goes on.
  ``TRAINSPEC_RUN_ID`` unset: no lease, the helpers behave as before. ``TRAINSPEC_LEASE_TTL``
  (seconds, 60) and ``TRAINSPEC_LEASE_WAIT`` (seconds, 600) can be overridden by keyword arguments.

Caveats. A write is a temp file in the same directory, fsynced and renamed over the lease; a
taker re-reads the file after a short settle and holds the lease only if its own write is still
there, so of two newcomers racing the one whose write stayed wins. That needs a ``rename`` that
is atomic and seen at once by other clients (local disks, NFS/CephFS/Lustre RWX volumes); where
it is not (object-store FUSE mounts), two runs may both believe they hold the lease until the
next check. A check and the step it guards are not one atomic operation either: a run fenced
between them finishes that one step. Node clocks must agree to well within the ttl.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from trainspec.dsl.kube_facts import RUN_ID_ENV
from trainspec.stages.errors import CheckpointError, CheckpointFenced

LEASE_FILE = ".trainspec-lease.json"
LEASE_TTL_ENV = "TRAINSPEC_LEASE_TTL"
LEASE_WAIT_ENV = "TRAINSPEC_LEASE_WAIT"
DEFAULT_TTL = 60.0
DEFAULT_WAIT = 600.0
#: How long a taker waits before re-reading the file to see whether its write stayed.
DEFAULT_SETTLE = 0.5
#: At most one "waiting" line per this many seconds.
REPORT_EVERY = 30.0
_FORMAT = "trainspec-lease/1"


def _seconds(value: str | float | None, name: str, default: float, *, zero_ok: bool) -> float:
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number < 0 or (number == 0 and not zero_ok):
        raise CheckpointError(f"{name}={value!r} is not a number of seconds {'>= 0' if zero_ok else '> 0'}")
    return number


def _checked_run_id(value: str, name: str) -> str:
    if not value or len(value) > 253 or not value.isprintable() or any(c.isspace() for c in value):
        raise CheckpointError(f"{name}={value!r} is not a run id (1-253 printable characters, no spaces)")
    return value


def run_id_from(env: Mapping[str, str] | None = None) -> str | None:
    """This run's id from ``TRAINSPEC_RUN_ID``, or None when it is not set (no lease is used)."""
    value = (os.environ if env is None else env).get(RUN_ID_ENV, "").strip()
    return _checked_run_id(value, RUN_ID_ENV) if value else None


def holder_identity() -> dict[str, Any]:
    """This process as a lease names it: host, pid, and (Linux) boot id and pid namespace."""
    import socket  # only once a lease is used

    found: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid(), "boot": None, "pidns": None}
    with contextlib.suppress(OSError):
        found["boot"] = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        found["pidns"] = os.readlink("/proc/self/ns/pid")
    return found


def _holder_gone(holder: object) -> bool:
    # Only a holder of this host, boot and pid namespace whose pid is gone: pods on one node may share a host
    # name (hostNetwork), never a pid namespace. Without them to compare, the lease expires by its ttl.
    me = holder_identity()
    if os.name != "posix" or not isinstance(holder, dict) or not me["boot"] or not me["pidns"]:
        return False
    pid = holder.get("pid")
    if any(holder.get(key) != me[key] for key in ("host", "boot", "pidns")) or type(pid) is not int:
        return False
    try:
        if 0 < pid != me["pid"]:  # never 0 or below: kill() would signal process groups
            os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        pass
    return False


def _parse(text: str) -> dict[str, Any] | None:
    with contextlib.suppress(ValueError):
        data = json.loads(text)
        if isinstance(data, dict) and isinstance(data.get("run_id"), str) and type(data.get("token")) is int:
            return data if all(isinstance(data.get(k), int | float) for k in ("heartbeat", "ttl")) else None
    return None


def _print(message: str) -> None:
    print(f"trainspec lease: {message}", file=sys.stderr, flush=True)


class CheckpointLease:
    """This run's lease on a checkpoint directory (the protocol: this module's docstring).

    ``clock`` (wall seconds, heartbeats), ``monotonic`` and ``sleep`` (waiting), ``settle`` and
    ``poll`` are there so tests can run the protocol without waiting for real time.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        run_id: str,
        *,
        ttl: float | None = None,
        wait: float | None = None,
        settle: float | None = None,
        poll: float | None = None,
        env: Mapping[str, str] | None = None,
        log: Callable[[str], None] = _print,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        env = os.environ if env is None else env
        self.directory = Path(directory)
        self.path = self.directory / LEASE_FILE
        self.run_id = _checked_run_id(run_id.strip(), "run_id")
        # A keyword argument wins over the environment; either is checked, a bad value named.
        ttl_from = ("ttl", ttl) if ttl is not None else (LEASE_TTL_ENV, env.get(LEASE_TTL_ENV))
        wait_from = ("wait", wait) if wait is not None else (LEASE_WAIT_ENV, env.get(LEASE_WAIT_ENV))
        self.ttl = _seconds(ttl_from[1], ttl_from[0], DEFAULT_TTL, zero_ok=False)
        self.wait = _seconds(wait_from[1], wait_from[0], DEFAULT_WAIT, zero_ok=True)
        self.settle = _seconds(settle, "settle", min(DEFAULT_SETTLE, self.ttl / 10), zero_ok=True)
        self.poll = _seconds(poll, "poll", min(1.0, self.ttl / 4), zero_ok=False)
        #: token: held (rank 0) or read from the file (other ranks); role: "holder", "follower" or None yet.
        self.token: int | None = None
        self.role: str | None = None
        self.holding = False
        #: The lease record that fenced this run out, once that happened.
        self.fenced_by: dict[str, Any] | None = None
        self._log, self._clock, self._monotonic, self._sleep = log, clock, monotonic, sleep
        self._nonce = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def read(self, *, quiet: bool = False) -> dict[str, Any] | None:
        """The lease record, or None without a lease file; CheckpointError if it is not one (``quiet``: None)."""
        try:
            record = _parse(self.path.read_text(encoding="utf-8"))
            problem = None if record is not None else "is not a trainspec checkpoint lease (delete it to start over)"
        except FileNotFoundError:
            return None
        except OSError as exc:
            record, problem = None, f"cannot be read: {exc}"
        if problem is not None and not quiet:
            raise CheckpointError(f"checkpoint lease {self.path} {problem}")
        return record

    def _write(self, record: dict[str, Any], still_ours: Callable[[], bool] | None = None) -> bool:
        """Write ``record`` atomically; with ``still_ours``, only if it still says yes right before the rename."""
        fd, tmp = tempfile.mkstemp(prefix=".trainspec-lease-", suffix=".tmp", dir=self.directory)
        try:
            if hasattr(os, "fchmod"):  # mkstemp's 0600 would hide the lease from a run under another uid
                os.fchmod(fd, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(record, fh, sort_keys=True)
                fh.flush()
                os.fsync(fh.fileno())
            if still_ours is not None and not still_ours():
                return False
            os.replace(tmp, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        with contextlib.suppress(OSError):  # some filesystems cannot fsync a directory
            fd = os.open(self.directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return True

    def _record(self, token: int, *, released: bool = False) -> dict[str, Any]:
        fields = {"run_id": self.run_id, "token": token, "holder": holder_identity(), "heartbeat": self._clock()}
        return {"format": _FORMAT, **fields, "ttl": self.ttl, "released": released, "nonce": self._nonce}

    def _ours(self, record: dict[str, Any] | None, *, this_process: bool = False) -> bool:
        """The record names this run and token, unreleased; ``this_process``: written by this acquisition."""
        if record is None or (record["run_id"], record["token"]) != (self.run_id, self.token) or record.get("released"):
            return False
        holder = record.get("holder") or {}
        return not this_process or (record.get("nonce"), holder.get("pid")) == (self._nonce, os.getpid())

    def acquire(self) -> CheckpointLease:
        """Take the lease for this run (rank 0): wait while another run holds it, fence it out after ``wait``."""
        if self.holding:
            return self
        self.directory.mkdir(parents=True, exist_ok=True)
        started, reported = self._monotonic(), -math.inf
        while True:
            record = self.read()
            state, waited = self._state(record), self._monotonic() - started
            if state == "held" and record is not None and waited < self.wait:
                if self._monotonic() - reported >= REPORT_EVERY:
                    reported = self._monotonic()
                    self._log(
                        f"run {self.run_id} waits for the checkpoint lease of {self.directory}: {_who(record)} "
                        f"(heartbeat {max(0.0, self._clock() - record['heartbeat']):.0f}s ago); "
                        f"waited {waited:.0f}s of {self.wait:g}s"
                    )
                self._sleep(min(self.poll, self.wait - waited))
                continue
            token = (record["token"] if record else 0) + (0 if state == "own" else 1)
            if state in ("held", "expired", "gone") and record is not None:
                self._log(self._taking(record, state, waited, token))
            self.token, self._nonce = token, os.urandom(8).hex()
            self._write(self._record(token))
            self._sleep(self.settle)  # a newcomer racing us may have renamed its write over ours
            if self._ours(self.read(quiet=True)):  # (a process of this same run holds it as well as we do)
                break
        self.role, self.holding, self.fenced_by = "holder", True, None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._heartbeats, args=(self._stop,), daemon=True)
        self._thread.start()
        atexit.register(self.release)
        return self

    def _state(self, record: dict[str, Any] | None) -> str:
        if record is None:
            return "free"
        if record["run_id"] == self.run_id:
            return "own"
        if record.get("released"):
            return "released"
        if self._clock() - record["heartbeat"] > record["ttl"]:
            return "expired"
        return "gone" if _holder_gone(record.get("holder")) else "held"

    def _taking(self, record: dict[str, Any], state: str, waited: float, token: int) -> str:
        other = f"run {record['run_id']}"
        if state == "held":
            return (
                f"{other} still holds the checkpoint lease of {self.directory} after {waited:.0f}s "
                f"({LEASE_WAIT_ENV}={self.wait:g}): run {self.run_id} fences it out with token {token}; "
                f"{other} can write no more checkpoints"
            )
        why = (
            f"its heartbeat is {self._clock() - record['heartbeat']:.0f}s old (ttl {record['ttl']:g}s)"
            if state == "expired"
            else f"its process (pid {(record.get('holder') or {}).get('pid')} on this host) is gone"
        )
        return f"run {self.run_id} takes over the checkpoint lease of {self.directory} from {other}: {why}"

    def join(self) -> CheckpointLease:
        """On a rank other than 0: wait until the lease names this run, and remember its token.

        Rank 0 takes the lease, or fences the older run, within ``wait`` seconds; when the file
        still names another run two ttls after that, this raises CheckpointFenced.
        """
        started, reported, delay = self._monotonic(), -math.inf, self.poll / 16
        while True:
            record = self.read(quiet=True)
            if record is not None and record["run_id"] == self.run_id:
                self.token, self.role = record["token"], "follower"
                return self
            waited = self._monotonic() - started
            if waited >= self.wait + 2 * self.ttl:
                why = f"rank 0 did not take the checkpoint lease of {self.directory} in {waited:.0f}s ({_who(record)})"
                who = record["run_id"] if record else None
                raise CheckpointFenced(
                    f"run {self.run_id}: {why}; this rank writes no checkpoints", run_id=self.run_id, taken_by=who
                )
            # Rank 0 takes a free, released or expired lease in moments: only a live older run's is worth a line.
            news = waited >= REPORT_EVERY or self._state(record) == "held"
            if news and self._monotonic() - reported >= REPORT_EVERY:
                reported = self._monotonic()
                self._log(f"run {self.run_id} waits for its rank 0 to take the checkpoint lease ({_who(record)})")
            self._sleep(delay)
            delay = min(self.poll, 2 * delay)

    def check(self) -> None:
        """Raise CheckpointFenced unless the lease file still names this run with this token."""
        record = self.read(quiet=True)
        if self._ours(record):
            return
        if self.role == "holder":
            with self._lock:
                self._fenced(record)
        raise CheckpointFenced(self._lost(record), run_id=self.run_id, taken_by=record["run_id"] if record else None)

    def renew(self) -> bool:
        """One heartbeat: rewrite the lease if it is still ours; False (and no more heartbeats) once it is not."""
        with self._lock:
            if not self.holding or self.token is None:
                return False
            return self._write(self._record(self.token), self._still_ours)

    def _still_ours(self) -> bool:
        record = self.read(quiet=True)
        if self._ours(record, this_process=True):
            return True
        if self._ours(record):  # a process of this run took it back since (a restarted rank 0): it heartbeats now
            self._stop.set()
        else:
            self._fenced(record)
        return False

    def _fenced(self, record: dict[str, Any] | None) -> None:
        if self.holding:
            self.holding, self.fenced_by = False, record or {}
            self._stop.set()
            self._log(self._lost(record))

    def _lost(self, record: dict[str, Any] | None) -> str:
        if record is None:
            what = f"the lease file {self.path} is missing or unreadable"
        elif record["run_id"] != self.run_id:
            what = f"run {record['run_id']} took it over (token {record['token']})"
        else:
            what = "it was released" if record.get("released") else f"its token is {record['token']}, not {self.token}"
        return f"run {self.run_id} lost the checkpoint lease of {self.directory}: {what}; it writes no more checkpoints"

    def _heartbeats(self, stop: threading.Event) -> None:
        while not stop.wait(self.ttl / 4):
            try:
                if not self.renew():
                    return
            except OSError as exc:  # the next beat tries again; the checks before each write still hold
                self._log(f"run {self.run_id} cannot renew the checkpoint lease {self.path}: {exc}")

    def release(self) -> None:
        """Mark the lease released (if this process's acquisition is still in it): a waiting run goes on at once."""
        with self._lock:
            self._stop.set()
            if self.holding and self.token is not None:
                self.holding = False
                try:
                    mine = lambda: self._ours(self.read(quiet=True), this_process=True)  # noqa: E731
                    self._write(self._record(self.token, released=True), mine)
                except OSError as exc:
                    self._log(f"run {self.run_id} cannot release the checkpoint lease {self.path}: {exc}")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        atexit.unregister(self.release)

    def __enter__(self) -> CheckpointLease:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _who(record: dict[str, Any] | None) -> str:
    if record is None:
        return "no lease file yet"
    holder = record.get("holder") or {}
    return f"run {record['run_id']} on {holder.get('host', '?')} pid {holder.get('pid', '?')} holds it"


__all__ = ["LEASE_FILE", "CheckpointLease", "holder_identity", "run_id_from"]
