"""Experiment tracking from the spec under ``run --local`` (issue 25): the example training script
on 2 nodes logs ONE run to a real MLflow store (sqlite, under the test's directory) from rank 0
only, and after a kill and a new start of the same run its metrics continue in that same run."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from run_testlib import EXAMPLE, by_prefix, clean_env, trainspec

mlflow = pytest.importorskip("mlflow", reason="the test extra installs mlflow")
pytestmark = pytest.mark.slow  # two local runs of the example with MLflow started in them: seconds

TOTAL_STEPS = 57  # ceil(150 / 8) * 3: each rank's shard holds 150 records


def _spec(tmp_path: Path, store: str) -> Path:
    """examples/train_ddp/job.yaml, checkpointing every 5 steps, tracking to ``store``."""
    text = (EXAMPLE / "job.yaml").read_text()
    args = 'args: [--epochs, "3", --barrier]'
    checkpoint = "checkpoint: {path: /checkpoints, size: 1Gi, keep: 3}"
    assert args in text and checkpoint in text
    text = text.replace(args, 'args: [--epochs, "3", --barrier, --save-every, "5"]')
    text = text.replace(checkpoint, f'{checkpoint}\n  tracking: {{mlflow: {{uri: "{store}", experiment: ddp-local}}}}')
    spec = tmp_path / "job.yaml"
    spec.write_text(text)
    return spec


def _run(tmp_path: Path, spec: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return trainspec(
        "run",
        "--local",
        str(spec),
        "--no-project",
        "--data-source",
        str(EXAMPLE / "data"),
        cwd=tmp_path,
        env=clean_env(**env),
    )


def _history(store: str, run_id: str) -> list[tuple[int, float]]:
    from mlflow.tracking import MlflowClient

    return sorted((m.step, m.value) for m in MlflowClient(store).get_metric_history(run_id, "loss"))


def test_two_nodes_log_one_run_from_rank_0_and_a_killed_run_resumes_it(tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    shutil.copytree(EXAMPLE, tmp_path / "examples" / "train_ddp", ignore=shutil.ignore_patterns("__pycache__"))
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    spec = _spec(tmp_path, store)

    # Rank 0 (node 0) SIGKILLs itself after step 12, once it saved step 10: a node failure.
    killed = _run(tmp_path, spec, TRAIN_CRASH_AFTER_STEP="12", TRAIN_CRASH_RANK="0")
    assert killed.returncode == 137, killed.stderr
    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("ddp-local")
    assert experiment is not None
    (first,) = client.search_runs([experiment.experiment_id])  # one run: rank 1 logged nothing
    assert first.info.status == "RUNNING"  # killed: nobody ended it
    run_name = first.info.run_name
    tags = first.data.tags
    assert run_name == tags["trainspec.run"] == f"train-ddp-{tags['trainspec.run_id']}"
    assert tags["trainspec.job"] == "train-ddp"
    assert first.data.params == {"lr": "0.1", "batch_size": "8", "epochs": "3"}
    before = _history(store, first.info.run_id)
    assert [step for step, _ in before] == list(range(1, 13))  # every step up to the kill
    lines = by_prefix(killed.stdout)
    said = [line for line in lines["node 0"] if line.startswith("trainspec tracking: ")]
    assert said == [
        (
            f"trainspec tracking: mlflow run {run_name} (new): run id {first.info.run_id}, experiment ddp-local "
            f"(id {experiment.experiment_id}) at {store}"
        )
    ]
    assert not [line for line in lines.get("node 1", []) if "tracking" in line]

    again = _run(tmp_path, spec)
    assert again.returncode == 0, again.stderr
    (run,) = client.search_runs([experiment.experiment_id])  # still one run: the same one, resumed
    assert run.info.run_id == first.info.run_id
    assert run.info.status == "FINISHED"
    assert f"trainspec tracking: mlflow run {run_name} (resumed): run id {run.info.run_id}" in again.stdout
    steps = [step for step, _ in _history(store, run.info.run_id)]
    # The resumed process restarts from the checkpoint of step 10: steps 11 and 12 are logged twice,
    # then the run goes on to the end; nothing of rank 1.
    assert steps == sorted([*range(1, 13), *range(11, TOTAL_STEPS + 1)])
