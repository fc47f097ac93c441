"""Helpers for the checkpoint lease tests: a fake clock, leases on it, lease records written by hand."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainspec.stages.lease import LEASE_FILE, CheckpointLease, holder_identity

#: Rank and world variables a shell may carry: cleared so that this process is rank 0 of 1.
RANK_VARIABLES = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "GROUP_RANK",
    "PET_NODE_RANK",
    "PET_NNODES",
    "PET_NPROC_PER_NODE",
    "JAX_PROCESS_ID",
    "JAX_NUM_PROCESSES",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
)


class FakeTime:
    """Wall clock, monotonic clock and sleep in one: sleeping moves time on and runs the hooks.

    A hook plays the other run while this one sleeps (heartbeats, a release, a racing write).
    """

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start
        self.hooks: list[Callable[[], object]] = []
        self.sleeps = 0

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.sleeps += 1
        for hook in list(self.hooks):
            hook()


def fake_clock() -> tuple[FakeTime, list[str]]:
    """A fake clock and the list a lease's lines go to."""
    return FakeTime(), []


def make_lease(directory: Path, run_id: str, fake: FakeTime, log: list[str], **kwargs: Any) -> CheckpointLease:
    """A lease on the fake clock; its ttl is long in real time, so its heartbeat thread never beats on its own."""
    kwargs.setdefault("ttl", 3600.0)
    kwargs.setdefault("wait", 600.0)
    kwargs.setdefault("settle", 0.5)
    kwargs.setdefault("poll", 1.0)
    return CheckpointLease(
        directory,
        run_id,
        env={},
        log=log.append,
        clock=fake.time,
        monotonic=fake.time,
        sleep=fake.sleep,
        **kwargs,
    )


def write_record(directory: Path, run_id: str, token: int, heartbeat: float, **extra: Any) -> dict[str, Any]:
    """Put a lease record in place as another run's rank 0 would (atomically, by rename)."""
    record = {
        "format": "trainspec-lease/1",
        "run_id": run_id,
        "token": token,
        "holder": {"host": "other-pod", "pid": 1, "boot": None, "pidns": None},
        "heartbeat": heartbeat,
        "ttl": 60.0,
        "released": False,
        "nonce": f"nonce-{run_id}-{token}",
        **extra,
    }
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{LEASE_FILE}.test"
    tmp.write_text(json.dumps(record))
    os.replace(tmp, directory / LEASE_FILE)
    return record


def read_record(directory: Path) -> dict[str, Any]:
    return json.loads((directory / LEASE_FILE).read_text())


def this_host_holder(pid: int) -> dict[str, Any]:
    """A holder of this host, boot and pid namespace with another pid."""
    return {**holder_identity(), "pid": pid}
