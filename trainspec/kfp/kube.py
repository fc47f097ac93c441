"""The launcher's Kubernetes calls: the shared layer :mod:`trainspec.kube.client`, with the KFP hints.

Where the API is, in order: ``TRAINSPEC_KUBE_API`` (a URL, e.g. a ``kubectl proxy`` or a test
stand-in; no credentials are added), in-cluster config (a launcher pod), ``KUBECONFIG``.
"""

from __future__ import annotations

from pathlib import Path

from trainspec.kube import client as _shared
from trainspec.kube.client import (  # noqa: F401 (re-exported)
    API_ENV,
    APPLY_PATCH,
    FOLLOW_IDLE,
    NAMESPACE_ENV,
    REQUEST_TIMEOUT,
    ApiException,
)

SA_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
RBAC_HINT = " (the pipeline's service account lacks RBAC: see trainspec kfp --rbac)"

__all__ = ["ApiException", "KubeApi", "error_message"]


def error_message(exc: BaseException) -> str:
    """The API server's own message for a failed call; a 403 gets a pointer to the launcher's RBAC."""
    return _shared.error_message(exc, forbidden_hint=RBAC_HINT)


class KubeApi(_shared.KubeApi):
    """The shared client; the pod's own namespace is read from this module's ``SA_NAMESPACE_FILE``."""

    def default_namespace(self, manifest_namespace: str | None = None, *, sa_namespace_file: Path | None = None) -> str:
        """The namespace to run in when none is given: env, the pod's own, kubeconfig, manifest."""
        return super().default_namespace(manifest_namespace, sa_namespace_file=sa_namespace_file or SA_NAMESPACE_FILE)
