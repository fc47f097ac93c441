"""Fixtures for the KFP tests: a loopback Kubernetes API stand-in and a compiled CPU job.

Every test here needs kfp and the kubernetes client (the ``trainspec[kfp]`` extra); without
them the whole directory is skipped with that reason, except the import-isolation tests.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from kube_standin import StandIn, serve  # noqa: E402

from kfp_testing import LAUNCHER_POD, NAMESPACE  # noqa: E402


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
        "metadata": {"name": LAUNCHER_POD, "namespace": NAMESPACE, "uid": "launcher-uid-1",
                     "labels": {"jobset.sigs.k8s.io/jobset-name": "-"}},
        "status": {"phase": "Running"},
    }
    return standin
