"""Shared bits of the cluster-command tests: a spec with a checkpoint PVC, running the CLI in-process."""

from __future__ import annotations

import contextlib
import io
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from trainspec.cli.main import main

if TYPE_CHECKING:
    from kube_standin import StandIn

S = TypeVar("S", bound="StandIn")

JOB_YAML = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata:
  name: ddp-ckpt
  namespace: ml-dev
spec:
  runtime: trainspec-torch
  image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
  command: [torchrun, /workspace/train.py]
  nodes: 2
  procsPerNode: 2
  resourcesPerNode: {cpu: 4, memory: 8Gi}
  queue: ml-dev
  maxRunTime: 30m
  checkpoint: {path: /checkpoints, size: 10Gi, storageClass: standard}
  runs: replace   # the TrainJob keeps the job's name; runs named <job>-<run id>: test_kube_runs.py
"""
#: The same job as the compiler names it by default: each run is ``ddp-ckpt-<run id>``.
RUNS_YAML = JOB_YAML.replace(
    "  runs: replace   # the TrainJob keeps the job's name; runs named <job>-<run id>: test_kube_runs.py\n", ""
)
TJ = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml-dev/trainjobs/ddp-ckpt"
PVC = "/api/v1/namespaces/ml-dev/persistentvolumeclaims/ddp-ckpt-checkpoints"
CTR = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/trainspec-torch"


def write_job(tmp: Path, text: str = JOB_YAML) -> str:
    path = tmp / "job.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def controller_patch(url: str, path: str, status: dict) -> dict:
    """What a controller does: a merge patch of the status subresource, over HTTP."""
    data = json.dumps({"status": status}).encode()
    headers = {"Content-Type": "application/merge-patch+json"}
    # S310: the URL is the loopback API server of these tests.
    request = urllib.request.Request(url + path + "/status", data=data, method="PATCH", headers=headers)  # noqa: S310
    with urllib.request.urlopen(request) as answer:  # noqa: S310
        return json.loads(answer.read())


@contextlib.contextmanager
def serving(standin: S, monkeypatch: pytest.MonkeyPatch) -> Iterator[S]:
    """Serve ``standin`` on loopback, with TRAINSPEC_KUBE_API pointing the client at it."""
    from kube_standin import serve

    server = serve(standin)
    monkeypatch.setenv("TRAINSPEC_KUBE_API", standin.url)
    monkeypatch.delenv("TRAINSPEC_NAMESPACE", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    try:
        yield standin
    finally:
        server.shutdown()
        server.server_close()
