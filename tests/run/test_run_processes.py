"""Process groups under ``run --local``: Ctrl-C stops every one (no orphans), the exit status is the
first failing node's, what a node leaves behind ends with it, and output is prefixed per node."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from run_testlib import RUN_TIMEOUT, RUNTIME, by_prefix, clean_env, trainspec

from trainspec.run.processes import Member, Supervisor, exit_code

#: A node that records its pid and a grandchild's, then waits to be stopped (or fails on request).
NODE_SCRIPT = """\
import os, subprocess, sys, time
from pathlib import Path
node = os.environ["PET_NODE_RANK"]
out = Path(sys.argv[1])
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
# Written whole, then renamed: the test polls for these files and must never read a half-written one.
(out / f"node-{node}.tmp").write_text(__import__("json").dumps([os.getpid(), child.pid]))
os.replace(out / f"node-{node}.tmp", out / f"node-{node}.json")
print(f"node {node} up", flush=True)
print(f"to stderr from {node}", file=sys.stderr, flush=True)
if node == os.environ.get("FAIL_NODE"):
    while len(list(out.glob("node-*.json"))) < int(os.environ["PET_NNODES"]):
        time.sleep(0.01)  # fail only once every node is up, so there is something to stop
    sys.exit(3)
time.sleep(1000)
"""


def _spec(tmp_path: Path, nodes: int) -> Path:
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
metadata: {{name: waiter, namespace: team-a}}
spec:
  runtime: rt
  command: [python, {json.dumps(str(script))}, {json.dumps(str(pids))}]
  nodes: {nodes}
"""
    )
    return spec


def _gone(pid: int) -> bool:
    """The process no longer runs (it does not exist, or is a zombie nobody reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def _running(pids: list[int]) -> list[int]:
    """The pids still running once SIGKILL had its (asynchronous) effect, within a generous bound."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while (left := [p for p in pids if not _gone(p)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def _recorded(pids: Path, nodes: int, proc: subprocess.Popen) -> list[int]:
    deadline = time.monotonic() + RUN_TIMEOUT  # a bound for a hung test, never asserted on
    while len(list(pids.glob("node-*.json"))) < nodes:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return [pid for f in sorted(pids.glob("node-*.json")) for pid in json.loads(f.read_text())]


def test_ctrl_c_stops_every_process_group_and_leaves_no_orphans(tmp_path: Path) -> None:
    spec = _spec(tmp_path, nodes=3)
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainspec", "run", "--local", str(spec), "--no-project"],
        cwd=tmp_path,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pids = _recorded(tmp_path / "pids", 3, proc)
    assert len(pids) == 6 and not any(_gone(p) for p in pids)
    proc.send_signal(signal.SIGINT)  # what Ctrl-C sends to the foreground process
    out, err = proc.communicate(timeout=RUN_TIMEOUT)
    assert proc.returncode == 130, err
    assert _running(pids) == []
    assert "interrupted (SIGINT): every process was stopped" in err
    assert sorted(by_prefix(out)) == ["node 0", "node 1", "node 2"]


def test_sigterm_stops_the_run_too(tmp_path: Path) -> None:
    spec = _spec(tmp_path, nodes=2)
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainspec", "run", "--local", str(spec), "--no-project"],
        cwd=tmp_path,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pids = _recorded(tmp_path / "pids", 2, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=RUN_TIMEOUT)
    assert proc.returncode == 143, err
    assert _running(pids) == []


def test_the_exit_status_is_the_first_failing_nodes_and_the_others_are_stopped(tmp_path: Path) -> None:
    spec = _spec(tmp_path, nodes=3)
    done = trainspec("run", "--local", str(spec), "--no-project", cwd=tmp_path, env=clean_env(FAIL_NODE="1"))
    assert done.returncode == 3, done.stderr
    assert "failed: node 1 exited 3" in done.stderr
    pids = [pid for f in (tmp_path / "pids").glob("node-*.json") for pid in json.loads(f.read_text())]
    assert len(pids) == 6 and _running(pids) == []
    # stderr stays stderr, prefixed too
    assert sorted(by_prefix(done.stderr)) == ["node 0", "node 1", "node 2"]
    assert by_prefix(done.stdout)["node 1"] == ["node 1 up"]


def _supervise(*members: Member) -> tuple[int, str, str]:
    out, err = io.BytesIO(), io.BytesIO()
    outcome = Supervisor(out, err, grace=RUN_TIMEOUT).run(list(members))
    return outcome.code, out.getvalue().decode(), err.getvalue().decode()


def test_what_a_node_leaves_behind_ends_with_it(tmp_path: Path) -> None:
    # The node's main process exits at once; its background child would outlive it (a pod's would not).
    marker = tmp_path / "child.pid"
    code = (
        f"import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(1000)']);"
        f"open({str(marker)!r}, 'w').write(str(p.pid))"
    )
    status, _, _ = _supervise(Member("node 0", [sys.executable, "-c", code], dict(os.environ)))
    assert status == 0
    assert _running([int(marker.read_text())]) == []


def test_lines_are_prefixed_and_unterminated_output_still_shows() -> None:
    code = "import sys; sys.stdout.write('a\\nb'); sys.stderr.write('e\\n')"
    status, out, err = _supervise(Member("node 4", [sys.executable, "-c", code], dict(os.environ)))
    assert status == 0
    assert out == "[node 4] a\n[node 4] b\n"
    assert err == "[node 4] e\n"


def test_killed_by_a_signal_is_128_plus_the_signal() -> None:
    assert exit_code(-signal.SIGKILL) == 137 and exit_code(-signal.SIGTERM) == 143 and exit_code(3) == 3
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    status, _, _ = _supervise(Member("node 0", [sys.executable, "-c", code], dict(os.environ)))
    assert status == 137
