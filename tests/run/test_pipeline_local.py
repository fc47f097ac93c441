"""``trainspec run --local PIPELINE``: a Pipeline's steps run here, in the graph's order, as real processes."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.run.run_testlib import ROOT, RUN_TIMEOUT, by_prefix, clean_env, trainspec

EXAMPLE = ROOT / "examples" / "pipeline"
#: prep writes this many records: small, yet 7 steps per rank on 2 nodes (a checkpoint every 5).
RECORDS = 100


def _steps(stderr: str) -> dict[str, str]:
    """``step NAME: <how it ended>`` lines (the last one of each step), by step."""
    ends: dict[str, str] = {}
    for line in stderr.splitlines():
        m = re.match(r"^step (\S+): (succeeded|failed|skipped|interrupted|not run)(.*)$", line)
        if m:
            ends[m.group(1)] = m.group(2) + m.group(3)
    return ends


def _run_dir(workdir: Path, pipeline: str) -> Path:
    runs = list((workdir / "pipelines" / pipeline).iterdir())
    assert len(runs) == 1, runs
    return runs[0]


def test_the_example_pipeline_runs_end_to_end(tmp_path: Path) -> None:
    done = trainspec(
        "run",
        "--local",
        str(EXAMPLE),
        "--no-project",
        "--workdir",
        str(tmp_path),
        "--param",
        "epochs=1",
        "--param",
        f"records={RECORDS}",
        "--param",
        "minScore=0.1",
        cwd=ROOT,  # the steps' commands are paths from the repository's root
    )
    assert done.returncode == 0, done.stderr
    ends = _steps(done.stderr)
    assert list(ends) == ["prep", "train", "evaluate", "register"]
    assert all(e.startswith("succeeded") for e in ends.values()), ends
    run = _run_dir(tmp_path, "finetune")
    dataset = run / "prep" / "outputs" / "dataset"
    # The train step read the prep step's output: the stage's source is that directory, and the two
    # nodes together read every record prep wrote.
    assert f"dataset: {dataset} -> " in done.stderr
    nodes = {k: v for k, v in by_prefix(done.stdout).items() if k.startswith("node")}
    assert sorted(nodes) == ["node 0", "node 1"]
    read = [int(m.group(1)) for lines in nodes.values() for line in lines if (m := re.search(r"(\d+) records", line))]
    assert sum(read) == RECORDS
    score_text = (run / "evaluate" / "outputs" / "score").read_text(encoding="utf-8")
    printed = re.search(r"\[evaluate\] evaluate: (step-\d+), mse \S+, score (\S+)", done.stdout)
    assert printed is not None, done.stdout
    assert score_text == printed.group(2) + "\n"
    assert 0.1 <= float(score_text) <= 1.0
    model = run / "register" / "outputs" / "model" / printed.group(1)
    assert (model / "COMPLETE").exists() and (model / "state.json").exists()
    checkpoints = run / "train" / "work" / "checkpoints"
    assert f"checkpoint -> {checkpoints}" in done.stderr
    assert done.stderr.rstrip().endswith("trainspec run --local: pipeline ml-dev/finetune succeeded")


BRANCHES = """\
apiVersion: trainspec.dev/v1alpha1
kind: Pipeline
metadata: {name: branches, namespace: ml-dev}
spec:
  parameters:
    answer: {type: string, default: "no"}
  steps:
    - name: broken
      container: {image: python:3.12, command: [python, -c, "raise SystemExit(3)"]}
    - name: after-broken
      after: [broken]
      container: {image: python:3.12, command: [python, -c, "open('after-broken.ran', 'w')"]}
    - name: flag
      container:
        image: python:3.12
        command: [python, -c]
        args: ["import sys; open(sys.argv[1], 'w').write(sys.argv[2] + '\\\\n')", "$(outputs.flag)", "$(params.answer)"]
      outputs: [flag]
    - name: only-if-yes
      when: "$(steps.flag.outputs.flag) == yes"
      container: {image: python:3.12, command: [python, -c, "open('only-if-yes.ran', 'w')"]}
    - name: after-only-if-yes
      after: [only-if-yes]
      container: {image: python:3.12, command: [python, -c, "open('after-only-if-yes.ran', 'w')"]}
    - name: entrypoint
      container: {image: python:3.12, args: [--help]}
    - name: on-failure
      when: "$(steps.broken.status) == Failed"
      container: {image: python:3.12, command: [python, -c, "open('on-failure.ran', 'w')"]}
