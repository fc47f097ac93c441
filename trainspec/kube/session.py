"""What every cluster command shares: connecting (with diagnostics, not tracebacks), the namespace,
options, and turning API errors into located diagnostics.

Imports the ``kubernetes`` client only inside :func:`connect`, so ``--help`` and argument errors
stay fast and work without the extra.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import Any, TypedDict

from trainspec.dsl.diagnostics import Diagnostic

EXTRA_HINT = "pip install 'trainspec[kube]' (the kubernetes client)"
RBAC_HINT = (
    "ask for RBAC on trainjobs.trainer.kubeflow.org (and pods, pods/log, workloads.kueue.x-k8s.io) in the namespace"
)


class CommandError(Exception):
    """A cluster command stops with these diagnostics (exit 1, or 2 for ``usage``)."""

    def __init__(self, *diagnostics: Diagnostic, usage: bool = False) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = list(diagnostics)
        self.usage = usage


class ClientDefect(Exception):
    """A cluster call failed on a programming error, not on the network or the API server's answer."""


def _versions() -> str:
    """``X.Y.Z with the kubernetes client A.B.C``, for a defect report."""
    from importlib.metadata import PackageNotFoundError, version

    def of(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "(unknown)"

    return f"{of('trainspec')} with the kubernetes client {of('kubernetes')}"


def add_cluster_options(parser: argparse.ArgumentParser, *, namespace: bool = True) -> None:
    """``--context`` and ``-n/--namespace``, as kubectl spells them."""
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current one)")
    if namespace:
        parser.add_argument(
            "-n",
            "--namespace",
            metavar="NS",
            help="namespace (default: $TRAINSPEC_NAMESPACE, else the context's, else default)",
        )


def where(kube: Any, namespace: str | None = None, name: str | None = None) -> str:
    """The pseudo-file cluster diagnostics are located at: ``cluster:CONTEXT[/NS[/NAME]]``."""
    text = f"cluster:{getattr(kube, 'context', '') or 'current-context'}"
    return "/".join(filter(None, (text, namespace, name)))


def connect(context: str | None) -> Any:
    """A :class:`~trainspec.kube.client.KubeApi`; :class:`CommandError` (TS710/TS711) when impossible."""
    try:
        from trainspec.kube.client import KubeApi
    except ImportError:
        raise CommandError(
            Diagnostic(
                "TS710",
                "the cluster commands need the kubernetes client, which is not installed",
                file="<environment>",
                line=1,
                column=1,
                hint=EXTRA_HINT,
            ),
            usage=True,
        ) from None
    try:
        return KubeApi.connect(context)
    except Exception as exc:  # ConfigException, a missing file, a broken kubeconfig
        raise CommandError(
            Diagnostic(
                "TS711",
                f"cannot configure the Kubernetes client: {exc}",
                file=os.environ.get("KUBECONFIG") or "~/.kube/config",
                line=1,
                column=1,
                hint="set KUBECONFIG or --context to a cluster you can reach (kubectl config get-contexts), "
                "or TRAINSPEC_KUBE_API to the API's URL (e.g. kubectl proxy)",
            )
        ) from None


def namespace_of(args: argparse.Namespace, kube: Any) -> str:
    """``-n``, else ``$TRAINSPEC_NAMESPACE``, else the context's namespace, else ``default``."""
    return getattr(args, "namespace", None) or kube.default_namespace(None)


class Location(TypedDict):
    """Where a cluster diagnostic is placed, as ``Diagnostic``'s keyword arguments."""

    file: str
    line: int
    column: int


def api_diagnostic(
    exc: BaseException,
    kube: Any,
    *,
    what: str,
    file: str | None = None,
    line: int | None = None,
    column: int | None = None,
) -> Diagnostic:
    """A failed API call as a diagnostic: unreachable (TS711), forbidden (TS717), rejected (TS714).

    A ``TypeError`` or ``AttributeError`` without an HTTP status is neither an answer nor a
    network failure but a defect (in trainspec, or a kubernetes client release it does not work
    with): it is raised again as :class:`ClientDefect`, which the CLI reports as an internal error.
    """
    from trainspec.kube.client import error_message

    status = getattr(exc, "status", None)
    if not status and isinstance(exc, (TypeError, AttributeError)):
        # Blaming the network here sent users debugging their connection for a library mismatch.
        raise ClientDefect(
            f"calling the cluster API to {what} failed inside trainspec {_versions()}: {error_message(exc)}"
        ) from exc
    message = error_message(exc)
    location = Location(file=file or where(kube), line=line or 1, column=column or 1)
    if not status:
        return Diagnostic(
            "TS711",
            f"cannot reach the cluster to {what}: {message}",
            **location,
            hint="check the context (kubectl cluster-info) and your network",
        )
    if status == 403:
        return Diagnostic("TS717", f"not allowed to {what}: {message}", **location, hint=RBAC_HINT)
    if status == 409:
        return Diagnostic(
            "TS714",
            f"cannot {what}: {message}",
            **location,
            hint="another field manager owns these fields; rerun with --force-conflicts to take "
            "them over (server-side apply force)",
        )
    return Diagnostic(
        "TS714",
        f"the API server refused to {what}: {message}",
        path=rejected_path(message),
        **location,
        hint="the cluster's CRDs or webhooks disagree with the manifest: check the "
        "cluster's Trainer version against --target (trainspec check)",
    )


def rejected_path(message: str) -> str:
    """The field a rejection names: ``.spec.trainer.gpus: field not declared`` (apply) or
    ``is invalid: spec.trainer.numNodes: ...`` (validation); "" when none is named."""
    if m := re.search(r"\): \.([A-Za-z0-9_.\[\]=\"-]+): ", message):
        return m.group(1)
    if m := re.search(r"is invalid: \[?([a-z][A-Za-z0-9_.\[\]]*): ", message):
        return m.group(1)
    return ""
