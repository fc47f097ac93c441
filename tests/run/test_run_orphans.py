"""``run --local`` cannot leave orphans, and one work directory serves one run at a time.

* SIGKILL to ``trainspec run`` (nothing of it runs any more: no handler, no cleanup) still ends
  every process of the run: each node's main process, what it started in its group, and what it
  started in a session of its own (as torchrun starts its workers);
* a second run on the same work directory while the first is alive is refused, naming the first's
  pid; once the first has ended the same command runs, and after a killed run it says it took over.

Processes are found by a marker in their command line (``/proc``), so a test sees every process it
caused, whatever its group or session; whatever is left at the end is killed by pid.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from run_testlib import RUN_TIMEOUT, RUNTIME, clean_env, trainspec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="finds processes through /proc (Linux)"),
]

#: How long the processes of a killed run may take to disappear: a bound for a broken cleanup, never
#: a timing the test relies on (they are gone within milliseconds).
GONE_WITHIN = 60.0

#: A node: starts a child in its own process group and one in a session of its own (like torchrun's
#: workers), records the three pids, then waits for a release file when $HOLD names one (else exits 0).
NODE_SCRIPT = """\
import json, os, subprocess, sys, time
from pathlib import Path
out, marker = Path(sys.argv[1]), sys.argv[2]
node = os.environ["PET_NODE_RANK"]
sleeper = [sys.executable, "-c", "import time; time.sleep(1000)", marker]
grouped = subprocess.Popen(sleeper)
detached = subprocess.Popen(sleeper, start_new_session=True)
hold = os.environ.get("HOLD")
if hold:
    # Written whole, then renamed: the test polls for these files and must never read a half-written one.
    (out / f"node-{node}.tmp").write_text(json.dumps([os.getpid(), grouped.pid, detached.pid]))
    os.replace(out / f"node-{node}.tmp", out / f"node-{node}.json")
    while not Path(hold).exists():
        time.sleep(0.02)
print(f"node {node} done", flush=True)
"""


def _spec(tmp_path: Path, marker: str, nodes: int = 2) -> tuple[Path, Path]:
    script = tmp_path / "node.py"
    script.write_text(NODE_SCRIPT)
    pids = tmp_path / "pids"
    pids.mkdir()
    spec = tmp_path / "job.yaml"
    spec.write_text(
        RUNTIME.format(name="rt", framework="torch")
        + f"""---
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: held, namespace: team-a}}
spec:
  runtime: rt
  command: [python, {json.dumps(str(script))}, {json.dumps(str(pids))}, {json.dumps(marker)}]
  nodes: {nodes}
"""
    )
    return spec, pids


def _marked(marker: str) -> list[int]:
    """Live (not zombie) processes with ``marker`` as an argument."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # gone meanwhile
        if marker.encode() in argv and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def _left_after_waiting(marker: str) -> list[int]:
    deadline = time.monotonic() + GONE_WITHIN
    while (left := _marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


@pytest.fixture
def marker() -> Iterator[str]:
    """A marker unique to the test; at teardown every process still carrying it is killed."""
    value = f"trainspec-test-{uuid.uuid4().hex}"
    yield value
    for pid in _marked(value):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """The trainspec processes a test starts, killed and reaped at teardown if still running."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _start(spec: Path, cwd: Path, started: list[subprocess.Popen[str]], **env: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainspec", "run", "--local", str(spec), "--no-project"],
        cwd=cwd,
        env=clean_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(proc)
    return proc


def _wait_up(pids: Path, nodes: int, proc: subprocess.Popen[str]) -> list[int]:
    deadline = time.monotonic() + RUN_TIMEOUT  # a bound for a hung test, never asserted on
    while len(list(pids.glob("node-*.json"))) < nodes:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return [pid for f in sorted(pids.glob("node-*.json")) for pid in json.loads(f.read_text())]


def test_sigkill_to_trainspec_ends_every_process_of_the_run(
    tmp_path: Path, marker: str, started: list[subprocess.Popen[str]]
) -> None:
    spec, pids = _spec(tmp_path, marker)
    proc = _start(spec, tmp_path, started, HOLD=str(tmp_path / "never"))
    recorded = _wait_up(pids, 2, proc)
    assert len(recorded) == 6 and sorted(recorded) == sorted(set(recorded))
    assert set(recorded) <= set(_marked(marker))  # the marker finds every one of them
    proc.kill()  # SIGKILL: trainspec gets no chance to clean up
    proc.communicate(timeout=RUN_TIMEOUT)
    assert _left_after_waiting(marker) == []
    # The killed run's work directory is taken over by the next run, which says so.
    again = trainspec("run", "--local", str(spec), "--no-project", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"pid {proc.pid}" in again.stderr and "took it over" in again.stderr, again.stderr


def test_a_second_run_on_the_same_work_directory_is_refused_while_the_first_runs(
    tmp_path: Path, marker: str, started: list[subprocess.Popen[str]]
) -> None:
    spec, pids = _spec(tmp_path, marker)
    release = tmp_path / "release"
    first = _start(spec, tmp_path, started, HOLD=str(release))
    _wait_up(pids, 2, first)
    second = trainspec("run", "--local", str(spec), "--no-project", cwd=tmp_path)
    assert second.returncode != 0, second.stderr
    assert "TS707" in second.stderr and f"pid {first.pid}" in second.stderr, second.stderr
    assert first.poll() is None  # the refused run touched nothing of the first
    release.touch()
    _, err = first.communicate(timeout=RUN_TIMEOUT)
    assert first.returncode == 0, err
    third = trainspec("run", "--local", str(spec), "--no-project", cwd=tmp_path)
    assert third.returncode == 0, third.stderr
    assert "took it over" not in third.stderr  # the first released it: nothing to take over
    assert _left_after_waiting(marker) == []
