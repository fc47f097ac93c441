"""Retrying transient Kubernetes API errors with capped exponential backoff.

Transient: 429 (throttled), 5xx (API server or webhook trouble), and connection-level failures
(reset, refused, timed out). Everything else, such as 400/403/404/409/422, is an answer and is
returned to the caller at once. One 500 is an answer too: a server-side apply whose body does not
fit the schema (``fieldValidation=Strict``: "failed to create typed patch object ...: field not
declared in schema") comes back as HTTP 500 with no reason, and sending it again cannot help.

Shared by the KFP launcher and the cluster commands (submit, status, logs, cancel).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from trainspec.dsl.errors import TrainspecError

T = TypeVar("T")

TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})
#: Messages of HTTP 500 answers that are verdicts on the request, not server trouble.
PERMANENT_500 = ("failed to create typed patch object", "failed to convert new object")


@dataclass(frozen=True)
class RetryPolicy:
    """How to retry: delay ``base * 2**attempt`` (with jitter), at most ``cap``, ``attempts`` tries.

    ``base`` is a parameter so tests run with tiny delays; a ``Retry-After`` header is honoured
    up to ``cap``.
    """

    base: float = 1.0
    cap: float = 30.0
    attempts: int = 20

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before try ``attempt + 2``."""
        delay = min(self.cap, self.base * (2**attempt))
        # Jitter, so that many launchers do not retry in lock-step (no secret: S311 does not apply).
        delay *= 0.5 + random.random() / 2  # noqa: S311
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.cap))
        return delay


class DeadlineExceeded(TrainspecError):
    """Retrying would pass the caller's deadline; ``__cause__`` is the last error."""


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a kubernetes client ``ApiException`` (None for other errors)."""
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) and status > 0 else None


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is worth retrying: throttling, a server error, or a broken connection."""
    status = status_of(exc)
    if status == 500 and any(m in str(getattr(exc, "body", "") or "") for m in PERMANENT_500):
        return False
    if status is not None:
        return status in TRANSIENT_STATUS
    if _tls_verdict(exc):  # a certificate the client does not trust stays untrusted: not worth a retry
        return False
    if type(exc).__name__ == "ApiException":  # status 0: the client could not talk to the server
        return True
    # ConnectionResetError/RefusedError are OSErrors; urllib3 wraps them (MaxRetryError, ProtocolError).
    network: tuple[type[BaseException], ...] = (OSError,)
    try:
        from urllib3.exceptions import HTTPError as Urllib3Error
    except ImportError:  # pragma: no cover - urllib3 comes with the kubernetes client
        pass
    else:
        network = (OSError, Urllib3Error)
    return isinstance(exc, network)


def _tls_verdict(exc: BaseException) -> bool:
    """Whether ``exc`` is a failed TLS certificate check (urllib3 wraps it in ``MaxRetryError.reason``)."""
    text = f"{exc} {getattr(exc, 'reason', '')}"
    return "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(exc, "headers", None) or {}
    try:
        value = headers.get("Retry-After")
        return float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def call(
    fn: Callable[[], T],
    policy: RetryPolicy,
    *,
    what: str,
    deadline: float | None = None,
    log: Callable[[str], None] = print,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """Call ``fn`` until it succeeds, retrying transient errors.

    Gives up after ``policy.attempts`` tries (re-raising the last error), or with
    :class:`DeadlineExceeded` when the next wait would pass ``deadline`` (a ``clock()`` value),
    so a retry never outlives the launcher's timeout.
    """
    attempt = 0
    while True:
        try:
            return fn()
        except Exception as exc:
            if not is_transient(exc) or attempt + 1 >= policy.attempts:
                raise
            delay = policy.delay(attempt, _retry_after(exc))
            if deadline is not None and clock() + delay > deadline:
                raise DeadlineExceeded(f"{what}: {exc}") from exc
            status = status_of(exc)
            log(
                f"{what}: {'HTTP ' + str(status) if status else type(exc).__name__}; "
                f"retrying in {delay:.1f}s (attempt {attempt + 2} of {policy.attempts})"
            )
            sleep(delay)
            attempt += 1
