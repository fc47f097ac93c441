"""``trainspec ladder run --local`` end to end: the example training script (examples/train_ddp, CPU)
climbs its ladder (1 node, then 2), each rung a real ``run --local`` after the previous one, and the
scaling table is read back from the ranks' step logs. Timing values are never asserted: only that
each rung measured something positive and that the table has every column."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from run_testlib import EXAMPLE, clean_env, trainspec

from trainspec.compiler.pipeline import Options, Stop, run
from trainspec.run.ladder_run import LadderOptions, LadderRunner, pick_ladder

DATA = str(EXAMPLE / "data")


def _prepare(tmp_path: Path) -> Path:
    # The job's command is relative to where it runs (as to an image's WORKDIR): run from a copy.
    shutil.copytree(EXAMPLE, tmp_path / "examples" / "train_ddp", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "examples" / "train_ddp" / "job.yaml"


def _ladder(tmp_path: Path, *args: str, **env: str):
    return trainspec(
        "ladder",
        "run",
        "--local",
        "examples/train_ddp/job.yaml",
        "--no-project",
        "--data-source",
        DATA,
        *args,
        cwd=tmp_path,
        env=clean_env(**env),
    )


def test_the_example_climbs_its_ladder_and_each_rung_is_measured(tmp_path: Path) -> None:
    _prepare(tmp_path)
    done = _ladder(tmp_path, "--format", "json")
    assert done.returncode == 0, done.stderr
    (ladder,) = json.loads(done.stdout)["ladders"]
    assert (ladder["namespace"], ladder["job"], ladder["unit"], ladder["scaleUnit"]) == (
        "ml-dev",
        "train-ddp",
        "samples/s",
        "processes",
    )
    assert [(r["rung"], r["worldSize"], r["status"]) for r in ladder["rungs"]] == [
        ("1n", 1, "measured"),
        ("2n", 2, "measured"),
    ]
    for rung in ladder["rungs"]:
        assert rung["throughput"] > 0 and rung["samplesPerSecond"] > 0 and rung["stepsPerSecond"] > 0
        assert rung["samplesFrom"] == "counted"  # train.py counts step(samples=len(batch))
        assert rung["ranksMeasured"] == rung["worldSize"]
        assert 0 <= rung["dataWaitShare"] <= 1
        assert rung["measuredSteps"] > 0 and rung["efficiency"] > 0 and rung["speedup"] > 0
    first = ladder["rungs"][0]
    assert (first["speedup"], first["efficiency"]) == (1.0, 1.0)
    second = ladder["rungs"][1]
    assert second["efficiency"] == pytest.approx(second["speedup"] / 2, abs=1e-3)
    # Which rung is recommended depends on the measured figures; that there is one, and that it is
    # the one the table's own efficiencies give, does not.
    expected = "2n" if second["efficiency"] >= 0.8 else "1n"
    assert ladder["recommendation"]["rung"] == expected
    # Each rung ran in a work directory of its own, its processes' output kept beside it.
    root = tmp_path / ".trainspec" / "ladder" / "ml-dev" / "train-ddp"
    assert "rank 1/2" in (root / "2n" / "output.log").read_text()
    assert sorted(p.name for p in (root / "2n" / "steps").iterdir()) == ["rank-0.jsonl", "rank-1.jsonl"]
    assert "rung 1n (1 node x 1 process): running" in done.stderr

    # Again: the rungs' checkpoints of the first climb are not resumed from (a finished run would
    # measure no step); the shards are kept.
    again = _ladder(tmp_path)
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines[0] == "ml-dev/train-ddp: measured scaling ladder"
    assert lines[1].split() == ["rung", "processes", "throughput", "speed-up", "efficiency", "data", "wait", "measured"]
    assert [line.split()[0] for line in lines[2:4]] == ["1n", "2n"]
    assert all("samples/s" in line and " steps in " in line for line in lines[2:4])
    assert lines[4].startswith("  recommendation: ")
    assert "cache hit" in (root / "1n" / "output.log").read_text()


def _runner(
    tmp_path: Path, *, cores: int | None = None, rungs: tuple[str, ...] | None = None
) -> tuple[LadderRunner, list]:
    spec = _prepare(tmp_path)
    result = run([str(spec)], Options(stop=Stop.LOWER, ladder=True, project=None))
    assert result.ok, result.diagnostics
    ladder, problems = pick_ladder(result, None)
    assert ladder is not None, problems
    environ = clean_env()
    say = io.StringIO()
    runner = LadderRunner(
        result,
        LadderOptions(workdir=str(tmp_path / "ladder"), data_source=DATA, environ=environ, cores=cores, rungs=rungs),
        say=say,
        report=lambda found: pytest.fail(str(found)),
    )
    return runner, runner.run(ladder)


def test_a_rung_that_does_not_fit_this_machine_is_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the job's command is relative to the copy
    runner, rungs = _runner(tmp_path, cores=1)
    assert runner.code == 0
    assert [(r.tag, r.status) for r in rungs] == [("1n", "measured"), ("2n", "skipped")]
    measured = rungs[0].measurement
    assert measured is not None and (measured.samples_per_second or 0) > 0
    assert rungs[1].note == "asks for 2 CPUs (2 x cpu 1); this machine has 1 cores"
    assert not (tmp_path / "ladder" / "2n").exists()  # nothing was started for it


def test_a_failing_rung_stops_the_ladder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRAIN_CRASH_AFTER_STEP", "3")  # every rank kills itself after step 3
    runner, rungs = _runner(tmp_path, rungs=("1n", "2n"))
    assert runner.code == 137
    assert [(r.tag, r.status) for r in rungs] == [("1n", "failed"), ("2n", "not run")]
    assert rungs[0].note is not None and rungs[0].note.startswith("exited 137")
    assert rungs[1].note == "rung 1n failed"


def test_usage_errors(tmp_path: Path) -> None:
    _prepare(tmp_path)
    # Without --local the rungs climb on a cluster (tests/kube/test_ladder_cluster.py): --local's options are refused.
    plain = trainspec(
        "ladder", "run", "examples/train_ddp/job.yaml", "--no-project", "--data-source", DATA, cwd=tmp_path
    )
    assert plain.returncode == 2 and "--data-source is only with --local" in plain.stderr
    unknown = _ladder(tmp_path, "--rungs", "1n,8n")
    assert unknown.returncode == 2
    assert "no rung 8n in the ladder of ml-dev/train-ddp (rungs: 1n, 2n)" in unknown.stderr
    bad = _ladder(tmp_path, "--min-efficiency", "0")
    assert bad.returncode == 2 and "--min-efficiency" in bad.stderr


SILENT = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: cpu}
spec: {framework: torch, image: registry.example.com/train:1, gang: none}
---
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {name: silent, namespace: ml-dev}
spec:
  runtime: cpu
  command: [python, -c, "print('trained without timing a step')"]
  nodes: 1
"""


def test_a_script_that_times_no_steps_runs_but_is_not_measured(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(SILENT)
    done = trainspec("ladder", "run", "--local", "job.yaml", "--no-project", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    assert rows[2].split()[:7] == ["1n", "1", "-", "-", "-", "-", "no"]
    assert "no measurement: no step was logged: the script times no steps with trainspec.stages.StepMetrics" in rows[2]
    assert "recommendation: none, no rung was measured" in done.stdout
