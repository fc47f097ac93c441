"""Posting progress to Kubeflow Trainer's TrainJob status endpoint (in-pod; standard library only).

With the controller's ``TrainJobStatus`` feature gate on (alpha, Trainer v2.2+), every trainer
container gets three variables:

* ``KUBEFLOW_TRAINER_SERVER_URL``: the endpoint, ``https://<controller service>:<port>``
  ``/apis/trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status``;
* ``KUBEFLOW_TRAINER_SERVER_CA_CERT``: the CA file that signs the controller's certificate;
* ``KUBEFLOW_TRAINER_SERVER_TOKEN``: a projected service-account token file (audience
  ``trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status``, valid one hour and
  rotated by the kubelet, so it is read again for every post; the CA file too, as it rotates).

A post is ``POST <url>`` with ``Authorization: Bearer <token>`` and a JSON body
``{"trainerStatus": {"progressPercentage": 0-100, "estimatedRemainingSeconds": >= 0,
"metrics": [{"name", "value"}], "lastUpdatedTime": RFC 3339}}``: metric names and values are
strings of 1 to 64 characters, at most 256 metrics; the controller applies them to
``TrainJob.status.trainerStatus`` (server-side apply) and answers 200 with the payload, or a
``metav1.Status`` JSON on error (403 for a token of another job, 422 for an invalid body).

A post never raises: it returns False, and each kind of failure is written to stderr once
(the caller retries with newer values later). Proxies are bypassed (the endpoint is a cluster
service address) and redirects are refused (the bearer token must not follow them).
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

# The controller's variable names, shared with the compiler (a standard-library module).
from trainspec.dsl.kube_facts import (
    INT32_MAX,
    TRAINER_STATUS_CA_ENV,
    TRAINER_STATUS_TOKEN_ENV,
    TRAINER_STATUS_URL_ENV,
)

__all__ = ["TrainerEndpoint", "TrainerStatusSink", "Update", "status_payload", "trainer_endpoint"]

#: What the API accepts for a metric name or value (MinLength 1, MaxLength 64) and for the list.
METRIC_TEXT_MAX = 64
METRICS_MAX = 256


@dataclass(frozen=True)
class Update:
    """One progress report: what ``trainerStatus`` carries, plus the step for the stdout line."""

    progress: int | None = None
    remaining_seconds: int | None = None
    metrics: tuple[tuple[str, str], ...] = ()
    #: Seconds since the epoch when the values were taken (``lastUpdatedTime``).
    time: float = 0.0
    step: int | None = None
    total_steps: int | None = None


@dataclass(frozen=True)
class TrainerEndpoint:
    """Where and how to post: the URL and the two files the controller mounts."""

    url: str
    ca_file: Path
    token_file: Path


def trainer_endpoint(env: Mapping[str, str] | None = None) -> TrainerEndpoint | None:
    """The status endpoint from the controller's variables, or None when the cluster gives none."""
    env = os.environ if env is None else env
    url = env.get(TRAINER_STATUS_URL_ENV, "").strip()
    ca = env.get(TRAINER_STATUS_CA_ENV, "").strip()
    token = env.get(TRAINER_STATUS_TOKEN_ENV, "").strip()
    if not (url and ca and token):
        return None
    return TrainerEndpoint(url, Path(ca), Path(token))


def rfc3339(seconds: float) -> str:
    """``2026-01-01T00:00:00Z``: the form of a Kubernetes ``metav1.Time``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def status_payload(update: Update) -> dict[str, Any]:
    """The JSON body of one post (absent values are left out, as the API's ``omitempty``)."""
    status: dict[str, Any] = {}
    if update.progress is not None:
        status["progressPercentage"] = max(0, min(100, int(update.progress)))
    if update.remaining_seconds is not None:
        status["estimatedRemainingSeconds"] = max(0, min(INT32_MAX, int(update.remaining_seconds)))
    if update.metrics:
        status["metrics"] = [{"name": name, "value": value} for name, value in update.metrics[:METRICS_MAX]]
    status["lastUpdatedTime"] = rfc3339(update.time)  # required whenever trainerStatus is set
    return {"trainerStatus": status}


class TrainerStatusSink:
    """Posts updates to the TrainJob status endpoint; blocking, so the reporter posts from a thread."""

    #: The reporter runs a blocking sink on a background thread, so training never waits on it.
    blocking = True

    def __init__(self, endpoint: TrainerEndpoint, *, timeout: float = 5.0, log: TextIO | None = None) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self._log = log
        self._logged: set[str] = set()
        self.sent = 0
        self.failed = 0

    def _fail(self, kind: str, detail: str) -> bool:
        self.failed += 1
        if kind not in self._logged:  # once per kind: a down endpoint must not flood the pod log
            self._logged.add(kind)
            print(
                f"trainspec: progress report to {self.endpoint.url} failed ({kind}): {detail}; "
                "training continues and the report is retried later",
                file=self._log or sys.stderr,
                flush=True,
            )
        return False

    def send(self, update: Update) -> bool:
        """Post one update; True when the controller accepted it. Never raises."""
        try:
            return self._post(update)
        except Exception as exc:
            return self._fail(type(exc).__name__, str(exc))

    def _post(self, update: Update) -> bool:
        import ssl
        import urllib.error
        import urllib.request

        if not self.endpoint.url.startswith("https://"):
            return self._fail("not https", "the bearer token is only ever sent over HTTPS")
        try:
            token = self.endpoint.token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            return self._fail("token file", str(exc))
        if not token:
            return self._fail("token file", f"{self.endpoint.token_file} is empty")
        try:
            context = ssl.create_default_context(cafile=str(self.endpoint.ca_file))
        except (OSError, ssl.SSLError) as exc:
            return self._fail("CA file", f"{self.endpoint.ca_file}: {exc}")
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}), _no_redirect()(), urllib.request.HTTPSHandler(context=context)
        )
        body = json.dumps(status_payload(update), separators=(",", ":")).encode()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Accept": "application/json"}
        # S310: the URL was checked to be https:// above, and the opener refuses redirects.
        request = urllib.request.Request(self.endpoint.url, data=body, method="POST", headers=headers)  # noqa: S310
        try:
            with opener.open(request, timeout=self.timeout) as response:
                response.read(1 << 16)
        except urllib.error.HTTPError as exc:
            return self._fail(f"HTTP {exc.code}", _status_message(exc))
        except urllib.error.URLError as exc:
            kind = "TLS" if isinstance(exc.reason, ssl.SSLError) else "connection"
            return self._fail(kind, str(exc.reason))
        except (OSError, TimeoutError) as exc:
            return self._fail("connection", str(exc) or type(exc).__name__)
        self.sent += 1
        return True


def _status_message(exc: Any) -> str:
    """The ``message`` of the controller's ``metav1.Status`` answer, else the HTTP reason."""
    try:
        text = exc.read(4096).decode("utf-8", "replace")
        message = json.loads(text).get("message")
        return str(message) if message else str(exc.reason)
    except Exception:
        return str(exc.reason)


@functools.cache
def _no_redirect() -> type:
    """A redirect handler that refuses every redirect (built on first use: urllib loads lazily)."""
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # the request carries a bearer token: never follow it elsewhere

    return NoRedirect
