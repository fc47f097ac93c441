"""The launcher's Kubernetes calls: the shared layer :mod:`trainspec.kube.client`, with the KFP hints.

Where the API is, in order: ``TRAINSPEC_KUBE_API`` (a URL, e.g. a ``kubectl proxy`` or a test
stand-in; no credentials are added), in-cluster config (a launcher pod), ``KUBECONFIG``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainspec.k8s.wellknown import FIELD_MANAGER
from trainspec.kube import client as _shared
from trainspec.kube.client import (  # noqa: F401 (re-exported)
    API_ENV,
    APPLY_PATCH,
    FOLLOW_IDLE,
    NAMESPACE_ENV,
    REQUEST_TIMEOUT,
    ApiException,
)
from trainspec.kube.resources import Resource

SA_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
RBAC_HINT = " (the pipeline's service account lacks RBAC: see trainspec kfp --rbac)"

__all__ = ["ApiException", "KubeApi", "error_message", "job_resource"]


def job_resource(job: dict[str, Any], plural: str) -> Resource:
    """Where a job object of any engine lives in the REST API (its plural from its dialect)."""
    return Resource(str(job.get("apiVersion") or ""), str(job.get("kind") or ""), plural)


def error_message(exc: BaseException) -> str:
    """The API server's own message for a failed call; a 403 gets a pointer to the launcher's RBAC."""
    return _shared.error_message(exc, forbidden_hint=RBAC_HINT)


class KubeApi(_shared.KubeApi):
    """The shared client; the pod's own namespace is read from this module's ``SA_NAMESPACE_FILE``."""

    def default_namespace(self, manifest_namespace: str | None = None, *, sa_namespace_file: Path | None = None) -> str:
        """The namespace to run in when none is given: env, the pod's own, kubeconfig, manifest."""
        return super().default_namespace(manifest_namespace, sa_namespace_file=sa_namespace_file or SA_NAMESPACE_FILE)

    # The job calls take the Resource: the launcher applies every engine's job kinds, which the
    # cluster commands' table (trainspec.kube.resources) does not list.

    def get_job(self, resource: Resource, namespace: str, name: str) -> dict[str, Any] | None:
        """The job object, or None when it does not exist."""
        return self.get(resource, namespace, name)

    def apply_job(
        self, resource: Resource, body: dict[str, Any], *, manager: str = FIELD_MANAGER, force: bool = True
    ) -> dict[str, Any]:
        """Server-side apply a job object with strict field validation (as ``apply`` does a TrainJob)."""
        query = [("fieldManager", manager), ("fieldValidation", "Strict")]
        if force:
            query.insert(1, ("force", "true"))
        meta = body["metadata"]
        path = resource.path(meta.get("namespace"), meta["name"])
        answer: dict[str, Any] = self.request("PATCH", path, query=query, body=body, content_type=APPLY_PATCH)
        return answer

    def delete_job(self, resource: Resource, namespace: str, name: str) -> bool:
        """Delete with foreground propagation (the controller's pods go first); False if already gone."""
        return self.delete(resource, namespace, name) is not None
