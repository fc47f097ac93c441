"""Constants and small helpers shared by the KFP tests."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NAMESPACE = "ml"
RUN_ID = "3f2a9c1e-7b4d-4e2a-9c1e-000000000001"
LAUNCHER_POD = "launcher-pod-1"

COMPLETE = {
    "conditions": [
        {"type": "Suspended", "status": "False", "reason": "Resumed", "message": "resumed"},
        {"type": "Complete", "status": "True", "reason": "JobsCompleted", "message": "all done"},
    ]
}
RUNNING = {
    "conditions": [{"type": "Suspended", "status": "False", "reason": "Resumed", "message": "resumed"}],
    "jobsStatus": [{"name": "node", "active": 2, "ready": 2}],
}
FAILED = {
    "conditions": [{"type": "Failed", "status": "True", "reason": "DeadlineExceeded", "message": "ran past 1800s"}]
}
