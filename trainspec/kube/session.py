"""What every cluster command shares: connecting (with diagnostics, not tracebacks), the namespace,
options, and turning API errors into located diagnostics.

Imports the ``kubernetes`` client only inside :func:`connect`, so ``--help`` and argument errors
stay fast and work without the extra.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, TypedDict

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.errors import TrainspecError
from trainspec.extras import install_hint

EXTRA_HINT = install_hint("kube", "the kubernetes client")
RBAC_HINT = (
    "ask for RBAC on trainjobs.trainer.kubeflow.org (and pods, pods/log, workloads.kueue.x-k8s.io) in the namespace"
)


class CommandError(TrainspecError):
    """A cluster command stops with these diagnostics (exit 1, or 2 for ``usage``)."""

    def __init__(self, *diagnostics: Diagnostic, usage: bool = False) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = list(diagnostics)
        self.usage = usage


class ClientDefect(TrainspecError):
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
    """``--kubeconfig``, ``--context`` and ``-n/--namespace``, as kubectl spells them."""
    parser.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)",
    )
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


def connect(context: str | None, kubeconfig: str | None = None) -> Any:
    """A :class:`~trainspec.kube.client.KubeApi` for ``context`` of ``kubeconfig`` (None: the current
    context of ``$KUBECONFIG`` or ``~/.kube/config``); :class:`CommandError` (TS710/TS711) when impossible."""
    try:
        from trainspec.kube.client import KubeApi
    except ImportError:
        raise CommandError(
            Diagnostic(
                codes.NO_KUBE_CLIENT,
                "the cluster commands need the kubernetes client, which is not installed",
                file="<environment>",
                line=1,
                column=1,
                hint=EXTRA_HINT,
            ),
            usage=True,
        ) from None
    try:
        return KubeApi.connect(context, kubeconfig)
    except Exception as exc:  # ConfigException, a missing file, a broken kubeconfig
        from trainspec.kube.errors import kubeconfig_diagnostic

        if os.environ.get("KUBERNETES_SERVICE_HOST") and context is None and kubeconfig is None:
            files = ["<in-cluster configuration>"]
        else:
            paths = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
            files = [os.path.expanduser(p) for p in paths.split(os.pathsep) if p]
        raise CommandError(kubeconfig_diagnostic(exc, files, context)) from None


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
    sources: Any = None,
) -> Diagnostic:
    """A failed API call as a diagnostic naming its cause (:func:`trainspec.kube.errors.classify`).

    An exception that is neither an HTTP answer nor a network failure (a ``TypeError`` or
    ``AttributeError`` from a kubernetes client release trainspec does not work with, say) is a
    defect: it is raised again as :class:`ClientDefect`, which the CLI reports as an internal error.
    ``sources`` (the applied object's ``FieldSources``) places rejected fields at their spec fields.
    """
    from trainspec.kube.errors import Context, classify

    config = getattr(getattr(kube, "api", None), "configuration", None)
    if os.environ.get("TRAINSPEC_KUBE_API"):
        auth = "url"  # the client adds no credentials to that URL
    elif getattr(config, "cert_file", None):
        auth = "certificate"
    else:
        # The kubeconfig loader files the token under "authorization" up to kubernetes 36 and
        # under "BearerToken" from 37 on; read without auth_settings(), which would run an exec plugin.
        keys = getattr(config, "api_key", None) or {}
        auth = "token" if keys.get("authorization") or keys.get("BearerToken") else ""
    context = Context(
        what,
        file or where(kube),
        line or 1,
        column or 1,
        server=str(getattr(config, "host", "") or ""),
        context=str(getattr(kube, "context", "") or ""),
        auth=auth,
        probe=(lambda path: kube.request("GET", path)) if hasattr(kube, "request") else None,
        sources=sources,
    )
    found = classify(exc, context)
    if found is None:
        from trainspec.kube.client import error_message

        # Blaming the network here sent users debugging their connection for a library mismatch.
        raise ClientDefect(
            f"calling the cluster API to {what} failed inside trainspec {_versions()}: {error_message(exc)}"
        ) from exc
    return found


def rejected_path(message: str) -> str:
    """The field a rejection names (see :func:`trainspec.kube.errors.rejected_path`)."""
    from trainspec.kube.errors import rejected_path as named

    return named(message)
