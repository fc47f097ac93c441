"""The README's "On a cluster" session is real: each ``$ trainspec ...`` line of its block runs as a
user would run it (``python -m trainspec`` in a copy of the repository), against the loopback
stand-in of the API server, and prints what the README shows (standard output and error together,
in the order a terminal shows them).

The stand-in has no controllers: the test plays Kueue, Trainer, JobSet, the scheduler and the
kubelet. A command line that carries a comment names the step played before it runs
(``$ trainspec status ddp-cpu -n ml-dev   # after Kueue admitted it and the pods started``);
:data:`STEPS` holds them, and an unknown comment is an error, so the README and the test cannot
drift apart. Times are kept at fixed distances before the real clock (the job was created 12
minutes ago, resumed 5 ago...), moving with it between commands, so ages print the same on every
run; the seconds that JSON and YAML give exactly are compared blanked. The stand-in's address is
shown as ``http://127.0.0.1:8001`` (where ``kubectl proxy`` listens).

``UPDATE_GOLDEN=1`` rewrites the block's outputs from the run (then review the diff).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

import kube_standin
from helpers import controller_patch
from kube_standin import StandIn, serve

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: The line before the block (a Markdown comment: not rendered).
MARKER = "<!-- cluster session: tests/kube/test_readme_cluster.py runs this block; UPDATE_GOLDEN=1 rewrites it -->\n"
SHOWN_URL = "http://127.0.0.1:8001"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
#: What JSON and YAML give exactly (seconds that tick while a command runs, and the times the test
#: placed relative to the real clock): blanked to compare.
TICKING = re.compile(r'((?:age|deadline_left|last_updated)_seconds"?: )\d+')
TIMES = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _blanked(output: str) -> str:
    return TIMES.sub("T", TICKING.sub(r"\1N", output))


#: How long before "now" things happened (seconds; +1 keeps a whole unit for the next 59 seconds).
CREATED, RESUMED, REPORTED, OTHER_CREATED = 12 * 60 + 1, 5 * 60 + 1, 2 * 60 + 1, 3 * 3600 + 1


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Clock:
    """Times in the stand-in at fixed distances before the real clock (see the module docstring)."""

    def __init__(self, api: StandIn) -> None:
        self.api, self.base = api, int(time.time())

    def ago(self, seconds: int) -> str:
        return _iso(self.base - seconds)

    def catch_up(self) -> None:
        """Move every time in the stand-in (and its clock for new objects) forward with the real clock."""
        delta = int(time.time()) - self.base
        if delta <= 0:
            return
        self.base += delta

        def shift(value: Any) -> Any:
            if isinstance(value, dict):
                return {k: shift(v) for k, v in value.items()}
            if isinstance(value, list):
                return [shift(v) for v in value]
            if isinstance(value, str) and STAMP.match(value):
                then = datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
                return _iso(then.timestamp() + delta)
            return value

        with self.api.lock:
            for store in (self.api.trainjobs, self.api.workloads, self.api.pods, self.api.claims):
                for key, obj in list(store.items()):
                    store[key] = shift(obj)
            kube_standin.NOW = shift(kube_standin.NOW)


# -- the controllers' steps -------------------------------------------------------------------------


def _run_of(api: StandIn) -> dict:
    (job,) = [j for (ns, _), j in api.trainjobs.items() if ns == "ml-dev"]
    return job


def _queue(api: StandIn, clock: Clock) -> None:
    """Kueue suspends the job and its Workload waits: the ClusterQueue has no room for it now."""
    job = _run_of(api)
    path = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml-dev/trainjobs/{job['metadata']['name']}"
    suspended = {"type": "Suspended", "status": "True", "reason": "Suspended", "message": "TrainJob is suspended"}
    controller_patch(api.url, path, {"conditions": [{**suspended, "lastTransitionTime": clock.ago(CREATED - 1)}]})
    pending = {
        "type": "QuotaReserved",
        "status": "False",
        "reason": "Pending",
        "message": "couldn't assign flavors to pod set node: insufficient unused quota for cpu in flavor "
        "default-flavor, 4 more needed",
        "lastTransitionTime": clock.ago(CREATED - 1),
    }
    api.add_workload(job, queue="ml-dev", conditions=[pending])


def _start(api: StandIn, clock: Clock) -> None:
    """Kueue admits it, Trainer resumes it, JobSet's pods are scheduled and start, rank 0 reports progress."""
    job = _run_of(api)
    name = job["metadata"]["name"]
    (workload,) = api.workloads.values()
    admitted = {"status": "True", "lastTransitionTime": clock.ago(RESUMED)}
    workload["status"]["conditions"] = [
        {"type": "QuotaReserved", "reason": "QuotaReserved", "message": "Quota reserved in ClusterQueue cluster-queue"}
        | admitted,
        {"type": "Admitted", "reason": "Admitted", "message": "The workload is admitted"} | admitted,
    ]
    losses = (("0.693", "0.701", "0.688", "0.695"), ("0.412", "0.420", "0.409", "0.415"))
    for node, suffix in ((0, "7xk2p"), (1, "q9d4m")):
        pod = f"{name}-node-0-{node}-{suffix}"
        lines = [
            f"{clock.ago(RESUMED - 30 * epoch)} [default{rank}]:epoch {epoch} loss {losses[epoch - 1][2 * node + rank]}"
            for epoch in (1, 2)
            for rank in (0, 1)
        ]
        api.add_pod(
            "ml-dev", pod, name, phase="Running", ready=True, index=node, lines=lines, created=clock.ago(RESUMED)
        )
        api.pods[("ml-dev", pod)]["spec"] = {"nodeName": f"worker-{node + 1}"}
    status = {
        "conditions": [
            {
                "type": "Suspended",
                "status": "False",
                "reason": "Resumed",
                "message": "TrainJob is resumed",
                "lastTransitionTime": clock.ago(RESUMED),
            }
        ],
        "jobsStatus": [{"name": "node", "active": 2, "ready": 2, "succeeded": 0, "failed": 0, "suspended": 0}],
        "trainerStatus": {
            "progressPercentage": 40,
            "estimatedRemainingSeconds": 900,
            "metrics": [{"name": "loss", "value": "0.412"}],
            "lastUpdatedTime": clock.ago(REPORTED),
        },
    }
    controller_patch(api.url, f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml-dev/trainjobs/{name}", status)


def _other_team(api: StandIn, clock: Clock) -> None:
    """Another team's job, finished earlier in its own namespace."""
    with api.lock:
        api.trainjobs[("ml-prod", "llama-sft-2h9xq")] = {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {
                "name": "llama-sft-2h9xq",
                "namespace": "ml-prod",
                "uid": "8d0c5a57-0f8e-4c55-9a55-2b1f0d4e4c1e",
                "creationTimestamp": clock.ago(OTHER_CREATED),
                "resourceVersion": "7",
                "labels": {
                    "kueue.x-k8s.io/queue-name": "team-nlp",
                    "trainspec.dev/job": "llama-sft",
                    "trainspec.dev/run": "2h9xq",
                },
            },
            "spec": {"runtimeRef": {"name": "torch-h100", "kind": "ClusterTrainingRuntime"}},
            "status": {
                "conditions": [
                    {"type": "Complete", "status": "True", "reason": "JobsCompleted", "message": "jobs completed"}
                ]
            },
        }


#: Comment on a command line -> the step played before that command runs.
STEPS: dict[str, Callable[[StandIn, Clock], None]] = {
    "Kueue has no quota for it yet": _queue,
    "after Kueue admitted it and the pods started": _start,
    "another team's job finished in ml-prod": _other_team,
}


# -- the README block -------------------------------------------------------------------------------


def _block(text: str) -> tuple[int, int]:
    """Where the block's body starts and ends in the README text."""
    start = text.index(MARKER) + len(MARKER)
    assert text.startswith("```text\n", start), "the cluster session marker must sit right above a ```text block"
    start += len("```text\n")
    return start, text.index("```\n", start)


def _session(body: str) -> list[tuple[str, str]]:
    """(command line, expected output) pairs, in order."""
    pairs: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        elif pairs:
            pairs[-1][1].append(line)
    return [(command, "\n".join(out)) for command, out in pairs]


COMMENT = re.compile(r"\s+#\s*(?P<step>.*)$")


def _step(command: str) -> str:
    """The comment of a command line ("" when it has none)."""
    found = COMMENT.search(command)
    return found.group("step").strip() if found else ""


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[StandIn, Clock]]:
    """The stand-in with Kubeflow Trainer's CRDs and trainspec's runtime, its clock on the test's."""
    api = StandIn()
    server = serve(api)
    clock = Clock(api)
    monkeypatch.setattr(kube_standin, "NOW", clock.ago(CREATED))
    api.add_cluster_runtime("trainspec-torch")
    try:
        yield api, clock
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", "deploy", "__pycache__", "*.egg-info"))
    (copy / ".git").mkdir()  # a repository root: project discovery stops here, as in a checkout
    return copy


