"""Fixtures for the cluster commands: the loopback API stand-in shared with the KFP tests
(tests/kfp/kube_standin.py), and the environment that points the commands at it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "kfp"))

from kube_standin import StandIn, serve


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    """A fresh stand-in; TRAINSPEC_KUBE_API points the client at it (no kubeconfig read)."""
    standin = StandIn()
    server = serve(standin)
    monkeypatch.setenv("TRAINSPEC_KUBE_API", standin.url)
    monkeypatch.delenv("TRAINSPEC_NAMESPACE", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    try:
        yield standin
    finally:
        server.shutdown()
        server.server_close()
