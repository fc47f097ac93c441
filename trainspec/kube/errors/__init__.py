"""Why a cluster call failed: an exception and what was being done -> a diagnostic naming the cause.

One classifier for every cluster command. It reads what kube-apiserver answers (a ``Status`` with
``reason``, ``details`` and ``causes``; plain text for throttling, and from older servers for an
unknown path) and urllib3's transport errors, and tells apart: a broken kubeconfig (TS711), the
network (TS711) and TLS (TS718), expired credentials (401, TS719), RBAC (TS717, with the verb,
resource and user), a missing namespace (TS720), a resource type the cluster does not serve (a
missing CRD, TS721) and a missing object (TS716), apply conflicts and refusals (TS714, with the
fields), an object being deleted (TS722), throttling and server failures after retries (TS723),
and an answer that is not the Kubernetes API's (TS724).

Pure: no request is sent here except through the ``probe`` a caller passes (API discovery), so it
is tested without a server. :func:`classify` returns None for an exception that is neither an
HTTP answer nor a network failure: a defect, which the caller reports as one.

Modules: ``model`` (what a request was about, the context, the Status), ``connection`` (no answer:
kubeconfig, network, TLS), ``missing`` (404s), ``refusals`` (the other answers).
"""

from __future__ import annotations

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.kube.errors.connection import kubeconfig_diagnostic, transport
from trainspec.kube.errors.missing import get_or_none, namespace_diagnostic, not_found, not_served, served
from trainspec.kube.errors.model import Context, GaveUp, Target, diag, is_html, status_of, target_of, text_of
from trainspec.kube.errors.refusals import (
    being_deleted,
    conflict,
    deleting_diagnostic,
    forbidden,
    gave_up,
    refused,
    rejected_path,
    unauthorized,
    verdict_500,
    wait_hint,
)

__all__ = [
    "Context",
    "GaveUp",
    "Target",
    "being_deleted",
    "classify",
    "deleting_diagnostic",
    "get_or_none",
    "kubeconfig_diagnostic",
    "namespace_diagnostic",
    "not_served",
    "rejected_path",
    "served",
    "status_of",
    "target_of",
]


def classify(exc: BaseException, ctx: Context) -> Diagnostic | None:
    """The diagnostic of a failed cluster call; None when ``exc`` is a defect, not a cluster failure."""
    attempts, seconds = 1, 0.0
    if isinstance(exc, GaveUp):
        attempts, seconds, exc = exc.attempts, exc.seconds, exc.last
    status = getattr(exc, "status", None)
    if not isinstance(status, int) or status <= 0:
        found = transport(exc, ctx.server, ctx.what, attempts, seconds)
        return diag(found[0], ctx, found[1], found[2]) if found else None
    target = target_of(str(getattr(exc, "path", "") or ""))
    body, message = status_of(exc), text_of(exc)
    details = body.get("details") or {}
    if status < 300 or (is_html(exc) and status not in (429,) and status < 500):
        return diag(
            codes.NOT_AN_API_SERVER,
            ctx,
            f"the server at {ctx.server or 'the configured URL'} did not answer like a Kubernetes API server "
            f"to {ctx.what} (HTTP {status}: {repr(message) if message else 'an empty answer'})",
            "check the cluster's server URL (kubectl cluster-info; TRAINSPEC_KUBE_API): a proxy, load "
            "balancer or login page answers in its place",
        )
    if status == 401:
        return unauthorized(ctx)
    if status == 403:
        return forbidden(message, target, ctx)
    if status == 404:
        return not_found(body, details, target, ctx)
    if status == 409 or (status == 422 and "being deleted" in message):
        causes = [c for c in details.get("causes") or [] if c.get("reason") == "FieldManagerConflict"]
        if causes:
            return conflict(causes, message, target, ctx)
        if "being deleted" in message:
            name = details.get("name") or (target.name if target else "")
            return diag(
                codes.BEING_DELETED,
                ctx,
                f"cannot {ctx.what}: {message}",
                wait_hint(name, target.namespace if target else ""),
            )
    if status in (429, 500, 502, 503, 504) and not verdict_500(status, message):
        return gave_up(exc, status, message, ctx, attempts, seconds)
    causes = [c for c in details.get("causes") or [] if isinstance(c, dict)]
    return refused(status, message, causes, ctx)
