"""``trainspec status`` links a job's experiment-tracker run (issue 25, part 5): the pod's
:class:`~trainspec.stages.Tracker` posts the run's ids with Trainer's progress status, and
``status`` puts the run's URL together from them and the TrainJob's own tracking variables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

from helpers import JOB_YAML, TJ, cli, controller_patch, write_job
from kube_standin import StandIn

from trainspec.kube.state import view

RUN_ID = "0c77f3f7044948b787d9f3cd54d3de0c"
RUNNING = {
    "conditions": [
        {"type": "Suspended", "status": "False", "reason": "Resumed", "lastTransitionTime": "2026-06-12T02:00:00Z"}
    ]
}


def _progress(metrics: dict[str, str]) -> dict:
    return {
        "trainerStatus": {
            "progressPercentage": 10,
            "metrics": [{"name": k, "value": v} for k, v in metrics.items()],
            "lastUpdatedTime": "2026-06-12T03:00:00Z",
        }
    }


def test_status_shows_the_mlflow_run_the_pods_reported(api: StandIn, tmp_path: Path) -> None:
    spec = JOB_YAML + "  tracking: {mlflow: {uri: 'http://mlflow.mlflow.svc:5000/', experiment: ddp}}\n"
    api.add_cluster_runtime("trainspec-torch")
    assert cli("submit", write_job(tmp_path, spec), "--no-project")[0] == 0
    code, out, _ = cli("status", "ddp-ckpt", "-n", "ml-dev")
    assert code == 0 and "tracking" not in out  # nothing reported yet: no line
    controller_patch(
        api.url, TJ, RUNNING | _progress({"mlflow_run_id": RUN_ID, "mlflow_experiment_id": "3", "loss": "0.5"})
    )
    code, out, _ = cli("status", "ddp-ckpt", "-n", "ml-dev")
    assert code == 0
    url = f"http://mlflow.mlflow.svc:5000/#/experiments/3/runs/{RUN_ID}"
    assert f"\n  tracking: {url}\n" in out
    assert "  progress: 10%, loss=0.5; updated" in out  # the ids are on the tracking line, not repeated
    code, out, _ = cli("status", "ddp-ckpt", "-n", "ml-dev", "-o", "json")
    assert code == 0 and json.loads(out)["tracking"] == url


def _trainjob(env: list[dict[str, Any]], metrics: dict[str, str]) -> dict:
    return {
        "metadata": {"name": "llm-abc234", "namespace": "ml-dev"},
        "spec": {"trainer": {"env": env}},
        "status": RUNNING | _progress(metrics),
    }


def test_a_wandb_run_and_a_store_without_pages() -> None:
    wandb: list[dict[str, Any]] = [
        {"name": "WANDB_PROJECT", "value": "sft"},
        {"name": "WANDB_API_KEY", "valueFrom": {"secretKeyRef": {}}},
    ]
    found = view(_trainjob(wandb, {"wandb_run_id": "llm-abc234", "wandb_entity": "nlp", "wandb_project": "sft"}))
    assert found.tracking == "https://wandb.ai/nlp/sft/runs/llm-abc234"
    on_premises = [*wandb, {"name": "WANDB_BASE_URL", "value": "https://wandb.example.com"}]
    assert view(_trainjob(on_premises, {"wandb_run_id": "r1", "wandb_entity": "nlp"})).tracking == (
        "https://wandb.example.com/nlp/sft/runs/r1"
    )
    assert view(_trainjob(wandb, {"wandb_run_id": "r1"})).tracking == "wandb run r1 in project sft"  # entity unknown
    store: list[dict[str, Any]] = [{"name": "MLFLOW_TRACKING_URI", "value": "sqlite:////data/mlflow.db"}]
    found = view(_trainjob(store, {"mlflow_run_id": RUN_ID, "mlflow_experiment_id": "1"}))
    assert found.tracking == f"mlflow run {RUN_ID} (experiment 1) at sqlite:////data/mlflow.db"
    assert "  tracking: " + found.tracking in found.lines()
    assert view(_trainjob(store, {"loss": "0.5"})).tracking == ""
