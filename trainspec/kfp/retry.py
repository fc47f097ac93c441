"""Retry and backoff for the launcher: the shared layer in :mod:`trainspec.kube.retry` (kept importable here)."""

from __future__ import annotations

from trainspec.kube.retry import (  # noqa: F401 (re-exported)
    PERMANENT_500,
    TRANSIENT_STATUS,
    DeadlineExceeded,
    RetryPolicy,
    call,
    is_transient,
    status_of,
)
