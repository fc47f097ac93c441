"""Two ``run --local`` runs of one job on one checkpoint directory, overlapping as a GitOps sync
leaves them: the newer run waits while the older one holds the checkpoint lease and resumes from
its last checkpoint, or, with a wait limit of 0, fences it out; either way no checkpoint of the
older run is written once the newer one took the lease.

Each node appends what it does to a shared log (one ``write`` per line, so the lines of both runs
keep the order they happened in); the assertions read that order and the checkpoints' contents,
never the clock. The older run holds its lease until the test lets it go on (a gate file), so the
overlap does not depend on timing either.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from run_testlib import RUN_TIMEOUT, RUNTIME, clean_env

NODE_SCRIPT = """\
import json, os, sys, time
from pathlib import Path
from trainspec.stages import CheckpointFenced, latest_checkpoint, process_info, save_checkpoint

log, tag, steps, hold = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4] == "hold"
run, rank = os.environ["TRAINSPEC_RUN_ID"], process_info().rank
lease = Path(os.environ["TRAINSPEC_CHECKPOINT_DIR"]) / ".trainspec-lease.json"

def record(event, **fields):
    with open(log, "a") as fh:
        fh.write(json.dumps({"tag": tag, "run": run, "rank": rank, "event": event, **fields}) + "\\n")

latest = latest_checkpoint()  # rank 0 takes the lease here, the other rank waits until it has
start = json.loads((latest / "state.json").read_text())["step"] if latest else 0
record("resumed", step=start, token=json.loads(lease.read_text())["token"])
(log.parent / f"{run}-rank-{rank}").touch()  # every rank has resumed before rank 0 saves (init_process_group)
while len(list(log.parent.glob(f"{run}-rank-*"))) < int(os.environ["PET_NNODES"]):
    time.sleep(0.02)
if rank == 0:
    for step in range(start + 1, start + steps + 1):
        try:
            with save_checkpoint(step) as d:
                (d / "state.json").write_text(json.dumps({"step": step, "run": run}))
        except CheckpointFenced as exc:
            record("fenced", step=step, message=str(exc))
            sys.exit(3)
        record("wrote", step=step)
        while hold and step == start + 1 and not (log.parent / f"go-{tag}").exists():
            time.sleep(0.02)  # hold the lease until the test has the newer run going
"""


class Runs:
    """The two runs of the job ``team-a/leased``: same work directory, different args (so different run ids)."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path
        self.script = tmp_path / "train.py"
        self.script.write_text(NODE_SCRIPT)
        self.log = tmp_path / "events.jsonl"
        self.log.touch()
        self.work = tmp_path / "work"
        self.procs: list[subprocess.Popen[str]] = []

    def spec(self, tag: str, steps: int, *, hold: bool = False, env: str = "") -> Path:
        argv = ["python", str(self.script), str(self.log), tag, str(steps), "hold" if hold else "go"]
        path = self.root / f"job-{tag}.yaml"
        path.write_text(
            RUNTIME.format(name="rt", framework="torch")
            + f"""---
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: leased, namespace: team-a}}
spec:
  runtime: rt
  command: {json.dumps(argv)}
  nodes: 2
  checkpoint: {{path: /checkpoints, size: 1Gi, keep: 10}}
{env}"""
        )
        return path

    def start(self, spec: Path, *, stderr: int | None = None) -> subprocess.Popen[str]:
        out = (self.root / f"{spec.stem}.out").open("w")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "trainspec",
                "run",
                "--local",
                str(spec),
                "--no-project",
                "--workdir",
                str(self.work),
            ],
            cwd=self.root,
            env=clean_env(),
            stdout=out,
            stderr=stderr if stderr is not None else out,
            text=True,
        )
        self.procs.append(proc)
        return proc

    def events(self, **match: Any) -> list[dict[str, Any]]:
        found = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [e for e in found if all(e.get(k) == v for k, v in match.items())]

    def wait_for(self, proc: subprocess.Popen[str], **match: Any) -> dict[str, Any]:
        """The first event matching ``match``, once a node recorded it (a bound for a hung run, never asserted on)."""
        deadline = time.monotonic() + RUN_TIMEOUT
        while not (found := self.events(**match)):
            assert proc.poll() is None, (self.root / "job-a.out").read_text()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        return found[0]

    def checkpoints(self) -> dict[int, str]:
        """step -> the run that wrote it, for every complete checkpoint."""
        root = self.work / "checkpoints"
        return {
            json.loads((d / "state.json").read_text())["step"]: json.loads((d / "state.json").read_text())["run"]
            for d in sorted(root.glob("step-*"))
            if (d / "COMPLETE").is_file()
        }

    def lease(self) -> dict[str, Any]:
        return json.loads((self.work / "checkpoints" / ".trainspec-lease.json").read_text())

    def assert_older_wrote_nothing_after_newer_started(self, older: str, newer: str) -> None:
        lines = self.events()
        first_newer = min(i for i, e in enumerate(lines) if e["run"] == newer)
        assert not [e for e in lines[first_newer:] if e["run"] == older and e["event"] == "wrote"], lines


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Runs]:
    runs = Runs(tmp_path)
    yield runs
    for tag in ("a", "b"):  # let a held run go on, so that no process is left behind
        (runs.log.parent / f"go-{tag}").touch()
    for proc in runs.procs:
        if proc.poll() is None:
            proc.terminate()  # trainspec stops its process groups
        proc.wait(RUN_TIMEOUT)


