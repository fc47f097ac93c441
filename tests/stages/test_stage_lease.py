"""The checkpoint lease's protocol, on a fake clock: taking a free, expired, released or own lease,
waiting for a held one, fencing it after the wait limit, racing newcomers, heartbeats and release.
No test waits for real time to pass except where a real heartbeat thread must notice a fence."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lease_testlib import FakeTime, fake_clock, make_lease, read_record, this_host_holder, write_record

from trainspec.stages import CheckpointError, CheckpointFenced, CheckpointLease
from trainspec.stages.lease import LEASE_FILE, REPORT_EVERY

#: A bound for a heartbeat thread to notice a fence (never asserted on; the test fails only if it never does).
THREAD_BOUND = 60.0


@pytest.fixture
def made() -> Iterator[list[CheckpointLease]]:
    """Leases a test made, released at its end (their heartbeat threads stop, atexit forgets them)."""
    leases: list[CheckpointLease] = []
    yield leases
    for lease in leases:
        lease.release()


def test_a_free_lease_is_taken_with_token_1_and_released_at_the_end(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    lease = make_lease(tmp_path / "ckpt", "run-a", fake, log)
    made.append(lease)
    with lease:
        record = read_record(tmp_path / "ckpt")
        assert (record["run_id"], record["token"], record["released"]) == ("run-a", 1, False)
        assert record["heartbeat"] == fake.now - 0.5  # written before the settle
        assert record["ttl"] == 3600.0 and record["holder"]["pid"] > 0 and record["holder"]["host"]
        assert lease.holding and lease.token == 1
        lease.check()
    assert read_record(tmp_path / "ckpt")["released"] is True
    assert not lease.holding
    assert log == []  # nothing to say about a free lease
    with pytest.raises(CheckpointFenced, match="released"):
        lease.check()


def test_an_expired_lease_is_taken_over_at_once(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    write_record(tmp_path, "run-old", 4, heartbeat=fake.now - 61)  # ttl 60
    lease = make_lease(tmp_path, "run-new", fake, log).acquire()
    made.append(lease)
    assert (read_record(tmp_path)["run_id"], lease.token) == ("run-new", 5)
    assert len(log) == 1 and "takes over" in log[0] and "run-old" in log[0] and "61s old (ttl 60s)" in log[0]


def test_a_released_lease_is_taken_at_once_and_silently(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    write_record(tmp_path, "run-old", 2, heartbeat=fake.now, released=True)
    lease = make_lease(tmp_path, "run-new", fake, log).acquire()
    made.append(lease)
    assert lease.token == 3 and log == []


def test_the_runs_own_lease_is_taken_back_with_the_same_token(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    write_record(tmp_path, "run-a", 7, heartbeat=fake.now)  # e.g. rank 0 restarted by the controller
    lease = make_lease(tmp_path, "run-a", fake, log).acquire()
    made.append(lease)
    assert lease.token == 7 and read_record(tmp_path)["nonce"] != "nonce-run-a-7" and log == []


def test_a_held_lease_is_waited_for_until_its_holder_releases_it(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    old = make_lease(tmp_path, "run-old", fake, [])
    made.append(old.acquire())

    def the_old_run() -> None:  # heartbeats while it trains, releases after 100 s of waiting
        if fake.sleeps > 100:
            old.release()
        elif old.holding:
            old.renew()

    fake.hooks.append(the_old_run)
    new = make_lease(tmp_path, "run-new", fake, log)
    made.append(new.acquire())
    assert new.token == 2 and read_record(tmp_path)["run_id"] == "run-new"
    assert not any("fences" in line for line in log)
    waiting = [line for line in log if "waits for the checkpoint lease" in line]
    assert waiting and all("run-old" in line and "run-new" in line for line in waiting)
    assert "waited 0s of 600s" in waiting[0]
    # A line at most every REPORT_EVERY seconds of waiting (100 s here), not one per poll.
    assert 2 <= len(waiting) <= 100 // REPORT_EVERY + 1 < fake.sleeps


def test_after_the_wait_limit_the_holder_is_fenced_out(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    old_log: list[str] = []
    old = make_lease(tmp_path, "run-old", fake, old_log)
    made.append(old.acquire())
    fake.hooks.append(lambda: old.holding and old.renew())  # a live holder that never lets go
    new = make_lease(tmp_path, "run-new", fake, log, wait=20.0)
    made.append(new.acquire())
    assert new.token == 2
    assert read_record(tmp_path)["run_id"] == "run-new"
    fencing = [line for line in log if "fences it out" in line]
    assert len(fencing) == 1 and "run-old still holds" in fencing[0] and "TRAINSPEC_LEASE_WAIT=20" in fencing[0]
    # The old run finds out at its next heartbeat or write, and never writes over the new lease.
    assert old.renew() is False
    assert not old.holding and old.fenced_by is not None and old.fenced_by["run_id"] == "run-new"
    with pytest.raises(CheckpointFenced, match=r"run run-old lost .*: run run-new took it over \(token 2\)") as info:
        old.check()
    assert (info.value.run_id, info.value.taken_by) == ("run-old", "run-new")
    old.release()
    assert read_record(tmp_path)["run_id"] == "run-new"
    assert any("run-new took it over" in line for line in old_log)


def test_a_wait_limit_of_zero_fences_at_once(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    write_record(tmp_path, "run-old", 3, heartbeat=fake.now)
    made.append(make_lease(tmp_path, "run-new", fake, log, wait=0).acquire())
    assert read_record(tmp_path)["token"] == 4 and "fences it out with token 4" in log[0]


def test_of_two_racing_newcomers_the_one_whose_write_stayed_wins(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    state = {"raced": False}

    def racer() -> None:
        # While run-a settles after its write, run-b (which read the same free lease) renames its own over it;
        # some time later run-b is done and releases.
        if not state["raced"]:
            state["raced"] = True
            write_record(tmp_path, "run-b", 1, heartbeat=fake.now)
        elif fake.sleeps == 50:
            write_record(tmp_path, "run-b", 1, heartbeat=fake.now, released=True)
        elif fake.sleeps < 50:
            write_record(tmp_path, "run-b", 1, heartbeat=fake.now)

    fake.hooks.append(racer)
    a = make_lease(tmp_path, "run-a", fake, log)
    made.append(a.acquire())
    assert a.token == 2  # lost the race for token 1, took the lease once run-b released it
    assert any("waits for the checkpoint lease" in line and "run-b" in line for line in log)


def test_a_newcomer_that_believed_it_won_is_fenced_at_its_next_check(tmp_path: Path, made: list) -> None:
    # The remaining race (a write that lands after the other's settle): both believe they hold the lease,
    # and the one whose write is not in the file finds out before it writes anything.
    fake = FakeTime()
    a = make_lease(tmp_path, "run-a", fake, [])
    made.append(a.acquire())
    write_record(tmp_path, "run-b", 1, heartbeat=fake.now)
    with pytest.raises(CheckpointFenced, match="run-b took it over"):
        a.check()


def test_the_heartbeat_thread_renews_and_stops_once_fenced(tmp_path: Path, made: list) -> None:
    log: list[str] = []
    lease = CheckpointLease(tmp_path, "run-a", ttl=0.2, wait=0, settle=0, env={}, log=log.append)
    made.append(lease.acquire())
    first = read_record(tmp_path)["heartbeat"]
    thread = lease._thread
    assert thread is not None and thread.is_alive() and thread.daemon
    deadline = time.monotonic() + THREAD_BOUND
    while read_record(tmp_path)["heartbeat"] == first and time.monotonic() < deadline:  # a beat every ttl/4
        thread.join(0.01)
    assert read_record(tmp_path)["heartbeat"] != first
    with lease._lock:  # a newer run's write, kept out of the thread's check-then-rename window
        write_record(tmp_path, "run-b", 2, heartbeat=read_record(tmp_path)["heartbeat"] + 10_000, ttl=10_000.0)
    thread.join(THREAD_BOUND)
    assert not thread.is_alive()
    assert read_record(tmp_path)["run_id"] == "run-b"  # never overwritten
    assert not lease.holding and any("run-b took it over" in line for line in log)


def test_a_restarted_rank_0_of_the_same_run_is_not_released_by_its_predecessor(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    first = make_lease(tmp_path, "run-a", fake, log)
    made.append(first.acquire())
    second = make_lease(tmp_path, "run-a", fake, log)  # the same run's rank 0 again, while the first still exits
    made.append(second.acquire())
    assert first.token == second.token == 1
    assert first.renew() is False and first.fenced_by is None  # it stops heartbeating: the second one does
    first.check()  # the same run and token: still allowed to write
    first.release()
    assert read_record(tmp_path)["released"] is False
    second.check()
    second.release()
    assert read_record(tmp_path)["released"] is True
    assert log == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_never_releases_its_parents_lease(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    lease = make_lease(tmp_path, "run-a", fake, log)
    made.append(lease.acquire())
    child = os.fork()
    if child == 0:  # a data-loader worker, say, that exits through atexit
        try:
            lease.release()
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    assert read_record(tmp_path)["released"] is False and lease.holding


def test_a_holder_gone_from_this_host_is_taken_over_at_once(tmp_path: Path, made: list) -> None:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], check=True, capture_output=True, text=True
    )
    dead = int(child.stdout)
    holder = this_host_holder(dead)
    if not holder["boot"] or not holder["pidns"]:
        pytest.skip("no /proc: a holder's liveness cannot be told here")
    fake, log = fake_clock()
    write_record(tmp_path, "run-old", 1, heartbeat=fake.now, holder=holder)
    lease = make_lease(tmp_path, "run-new", fake, log)
    made.append(lease.acquire())
    assert lease.token == 2 and f"pid {dead} on this host) is gone" in log[0]


def test_a_live_holder_of_another_host_is_not_taken_for_gone(tmp_path: Path, made: list) -> None:
    fake, log = fake_clock()
    write_record(tmp_path, "run-old", 1, heartbeat=fake.now, holder={**this_host_holder(999_999), "host": "pod-x"})
    made.append(make_lease(tmp_path, "run-new", fake, log, wait=5).acquire())
    assert "fences it out" in log[-1]  # it waited the whole limit


def test_a_follower_waits_for_its_rank_0_and_checks_its_token(tmp_path: Path) -> None:
    fake, log = fake_clock()
    write_record(tmp_path, "run-old", 3, heartbeat=fake.now)
    fake.hooks.append(lambda: fake.sleeps == 5 and write_record(tmp_path, "run-new", 4, heartbeat=fake.now))
    follower = make_lease(tmp_path, "run-new", fake, log).join()
    assert (follower.role, follower.token, follower.holding) == ("follower", 4, False)
    assert "waits for its rank 0" in log[0] and "run-old" in log[0]
    follower.check()
    write_record(tmp_path, "run-newer", 5, heartbeat=fake.now)
    with pytest.raises(CheckpointFenced, match="run-newer took it over"):
        follower.check()


def test_a_follower_says_nothing_while_its_rank_0_takes_a_free_lease(tmp_path: Path) -> None:
    fake, log = fake_clock()
    fake.hooks.append(lambda: fake.sleeps == 3 and write_record(tmp_path, "run-a", 1, heartbeat=fake.now))
    assert make_lease(tmp_path, "run-a", fake, log).join().token == 1
    assert log == []  # the usual start of every run: no line about it


def test_a_follower_whose_rank_0_never_takes_the_lease_gives_up(tmp_path: Path) -> None:
    fake = FakeTime()
    write_record(tmp_path, "run-old", 3, heartbeat=fake.now)
    with pytest.raises(CheckpointFenced, match="rank 0 did not take the checkpoint lease") as info:
        make_lease(tmp_path, "run-new", fake, [], ttl=10.0, wait=30.0).join()
    assert info.value.taken_by == "run-old" and fake.now >= 1_000_000 + 30 + 2 * 10


def test_a_file_that_is_not_a_lease_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / LEASE_FILE).write_text("{not json")
    with pytest.raises(CheckpointError, match=r"is not a trainspec checkpoint lease \(delete it"):
        make_lease(tmp_path, "run-a", FakeTime(), []).acquire()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TRAINSPEC_LEASE_TTL": "soon"}, "TRAINSPEC_LEASE_TTL='soon' is not a number of seconds > 0"),
        ({"TRAINSPEC_LEASE_TTL": "0"}, "TRAINSPEC_LEASE_TTL='0' is not a number of seconds > 0"),
        ({"TRAINSPEC_LEASE_TTL": "nan"}, "TRAINSPEC_LEASE_TTL='nan'"),
        ({"TRAINSPEC_LEASE_WAIT": "-1"}, "TRAINSPEC_LEASE_WAIT='-1' is not a number of seconds >= 0"),
        ({"TRAINSPEC_LEASE_WAIT": "inf"}, "TRAINSPEC_LEASE_WAIT='inf'"),
    ],
)
def test_bad_settings_are_clear_errors(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(CheckpointError) as info:
        CheckpointLease(tmp_path, "run-a", env=env)
    assert message in str(info.value)


def test_settings_come_from_the_environment_and_keywords_win(tmp_path: Path) -> None:
    env = {"TRAINSPEC_LEASE_TTL": " 8 ", "TRAINSPEC_LEASE_WAIT": "0"}
    lease = CheckpointLease(tmp_path, "run-a", env=env)
    assert (lease.ttl, lease.wait, lease.poll, lease.settle) == (8.0, 0.0, 1.0, 0.5)
    assert (
        CheckpointLease(tmp_path, "run-a", env=env, ttl=2, wait=3).ttl,
        CheckpointLease(tmp_path, "r", env={}).wait,
    ) == (
        2.0,
        600.0,
    )
    with pytest.raises(CheckpointError, match="ttl=-2 is not a number of seconds > 0"):
        CheckpointLease(tmp_path, "run-a", env={}, ttl=-2)
    with pytest.raises(CheckpointError, match="is not a run id"):
        CheckpointLease(tmp_path, "two words", env={})