def _run(command: str, repo: Path, url: str) -> str:
    words = shlex.split(COMMENT.sub("", command))
    assert words[0] == "trainspec", command
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAINSPEC_", "KUBERNETES_"))}
    env.update(
        TRAINSPEC_KUBE_API=url,
        KUBECONFIG=str(repo.parent / "no-kubeconfig"),
        XDG_CACHE_HOME=str(repo.parent / "cache"),
        PYTHONUNBUFFERED="1",  # standard output and error interleaved as on a terminal
    )
    done = subprocess.run(
        [sys.executable, "-m", "trainspec", *words[1:]],
        cwd=repo,
        env=env,
        check=False,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    return done.stdout.rstrip("\n").replace(url, SHOWN_URL)


def test_the_readme_cluster_session_prints_what_it_shows(cluster: tuple[StandIn, Clock], repo: Path) -> None:
    api, clock = cluster
    text = README.read_text(encoding="utf-8")
    start, end = _block(text)
    session = _session(text[start:end])
    assert len(session) >= 10, "the README lost its cluster session"
    unknown = [_step(c) for c, _ in session if _step(c) and _step(c) not in STEPS]
    assert not unknown, f"README steps the test does not know: {unknown}"
    played = []
    outputs: list[str] = []
    for command, _ in session:
        step = _step(command)
        if step:
            STEPS[step](api, clock)
            played.append(step)
        clock.catch_up()
        outputs.append(_run(command, repo, api.url))
    assert played == list(STEPS), "every step is played once, in order"
    if os.environ.get("UPDATE_GOLDEN"):
        body = "".join(
            f"$ {command}\n" + (f"{out}\n" if out else "") for (command, _), out in zip(session, outputs, strict=True)
        )
        README.write_text(text[:start] + body + text[end:], encoding="utf-8")
        return
    mismatches = [
        f"$ {command}\n--- README\n{expected}\n--- actual\n{actual}"
        for (command, expected), actual in zip(session, outputs, strict=True)
        if _blanked(actual) != _blanked(expected)
    ]
    assert not mismatches, "\n\n".join(mismatches)
