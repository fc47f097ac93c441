"""Cluster failures before any answer: a kubeconfig the client cannot use, the network, TLS.

Part of the classifier in :mod:`trainspec.kube.errors` (which handles the API server's answers).
Exceptions are recognised by type name and text, so nothing here imports urllib3 or the client.
"""

from __future__ import annotations

import re
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Diagnostic

CONFIG_HINT = (
    "kubectl config get-contexts lists the contexts: pick one with --context NAME, point --kubeconfig "
    "(or KUBECONFIG) at another file, or set TRAINSPEC_KUBE_API to the API's URL (e.g. a kubectl proxy)"
)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps (urllib3's ``reason``, causes, contexts), outermost first."""
    seen: list[BaseException] = []
    todo: list[Any] = [exc]
    while todo:
        e = todo.pop(0)
        if isinstance(e, BaseException) and all(e is not s for s in seen):
            seen.append(e)
            todo += [getattr(e, "reason", None), e.__cause__, e.__context__, *e.args]
    return seen


def transport(
    exc: BaseException, server: str, what: str, attempts: int, seconds: float
) -> tuple[Code, str, str] | None:
    """``(code, message, hint)`` of a failure before any answer: TLS (TS718), the network (TS711);
    None when ``exc`` is neither (a defect)."""
    chain = _chain(exc)
    names = {type(e).__name__ for e in chain}
    text = " ".join(str(e) for e in chain) + " " + str(getattr(exc, "reason", "") or "")
    api_status_0 = type(exc).__name__ == "ApiException"  # the client's "no answer" (status 0)
    if not (api_status_0 or any(isinstance(e, OSError) or type(e).__module__.startswith("urllib3") for e in chain)):
        return None
    server = server or "the cluster"
    tries = f" ({attempts} attempts over {seconds:.1f}s)" if attempts > 1 else ""
    if names & {"SSLError", "SSLCertVerificationError"} or "SSLError" in text or "CERTIFICATE_VERIFY" in text:
        m = re.search(r"certificate verify failed: ([^(')\"]+)|(Hostname mismatch[^'\"]*'[^']*')|alert ([a-z ]+)", text)
        detail = (m.group(1) or m.group(2) or f"the server refused the client certificate ({m.group(3)})") if m else ""
        if "WRONG_VERSION_NUMBER" in text:
            detail = "the server does not speak TLS on that port (an http:// server behind an https:// URL?)"
        return (
            codes.TLS_FAILED,
            f"TLS with {server} failed to {what}: {(detail or text.split(chr(10))[-1]).strip()}",
            (
                "the kubeconfig's cluster entry must name the CA that signed the API server's certificate "
                "(certificate-authority or certificate-authority-data: kubectl config view --minify); "
                "tls-server-name fixes a host name mismatch; insecure-skip-tls-verify: true on the cluster "
                "only for a throw-away test cluster"
            ),
        )
    if names & {"NameResolutionError", "gaierror"} or "Name or service not known" in text:
        detail = "its host name does not resolve (DNS)"
    elif "refused" in text.lower():
        detail = "connection refused (nothing listens there)"
    elif names & {"ConnectTimeoutError", "ReadTimeoutError", "TimeoutError", "timeout"} or "timed out" in text:
        detail = "no answer in time (timed out)"
    elif names & {"ProtocolError", "RemoteDisconnected", "ConnectionResetError", "ConnectionAbortedError"}:
        detail = "the connection was closed before an answer"
    else:
        detail = (text.strip().splitlines() or ["network error"])[-1]
    return (
        codes.CLUSTER_UNREACHABLE,
        f"cannot reach {server} to {what}: {detail}{tries}",
        (
            "check the context and your network: kubectl cluster-info (with the same --context) tells "
            "whether the API server answers; a VPN or proxy may be needed"
        ),
    )


def kubeconfig_diagnostic(exc: BaseException, files: list[str], context: str | None) -> Diagnostic:
    """TS711 for a kubeconfig the client cannot use: which file, what is wrong with it."""
    text = str(exc)
    file = next(iter(files), "~/.kube/config")
    line = column = 1
    shown = " and ".join(files) or file
    if "No configuration found" in text:
        message = f"no kubeconfig: {shown} {'does' if len(files) < 2 else 'do'} not exist"
    elif "is empty" in text:
        message = f"the kubeconfig {shown} is empty: it has no context"
    elif "current-context" in text:
        message = f"the kubeconfig {shown} has no current context (current-context is not set)"
    elif m := re.search(r"Expected object with name (.*) in .*/(\w+) list", text):
        wanted, kind = m.group(1), m.group(2)
        if kind != "contexts":
            message = f"a context of {shown} names {kind[:-1]} {wanted!r}, which the kubeconfig does not define"
        elif context:
            message = f"the kubeconfig {shown} has no context {context!r} (--context)"
        else:
            message = f"the current context {wanted!r} of {shown} is not among its contexts"
    elif mark := getattr(exc, "problem_mark", None):  # YAML syntax
        line, column = mark.line + 1, mark.column + 1
        file = getattr(mark, "name", None) or file
        message = f"the kubeconfig {file} is not valid YAML: {getattr(exc, 'problem', None) or text}"
    elif "service" in text.lower() and "token" in text.lower():
        message = f"cannot use the pod's service account (in-cluster configuration): {text}"
    else:
        message = f"cannot configure the Kubernetes client from {shown}: {text}"
    return Diagnostic(codes.CLUSTER_UNREACHABLE, message, file=file, line=line, column=column, hint=CONFIG_HINT)
