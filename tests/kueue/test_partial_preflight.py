"""The Kueue pre-flight of a job whose runtime trainspec does not define and the cluster files do not
hold (Kubeflow Trainer's torch-distributed, the runtime most users start with): counted from the
TrainJob alone (numNodes x resourcesPerNode), each finding noting what that leaves out, or a
TS509 warning that it was not done; never passed over silently."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from trainspec.kueue.cluster_files import load_cluster
from trainspec.kueue.preflight import preflight

CLUSTER = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
spec:
  nodeTaints:
  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {name: cpu, nominalQuota: 1024}
      - {name: memory, nominalQuota: 16Ti}
      - {name: nvidia.com/gpu, nominalQuota: 32}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team, namespace: ml}
spec: {clusterQueue: team}
"""

JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: big, namespace: ml}}
spec:
  runtime: torch-distributed
  queue: team
{body}
"""


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """run(job body) -> (exit code, diagnostics) of ``trainspec check job.yaml --cluster kueue/``."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "kueue").mkdir()
    (tmp_path / "kueue" / "cluster.yaml").write_text(CLUSTER, encoding="utf-8")

    def check(body: str, *more: str) -> tuple[int, list[dict[str, Any]]]:
        from trainspec.cli.main import main

        (tmp_path / "job.yaml").write_text(JOB.format(body=body), encoding="utf-8")
        out = io.StringIO()
        with redirect_stdout(out):
            code = main(
                ["check", str(tmp_path / "job.yaml"), "--cluster", str(tmp_path / "kueue"), *more, "--format", "json"]
            )
        return code, json.loads(out.getvalue())["diagnostics"]

    return check


def test_a_job_beyond_the_queue_on_torch_distributed_fails(run: Any) -> None:
    """64 GPUs in a queue capped at 32: exit 1, at the job's nodes, with what was not counted."""
    code, found = run("  nodes: 8\n  resourcesPerNode: {gpu: 8, cpu: 32, memory: 512Gi}")
    assert code == 1
    [finding] = found
    assert (finding["code"], finding["severity"], finding["line"], finding["column"]) == ("TS514", "error", 7, 10)
    assert "needs 64 nvidia.com/gpu" in finding["message"] and "at most 32" in finding["message"]
    [note] = [r for r in finding["related"] if "TrainJob alone" in r["message"]]
    assert (note["line"], note["column"]) == (5, 12)  # at spec.runtime
    assert "torch-distributed" in note["message"] and "initializers" in note["message"]


def test_a_job_within_the_queue_passes_and_tainted_flavors_do_not_refuse_it(run: Any) -> None:
    """The runtime's tolerations are not known: the pods are not refused a tainted flavor on their account."""
    assert run("  nodes: 4\n  resourcesPerNode: {gpu: 8, cpu: 32, memory: 512Gi}") == (0, [])


def test_an_uncovered_resource_is_found_from_the_trainjob_too(run: Any) -> None:
    code, found = run("  nodes: 2\n  resourcesPerNode: {gpu: 8, extra: {rdma/ib: 8}}")
    assert code == 1 and [f["code"] for f in found] == ["TS515"]


def test_without_resources_a_warning_says_the_preflight_was_not_done(run: Any) -> None:
    code, found = run("  nodes: 8")
    assert code == 0
    [warning] = found
    assert (warning["code"], warning["severity"], warning["line"]) == ("TS509", "warning", 5)
    assert "not done" in warning["message"] and "torch-distributed" in warning["message"]


def test_the_runtime_from_the_cluster_files_gives_the_whole_preflight(tmp_path: Path) -> None:
    """With the runtime known, nothing is partial: no note."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER, encoding="utf-8")
    trainjob = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "big", "namespace": "ml", "labels": {"kueue.x-k8s.io/queue-name": "team"}},
        "spec": {
            "runtimeRef": {"name": "torch-distributed"},
            "trainer": {"numNodes": 8, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8}}},
        },
    }
    runtime = {
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "torch-distributed"},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "containers": [{"name": "node", "image": "x"}],
                                            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                                        }
                                    }
                                },
                            },
                        }
                    ]
                }
            },
        },
    }
    loaded = load_cluster([cluster])
    [known] = preflight(loaded, trainjob, runtime)
    assert known.code == "TS514" and known.notes == ()
    [partial] = preflight(loaded, trainjob, None)
    assert partial.code == "TS514" and partial.message == known.message
    [(text, at)] = partial.notes
    assert at == ("spec", "runtimeRef", "name") and "TrainJob alone" in text
