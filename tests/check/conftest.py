"""Shared fixtures for the manifest checker tests: CRD location and manifest builders."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trainspec.check import check_manifests, default_crd_dirs
from trainspec.dsl.diagnostics import Diagnostic

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_API = "trainer.kubeflow.org/v1alpha1"


@pytest.fixture(scope="session")
def crd_dirs() -> list[Path]:
    dirs = default_crd_dirs()
    if not dirs:
        pytest.skip("../shared/crds not found: set TRAINSPEC_CRDS_DIR or place the CRDs next to the project")
    return dirs


def rjob(name: str, container: str, *, ancestor: str | None = None, mounts: bool = False, **extra: Any) -> dict:
    """A replicatedJob with one container (optionally ancestor-labelled and mounting 'initializer')."""
    c: dict[str, Any] = {"name": container, "image": f"example.com/{container}:1"}
    if mounts:
        c["volumeMounts"] = [{"name": "initializer", "mountPath": "/workspace"}]
    job: dict[str, Any] = {"name": name, "template": {"spec": {"template": {"spec": {"containers": [c]}}}}}
    if ancestor:
        job["template"]["metadata"] = {"labels": {ANCESTOR: ancestor}}
    job.update(extra)
    return job


_RUNTIME: dict[str, Any] = {
    "apiVersion": TRAINER_API,
    "kind": "ClusterTrainingRuntime",
    "metadata": {"name": "ts-torch", "labels": {"trainer.kubeflow.org/framework": "torch"}},
    "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {}},
        "template": {
            "spec": {
                "replicatedJobs": [rjob("node", "node", ancestor="trainer")],
                "successPolicy": {"operator": "All", "targetReplicatedJobs": ["node"]},
            }
        },
    },
}

_TRAINJOB: dict[str, Any] = {
    "apiVersion": TRAINER_API,
    "kind": "TrainJob",
    "metadata": {"name": "llama-ft", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "gpu"}},
    "spec": {
        "runtimeRef": {"name": "ts-torch"},
        "suspend": True,
        "trainer": {
            "image": "example.com/train:1",
            "command": ["torchrun", "train.py"],
            "numNodes": 2,
            "numProcPerNode": 4,
            "env": [{"name": "EPOCHS", "value": "3"}],
            "resourcesPerNode": {
                "requests": {"cpu": "8", "nvidia.com/gpu": 4},
                "limits": {"nvidia.com/gpu": 4},
            },
        },
        "runtimePatches": [
            {
                "manager": "trainspec.dev/compiler",
                "trainingRuntimeSpec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [
                                {
                                    "name": "node",
                                    "template": {
                                        "spec": {
                                            "template": {
                                                "metadata": {"labels": {"app.kubernetes.io/part-of": "trainspec"}},
                                                "spec": {
                                                    "nodeSelector": {"gpu": "a100"},
                                                    "containers": [
                                                        {
                                                            "name": "node",
                                                            "volumeMounts": [{"name": "ckpt", "mountPath": "/ckpt"}],
                                                        }
                                                    ],
                                                    "volumes": [
                                                        {
                                                            "name": "ckpt",
                                                            "persistentVolumeClaim": {"claimName": "ckpt"},
                                                        }
                                                    ],
                                                },
                                            }
                                        }
                                    },
                                }
                            ]
                        }
                    }
                },
            }
        ],
    },
}


@pytest.fixture(name="rjob")
def rjob_fixture() -> Callable[..., dict]:
    """The :func:`rjob` builder."""
    return rjob


@pytest.fixture
def runtime() -> Callable[..., dict]:
    """A fresh good ClusterTrainingRuntime (trainspec style: framework label, explicit mlPolicy)."""
    return lambda: copy.deepcopy(_RUNTIME)


@pytest.fixture
def trainjob() -> Callable[..., dict]:
    """A fresh good TrainJob referencing the ``runtime`` fixture's runtime."""
    return lambda: copy.deepcopy(_TRAINJOB)


@pytest.fixture
def check(crd_dirs: list[Path]) -> Callable[..., list[Diagnostic]]:
    """check(*manifests, **kw): run check_manifests with files named m0.yaml, m1.yaml, ..."""

    def run(*manifests: dict, **kwargs: Any) -> list[Diagnostic]:
        return check_manifests([(f"m{i}.yaml", m) for i, m in enumerate(manifests)], crd_dirs, **kwargs)

    return run
