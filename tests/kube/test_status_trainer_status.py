"""``trainspec status`` shows a TrainJob's ``status.trainerStatus`` (Trainer's TrainJobStatus feature):
progress, ETA, metrics and when it was last updated; without the block the output is as before."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from trainspec.kube.state import view

NOW = datetime(2026, 6, 12, 3, 0, 30, tzinfo=timezone.utc)
RUNNING = {
    "conditions": [
        {"type": "Suspended", "status": "False", "reason": "Resumed", "lastTransitionTime": "2026-06-12T02:00:00Z"}
    ],
    "jobsStatus": [{"name": "node", "active": 2, "ready": 2}],
}
#: As the controller's status server applies it (upstream docs' example, 2026-06-12T03:00:00Z).
TRAINER_STATUS = {
    "progressPercentage": 45,
    "estimatedRemainingSeconds": 3600,
    "metrics": [{"name": "loss", "value": "0.2347"}, {"name": "accuracy", "value": "0.9876"}],
    "lastUpdatedTime": "2026-06-12T03:00:00Z",
}


def _job(status: dict) -> dict:
    return {
        "metadata": {"name": "llm", "namespace": "ml-dev", "creationTimestamp": "2026-06-12T01:00:00Z"},
        "spec": {},
        "status": status,
    }


def test_the_trainer_status_line_has_progress_eta_metrics_and_the_last_update() -> None:
    v = view(_job(RUNNING | {"trainerStatus": TRAINER_STATUS}), now=NOW)
    assert v.lines() == [
        "TrainJob ml-dev/llm: Running",
        "  progress: 45%, about 60m left, loss=0.2347, accuracy=0.9876; updated 30s ago",
        "  age 2h",
    ]
    data = v.to_dict()
    assert (data["progress"], data["remaining_seconds"], data["metrics"]) == (
        45,
        3600,
        {"loss": "0.2347", "accuracy": "0.9876"},
    )
    assert (data["last_updated"], data["last_updated_seconds"]) == ("2026-06-12T03:00:00Z", 30)


def test_without_trainer_status_the_output_is_unchanged() -> None:
    v = view(_job(RUNNING), now=NOW)
    assert v.lines() == ["TrainJob ml-dev/llm: Running", "  age 2h"]
    assert v.to_dict()["last_updated"] is None and v.to_dict()["last_updated_seconds"] is None


@pytest.mark.parametrize(
    ("trainer", "line"),
    [
        # Only an ETA: shown (it was dropped before: the line needed a percentage or metrics).
        (
            {"estimatedRemainingSeconds": 90, "lastUpdatedTime": "2026-06-12T03:00:00Z"},
            "  progress: about 90s left; updated 30s ago",
        ),
        # Only the timestamp: the job reported, with nothing yet.
        ({"lastUpdatedTime": "2026-06-12T02:59:00Z"}, "  progress: none reported yet; updated 90s ago"),
        # An unreadable time is left out rather than guessed.
        ({"progressPercentage": 5, "lastUpdatedTime": "soon"}, "  progress: 5%"),
    ],
)
def test_partial_trainer_status(trainer: dict, line: str) -> None:
    lines = view(_job(RUNNING | {"trainerStatus": trainer}), now=NOW).lines()
    assert lines[1] == line


def test_status_command_shows_it_from_the_cluster(api, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")
    from helpers import TJ, cli, controller_patch, write_job

    api.add_cluster_runtime("trainspec-torch")
    assert cli("submit", write_job(tmp_path), "--no-project")[0] == 0
    controller_patch(api.url, TJ, RUNNING | {"trainerStatus": TRAINER_STATUS})
    code, out, err = cli("status", "ddp-ckpt", "-n", "ml-dev")
    assert code == 0, err
    progress = [line for line in out.splitlines() if line.startswith("  progress: ")]
    assert len(progress) == 1
    assert progress[0].startswith("  progress: 45%, about 60m left, loss=0.2347, accuracy=0.9876; updated ")
    code, out, err = cli("status", "ddp-ckpt", "-n", "ml-dev", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["progress"] == 45 and data["last_updated"] == "2026-06-12T03:00:00Z"
