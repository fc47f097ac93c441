"""Fixtures for the KFP tests: the loopback Kubernetes API stand-in, and the environment that
points the launcher at it.

Modules that need kfp or the kubernetes client (the ``trainspec[kfp]`` extra) skip themselves
with that reason; the import-isolation tests need neither.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from kfp_testing import LAUNCHER_POD, NAMESPACE
from kube_standin import StandIn, serve


@pytest.fixture
def standin() -> Iterator[StandIn]:
    api = StandIn()
    server = serve(api)
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def kube_env(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> StandIn:
    """Point the launcher (and any subprocess, e.g. kfp.local's) at the stand-in."""
    monkeypatch.setenv("TRAINSPEC_KUBE_API", standin.url)
    monkeypatch.setenv("TRAINSPEC_NAMESPACE", NAMESPACE)
    monkeypatch.setenv("KFP_POD_NAME", LAUNCHER_POD)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    standin.pods[(NAMESPACE, LAUNCHER_POD)] = {
        "metadata": {
            "name": LAUNCHER_POD,
            "namespace": NAMESPACE,
            "uid": "launcher-uid-1",
            "labels": {"jobset.sigs.k8s.io/jobset-name": "-"},
        },
        "status": {"phase": "Running"},
    }
    return standin