def test_the_newer_run_waits_for_the_older_and_resumes_from_its_last_checkpoint(runs: Runs) -> None:
    older = runs.start(runs.spec("a", 3, hold=True))
    a = runs.wait_for(older, tag="a", event="wrote", step=1)["run"]
    newer = runs.start(runs.spec("b", 2), stderr=subprocess.PIPE)
    said: list[str] = []
    waiting = threading.Event()

    def relay() -> None:
        assert newer.stderr is not None
        for line in newer.stderr:
            said.append(line)
            if "waits for the checkpoint lease" in line:
                waiting.set()

    reader = threading.Thread(target=relay, daemon=True)
    reader.start()
    assert waiting.wait(RUN_TIMEOUT), "".join(said)
    assert runs.events(tag="b") == []  # neither of its ranks got past latest_checkpoint()
    (runs.log.parent / "go-a").touch()

    assert older.wait(RUN_TIMEOUT) == 0 and newer.wait(RUN_TIMEOUT) == 0, "".join(said)
    reader.join(RUN_TIMEOUT)
    b = runs.events(tag="b")[0]["run"]
    assert a != b
    line = next(line for line in said if "waits for the checkpoint lease" in line)
    assert line.startswith("[node 0] trainspec lease: ") and f"run {b} waits" in line and f"run {a} on" in line
    runs.assert_older_wrote_nothing_after_newer_started(a, b)
    resumed = runs.events(tag="b", event="resumed")
    assert sorted((e["rank"], e["step"]) for e in resumed) == [(0, 3), (1, 3)]  # both ranks: a's last step
    assert {e["token"] for e in resumed} == {2} and {e["token"] for e in runs.events(tag="a", event="resumed")} == {1}
    assert runs.checkpoints() == {1: a, 2: a, 3: a, 4: b, 5: b}
    assert (runs.lease()["run_id"], runs.lease()["token"], runs.lease()["released"]) == (b, 2, True)


def test_with_a_wait_limit_of_zero_the_newer_run_fences_the_older_out(runs: Runs) -> None:
    older = runs.start(runs.spec("a", 3, hold=True))
    a = runs.wait_for(older, tag="a", event="wrote", step=1)["run"]
    newer = runs.start(runs.spec("b", 2, env="  env: {TRAINSPEC_LEASE_WAIT: '0'}\n"))
    assert newer.wait(RUN_TIMEOUT) == 0, (runs.root / "job-b.out").read_text()
    said = (runs.root / "job-b.out").read_text()
    b = runs.events(tag="b")[0]["run"]
    assert f"run {a} still holds the checkpoint lease" in said and f"run {b} fences it out with token 2" in said
    (runs.log.parent / "go-a").touch()  # the older run goes on to its next checkpoint...

    assert older.wait(RUN_TIMEOUT) == 3  # ...and stops there: node 0 exited 3
    fenced = runs.events(tag="a", event="fenced")
    assert len(fenced) == 1 and fenced[0]["step"] == 2 and f"run {b} took it over (token 2)" in fenced[0]["message"]
    runs.assert_older_wrote_nothing_after_newer_started(a, b)
    assert runs.checkpoints() == {1: a, 2: b, 3: b}  # a's attempt at step 2 did not replace b's
    root = runs.work / "checkpoints"
    assert not [p.name for p in root.iterdir() if p.name.startswith((".tmp-", ".old-"))]
    # Nothing of the older run overwrote the lease afterwards: no heartbeat, no release at exit.
    assert (runs.lease()["run_id"], runs.lease()["token"]) == (b, 2)
