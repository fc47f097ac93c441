"""Fixtures for the cluster commands: the loopback API stand-in shared with the KFP tests
(tests/kfp/kube_standin.py), and the environment that points the commands at it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "kfp"))

from helpers import serving
from kube_standin import StandIn


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries as many as ever, without their waits: the backoff itself is tested in tests/kfp.

    (A person waits for these commands, so their policy sleeps for real: seconds per test.)
    """
    from trainspec.kube.retry import RetryPolicy

    monkeypatch.setattr(RetryPolicy, "delay", lambda self, attempt, retry_after=None: 0.0)
    try:  # urllib3 itself retries a GET answered 429 or 503 with Retry-After (up to 3 times)
        import urllib3
    except ImportError:  # without the kube extra: nothing retries
        return
    monkeypatch.setattr(urllib3.util.retry.Retry, "sleep", lambda self, response=None: None)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    """A fresh stand-in; TRAINSPEC_KUBE_API points the client at it (no kubeconfig read)."""
    with serving(StandIn(), monkeypatch) as standin:
        yield standin
