"""The checkpoint helpers under a lease: with ``TRAINSPEC_RUN_ID`` every write is guarded and a fenced
run writes nothing more; without it they behave exactly as before. Also what the lease imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lease_testlib import RANK_VARIABLES, read_record, write_record

import trainspec.stages as stages
from trainspec.stages import (
    CheckpointError,
    CheckpointFenced,
    CheckpointLease,
    acquire_lease,
    checkpoints as C,
    latest_checkpoint,
    lease as L,
    list_checkpoints,
    save_checkpoint,
)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Rank 0 of run ``run-a``, checkpoints in ``tmp_path/ckpt``; a fresh lease registry, released after."""
    for name in RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name in ("TRAINSPEC_RUN_ID", "TRAINSPEC_LEASE_TTL", "TRAINSPEC_LEASE_WAIT", "TRAINSPEC_CHECKPOINT_KEEP"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "ckpt"
    monkeypatch.setenv("TRAINSPEC_CHECKPOINT_DIR", str(root))
    # An hour's ttl: no heartbeat thread beats during a test (a test writes the other run's lease itself).
    monkeypatch.setenv("TRAINSPEC_LEASE_TTL", "3600")
    monkeypatch.setattr(L, "DEFAULT_SETTLE", 0.001)
    registry: dict[str, CheckpointLease] = {}
    monkeypatch.setattr(C, "_LEASES", registry)
    yield root
    for lease in registry.values():
        lease.release()


def _save(step: int, run: str) -> None:
    with save_checkpoint(step) as tmp:
        (tmp / "state.json").write_text(json.dumps({"step": step, "run": run}))


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith((".tmp-", ".old-")))


def test_without_a_run_id_nothing_is_leased(env: Path) -> None:
    threads = threading.active_count()
    _save(1, "a")
    _save(2, "a")
    assert latest_checkpoint() == env / "step-000000002"
    assert sorted(p.name for p in env.iterdir()) == ["step-000000001", "step-000000002"]  # no lease file
    assert threading.active_count() == threads  # no heartbeat thread
    assert C.lease_for(env) is None and C._LEASES == {}