"""


def test_a_failed_step_stops_its_dependants_and_independent_steps_still_run(tmp_path: Path) -> None:
    (tmp_path / "pipeline.yaml").write_text(BRANCHES, encoding="utf-8")
    done = trainspec("run", "--local", "pipeline.yaml", "--no-project", "--workdir", "runs", cwd=tmp_path)
    assert done.returncode == 3, done.stderr  # the first failed step's exit status
    ends = _steps(done.stderr)
    assert ends == {
        "broken": ends["broken"],
        "after-broken": "skipped: step broken failed",
        "flag": ends["flag"],
        "only-if-yes": "skipped: when $(steps.flag.outputs.flag) == yes is false (no == yes)",
        "after-only-if-yes": "skipped: step only-if-yes skipped",
        "entrypoint": ends["entrypoint"],
        "on-failure": ends["on-failure"],
    }
    assert ends["broken"].startswith("failed") and "exited 3" in ends["broken"]
    assert ends["flag"].startswith("succeeded") and ends["on-failure"].startswith("succeeded")
    assert ends["entrypoint"].startswith("failed")
    assert "step entrypoint sets no command" in ends["entrypoint"]
    assert "set container.command" in ends["entrypoint"]
    ran = sorted(p.name for p in tmp_path.glob("*.ran"))
    assert ran == ["on-failure.ran"]
    assert (_run_dir(tmp_path / "runs", "branches") / "flag" / "outputs" / "flag").read_text() == "no\n"
    assert "pipeline ml-dev/branches failed: step broken, entrypoint failed" in done.stderr


def test_a_true_condition_runs_the_step(tmp_path: Path) -> None:
    (tmp_path / "pipeline.yaml").write_text(BRANCHES, encoding="utf-8")
    done = trainspec(
        "run", "--local", "pipeline.yaml", "--no-project", "--workdir", "runs", "--param", "answer=yes", cwd=tmp_path
    )
    ends = _steps(done.stderr)
    assert ends["only-if-yes"].startswith("succeeded") and ends["after-only-if-yes"].startswith("succeeded")
    assert (tmp_path / "after-only-if-yes.ran").exists()


RETRIES = """\
apiVersion: trainspec.dev/v1alpha1
kind: Pipeline
metadata: {name: retries, namespace: ml-dev}
spec:
  parameters:
    count: {type: int, default: 2}
  steps:
    - name: flaky
      retries: 2
      container:
        image: python:3.12
        command: [python, -c]
        args:
          - "import pathlib, sys; p = pathlib.Path('tries'); n = len(p.read_text()) if p.exists() else 0; p.write_text('x' * (n + 1)); sys.exit(0 if n + 1 >= 2 else 1)"
    - name: slow
      timeout: 1s
      container: {image: python:3.12, command: [python, -c, "import time; open('slow.started', 'w'); time.sleep(120)"]}
    - name: after-slow
      after: [slow]
      container: {image: python:3.12, command: [python, -c, "pass"]}
"""


def test_retries_rerun_a_failed_step_and_a_timeout_stops_one(tmp_path: Path) -> None:
    (tmp_path / "pipeline.yaml").write_text(RETRIES, encoding="utf-8")
    done = trainspec("run", "--local", "pipeline.yaml", "--no-project", "--workdir", "runs", cwd=tmp_path)
    ends = _steps(done.stderr)
    assert ends["flaky"].startswith("succeeded"), done.stderr
    assert "step flaky: attempt 1 of 3 failed: flaky exited 1; retrying" in done.stderr
    assert (tmp_path / "tries").read_text() == "xx"
    assert (tmp_path / "slow.started").exists()
    assert ends["slow"].startswith("failed") and "timed out after 1s" in ends["slow"], done.stderr
    assert ends["after-slow"] == "skipped: step slow failed"
    assert done.returncode == 143  # stopped by SIGTERM


def test_a_bad_param_is_an_error_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "pipeline.yaml").write_text(RETRIES, encoding="utf-8")
    done = trainspec(
        "run",
        "--local",
        "pipeline.yaml",
        "--no-project",
        "--workdir",
        "runs",
        "--param",
        "count=many",
        "--param",
        "colour=red",
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "error[TS708]: --param: parameter 'count' is of type int; 'many' is not (--param count=many)" in done.stderr
    assert "error[TS708]: --param: pipeline retries has no parameter 'colour'" in done.stderr
    assert "its parameters: count" in done.stderr
    assert not (tmp_path / "runs").exists() and not (tmp_path / "tries").exists()
    assert "step " not in done.stderr


def test_one_job_of_a_pipeline_runs_alone_with_job(tmp_path: Path) -> None:
    done = trainspec(
        "run",
        "--local",
        str(EXAMPLE),
        "--no-project",
        "--job",
        "finetune-train",
        "--data-source",
        str(ROOT / "examples" / "train_ddp" / "data"),
        "--workdir",
        str(tmp_path),
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "trainspec run --local: ml-dev/finetune-train (torch, 2 nodes x 1 process)" in done.stderr
    assert "step " not in done.stderr  # the job alone, not the pipeline
    assert list((tmp_path / "checkpoints").glob("step-*"))


INTERRUPTED = """\
apiVersion: trainspec.dev/v1alpha1
kind: Pipeline
metadata: {name: stopped, namespace: ml-dev}
spec:
  steps:
    - name: slow
      container: {image: python:3.12, command: [python, -c, "import time; print('up', flush=True); time.sleep(300)"]}
    - name: later
      container: {image: python:3.12, command: [python, -c, "open('later.ran', 'w')"]}
"""


def test_ctrl_c_stops_the_running_step_and_the_run(tmp_path: Path) -> None:
    (tmp_path / "pipeline.yaml").write_text(INTERRUPTED, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainspec", "run", "--local", "pipeline.yaml", "--no-project", "--workdir", "runs"],
        cwd=tmp_path,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "[slow] up\n"  # the step runs: now Ctrl-C
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=RUN_TIMEOUT)
    assert proc.returncode == 130, stderr
    ends = _steps(stderr)
    assert ends == {"slow": ends["slow"], "later": "not run: the run was interrupted"}
    assert ends["slow"].startswith("interrupted") and "SIGINT" in ends["slow"]
    assert not (tmp_path / "later.ran").exists()
    assert "pipeline ml-dev/stopped interrupted" in stderr
