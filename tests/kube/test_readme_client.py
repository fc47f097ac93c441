"""The README's "Python client" example is real: its ```python block runs as a user would run it,
against the loopback stand-in of the API server (the test plays Kueue, Trainer, JobSet, the
scheduler and the kubelet, step by step as the client watches and reads), and prints exactly the
```text block below it. ``UPDATE_GOLDEN=1`` rewrites that block from the run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

from client_standin import EventsStandIn, pod, record, served
from kube_standin import Request

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SECTION = "## Python client\n"
BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```\n.*?^```text\n(?P<out>.*?)^```", re.MULTILINE | re.DOTALL)
CLUSTER_QUEUE = "cluster-queue"


def _example(text: str) -> re.Match[str]:
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    found = BLOCK.search(text, start, end)
    assert found is not None, "the Python client section has no ```python block followed by a ```text block"
    return found


def _at(second: int) -> str:
    return f"2026-01-01T00:00:{second:02d}Z"


def _play(api: EventsStandIn) -> None:
    """Kueue queues, then admits the job; Trainer resumes it and the pods start (one step per watch of
    ``wait``); the job completes while its log is read."""
    state: dict = {}

    def trainjob() -> dict:
        (job,) = api.trainjobs.values()
        return job

    def queue(job: dict) -> None:
        job["status"] = {"conditions": [{"type": "Suspended", "status": "True", "reason": "Suspended"}]}
        pending = {
            "type": "QuotaReserved",
            "status": "False",
            "reason": "Pending",
            "message": "couldn't assign flavors to pod set node: insufficient unused quota for cpu in flavor "
            "default-flavor, 4 more needed",
        }
        state["workload"] = workload = api.add_workload(job, queue="ml-dev", conditions=[pending])
        name = workload["metadata"]["name"]
        api.add_event(job, "CreatedWorkload", f"Created Workload: ml-dev/{name}", time=_at(1), source="kueue-job")
        api.add_event(workload, "Pending", pending["message"], time=_at(1), source="kueue-admission")

    def admit(job: dict) -> None:
        workload = state["workload"]
        workload["status"]["conditions"] = [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved"},
            {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted"},
        ]
        workload["status"]["admission"] = {"clusterQueue": CLUSTER_QUEUE}
        quota = f"Quota reserved in ClusterQueue {CLUSTER_QUEUE}, wait time since queued was 3s"
        api.add_event(workload, "QuotaReserved", quota, time=_at(4), source="kueue-admission")
        admitted = f"Admitted by ClusterQueue {CLUSTER_QUEUE}, wait time since reservation was 0s"
        api.add_event(workload, "Admitted", admitted, time=_at(4), source="kueue-admission")
        api.add_event(job, "Started", f"Admitted by clusterQueue {CLUSTER_QUEUE}", time=_at(4), source="kueue-job")

    def start(job: dict) -> None:
        resumed = {"type": "Suspended", "status": "False", "reason": "Resumed", "message": "TrainJob resumed"}
        job["status"] = {"conditions": [resumed], "jobsStatus": [{"name": "node", "active": 2, "ready": 2}]}
        for index in (0, 1):
            first, second = 2 * index, 2 * index + 1
            lines = [
                f"2026-01-01T00:01:0{index}Z [0]:rank {first}/4: 1500 records from shard-0000{index}",
                f"2026-01-01T00:01:0{index}.5Z [1]:rank {second}/4: 1500 records from shard-0000{index}",
                f"2026-01-01T00:02:0{index}Z [0]:epoch 1 loss 0.4120",
            ]
            made = pod(api, job, index, phase="Running", lines=lines, node=f"cpu-{'ab'[index]}")
            message = f"Successfully assigned ml-dev/{made['metadata']['name']} to cpu-{'ab'[index]}"
            api.add_event(made, "Scheduled", message, time=_at(5), source="default-scheduler")
        state["pods"] = list(api.pods.values())

    steps = [queue, admit, start]

    def on_watch(_: EventsStandIn) -> None:
        if steps:
            job = trainjob()
            steps.pop(0)(job)
            record(api, "trainjobs", job)

    def on_request(_: EventsStandIn, request: Request) -> None:
        if request.path.endswith("/log") and "done" not in state:
            state["done"] = True
            job = trainjob()
            for made in state["pods"]:
                made["status"]["phase"] = "Succeeded"
            job["status"]["conditions"].append(
                {"type": "Complete", "status": "True", "reason": "JobsCompleted", "message": "jobs completed"}
            )
            job["status"]["trainerStatus"] = {
                "progressPercentage": 100,
                "estimatedRemainingSeconds": 0,
                "metrics": [{"name": "loss", "value": "0.4120"}],
                "lastUpdatedTime": "2026-01-01T00:02:01Z",
            }
            record(api, "trainjobs", job)

    api.on_watch = on_watch
    api.on_request = on_request


def test_the_python_client_example_prints_what_the_readme_shows(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = README.read_text(encoding="utf-8")
    example = _example(text)
    with served(monkeypatch) as api:
        _play(api)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAINSPEC_", "KUBE"))}
        env["TRAINSPEC_KUBE_API"] = api.url
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        done = subprocess.run(
            [sys.executable, "-c", example["code"]],
            cwd=tmp_path,  # no project file here: the example compiles as a user's notebook would
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    if os.environ.get("UPDATE_GOLDEN"):
        fresh = README.read_text(encoding="utf-8")  # others may have edited other sections meanwhile
        again = _example(fresh)
        README.write_text(fresh[: again.start("out")] + done.stdout + fresh[again.end("out") :], encoding="utf-8")
        return
    assert done.stdout == example["out"]


def test_the_readme_python_test_does_not_run_the_client_example() -> None:
    """tests/test_readme_python.py runs ```python blocks followed by "prints ...:"; this one needs the
    stand-in, so it must not be among them."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_readme_python import EXAMPLE
    finally:
        sys.path.remove(str(ROOT / "tests"))
    text = README.read_text(encoding="utf-8")
    code = _example(text)["code"]
    assert all(code not in found for found, _ in EXAMPLE.findall(text))