def test_with_a_run_id_rank_0_takes_the_lease_at_its_first_save(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSPEC_RUN_ID", "run-a")
    _save(1, "a")
    record = read_record(env)
    assert (record["run_id"], record["token"], record["released"]) == ("run-a", 1, False)
    _save(2, "a")
    assert [p.name for p in list_checkpoints()] == ["step-000000001", "step-000000002"]  # the lease file is no step
    assert read_record(env)["token"] == 1  # taken once per process


def test_a_fenced_run_writes_nothing_and_names_the_run_that_took_over(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAINSPEC_RUN_ID", "run-a")
    _save(1, "a")
    write_record(env, "run-b", 2, heartbeat=time.time())  # the newer run fenced run-a out...
    newer = env / "step-000000002"
    newer.mkdir()
    (newer / "state.json").write_text('{"run": "b"}')
    (newer / "COMPLETE").write_text('{"step": 2}')  # ...and saved step 2
    with pytest.raises(CheckpointFenced, match=r"run run-a lost .*run run-b took it over \(token 2\)") as info:
        _save(2, "a")
    assert (info.value.run_id, info.value.taken_by) == ("run-a", "run-b")
    assert json.loads((newer / "state.json").read_text()) == {"run": "b"}  # not replaced
    assert _leftovers(env) == []
    assert read_record(env)["run_id"] == "run-b"
    C._LEASES[os.path.realpath(env)].release()
    assert read_record(env)["run_id"] == "run-b"  # a fenced run's release leaves the lease alone


def test_a_run_fenced_while_it_writes_publishes_nothing(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSPEC_RUN_ID", "run-a")
    _save(1, "a")

    def fenced_in_the_block() -> None:
        with save_checkpoint(2) as tmp:
            (tmp / "state.json").write_text("{}")
            write_record(env, "run-b", 2, heartbeat=time.time())

    with pytest.raises(CheckpointFenced, match="run-b took it over"):
        fenced_in_the_block()
    assert [p.name for p in env.iterdir() if not p.name.startswith(".trainspec-lease")] == ["step-000000001"]


def test_a_run_fenced_between_the_rename_and_the_marker_leaves_no_checkpoint(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAINSPEC_RUN_ID", "run-a")
    _save(1, "a")
    fsync = C._fsync

    def fenced_after_the_rename(path: Path) -> None:
        fsync(path)
        if path == env and (env / "step-000000002").exists():
            write_record(env, "run-b", 2, heartbeat=time.time())

    monkeypatch.setattr(C, "_fsync", fenced_after_the_rename)
    with pytest.raises(CheckpointFenced, match="run-b took it over"):
        _save(2, "a")
    assert not (env / "step-000000002").exists() and _leftovers(env) == []
    assert latest_checkpoint(env) == env / "step-000000001"


def test_a_run_fenced_after_its_marker_prunes_nothing(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSPEC_RUN_ID", "run-a")
    monkeypatch.setenv("TRAINSPEC_CHECKPOINT_KEEP", "1")
    _save(1, "a")
    marker = C._write_marker

    def fenced_after_the_marker(final: Path, step: int) -> None:
        marker(final, step)
        write_record(env, "run-b", 2, heartbeat=time.time())

    monkeypatch.setattr(C, "_write_marker", fenced_after_the_marker)
    with pytest.raises(CheckpointFenced):
        _save(2, "a")
    # Step 2 was published while the lease was run-a's; the pruning that would follow is run-b's to do.
    assert [p.name for p in list_checkpoints(env)] == ["step-000000001", "step-000000002"]


def test_other_ranks_check_their_run_and_token(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSPEC_RUN_ID", "run-a")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    write_record(env, "run-a", 3, heartbeat=time.time())  # rank 0 of run-a holds it
    _save(1, "a")
    lease = C._LEASES[os.path.realpath(env)]
    assert (lease.role, lease.token) == ("follower", 3)
    assert read_record(env)["nonce"] == "nonce-run-a-3"  # a follower never writes the lease
    write_record(env, "run-b", 4, heartbeat=time.time())
    with pytest.raises(CheckpointFenced, match="run-b took it over"):
        _save(2, "a")


def test_another_rank_whose_rank_0_never_takes_the_lease_writes_nothing(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAINSPEC_RUN_ID", "run-a")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("TRAINSPEC_LEASE_TTL", "0.01")
    monkeypatch.setenv("TRAINSPEC_LEASE_WAIT", "0")
    write_record(env, "run-old", 3, heartbeat=time.time())
    with pytest.raises(CheckpointFenced, match="rank 0 did not take the checkpoint lease"):
        _save(1, "a")
    assert not list(env.glob("step-*")) and _leftovers(env) == []


def test_resuming_takes_the_lease_first(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _save(1, "old")  # an older run's checkpoint, from before leases
    write_record(env, "run-old", 5, heartbeat=time.time())
    monkeypatch.setenv("TRAINSPEC_RUN_ID", "run-a")
    monkeypatch.setenv("TRAINSPEC_LEASE_WAIT", "0")  # fence the old run at once
    assert latest_checkpoint() == env / "step-000000001"
    assert (read_record(env)["run_id"], read_record(env)["token"]) == ("run-a", 6)


def test_acquire_lease_is_a_context_manager_the_helpers_share(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSPEC_RUN_ID", "run-a")
    with acquire_lease() as lease:
        assert lease.holding and C._LEASES[os.path.realpath(env)] is lease
        _save(1, "a")
        assert read_record(env)["token"] == 1
    assert read_record(env)["released"] is True and not lease.holding
    assert lease._thread is not None and not lease._thread.is_alive()
    _save(2, "a")  # the helpers take a released lease of their own run back
    assert (read_record(env)["released"], read_record(env)["token"]) == (False, 1)


def test_acquire_lease_needs_a_run_id(env: Path) -> None:
    with pytest.raises(CheckpointError, match="TRAINSPEC_RUN_ID is not set"):
        acquire_lease()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("TRAINSPEC_LEASE_TTL", "1m", "TRAINSPEC_LEASE_TTL='1m' is not a number of seconds > 0"),
        ("TRAINSPEC_LEASE_WAIT", "forever", "TRAINSPEC_LEASE_WAIT='forever' is not a number of seconds >= 0"),
        ("TRAINSPEC_RUN_ID", "run\x07a", "is not a run id"),
    ],
)
def test_bad_values_fail_the_first_save_clearly(
    env: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv("TRAINSPEC_RUN_ID", "run-a")
    monkeypatch.setenv(name, value)
    with pytest.raises(CheckpointError) as info:
        _save(1, "a")
    assert message in str(info.value)
    assert not list(env.glob("step-*"))


def test_the_lease_names_are_exported_and_fenced_is_a_checkpoint_error() -> None:
    for name in ("CheckpointFenced", "CheckpointLease", "acquire_lease"):
        assert name in stages.__all__ and getattr(stages, name) is not None
    assert issubclass(CheckpointFenced, CheckpointError)


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out))


def test_the_lease_stays_light_and_out_of_the_sharding_stage() -> None:
    loaded = _modules_after("import trainspec.stages.checkpoints")
    assert "trainspec.stages.lease" in loaded
    # The rank is read only once a run id is set; the stage never loads the lease.
    assert not {"trainspec.stages.ranks", "trainspec.stages.manifest", "dataclasses", "socket"} & loaded
    assert "trainspec.stages.lease" not in _modules_after("import trainspec.stages.shard")
