"""The few Kubernetes API calls the launcher makes, on the official ``kubernetes`` client.

Custom resources go through ``ApiClient.call_api`` rather than ``CustomObjectsApi``: the
generated ``patch_namespaced_custom_object`` picks merge-patch or json-patch from the body's
type and cannot send a server-side apply (``application/apply-patch+yaml``).

Where the API is, in order: ``TRAINSPEC_KUBE_API`` (a URL, e.g. a ``kubectl proxy`` or a test
stand-in; no credentials are added), in-cluster config (a launcher pod), ``KUBECONFIG``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from trainspec.kfp import names as N

API_ENV = "TRAINSPEC_KUBE_API"
NAMESPACE_ENV = "TRAINSPEC_NAMESPACE"
SA_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
APPLY_PATCH = "application/apply-patch+yaml"
#: (connect, read) seconds for one request; a hung connection turns into a retryable error.
REQUEST_TIMEOUT = (10, 60)
FOLLOW_IDLE = 300

__all__ = ["ApiException", "KubeApi", "error_message"]


def error_message(exc: BaseException) -> str:
    """The API server's own message for a failed call (its Status ``message``), else the error text.

    A 403 gets a pointer to the RBAC the launcher needs.
    """
    status = getattr(exc, "status", None)
    hint = " (the pipeline's service account lacks RBAC: see trainspec kfp --rbac)" if status == 403 else ""
    body = getattr(exc, "body", None)
    if body:
        try:
            data = json.loads(body)
            if isinstance(data, dict) and data.get("message"):
                return str(data["message"]) + hint
        except (TypeError, ValueError):
            pass
    reason = getattr(exc, "reason", None)
    if status:
        return f"HTTP {status} {reason or ''}".strip() + hint
    return f"{type(exc).__name__}: {exc}"


@dataclass
class KubeApi:
    """A connected client plus the namespace its configuration points at (if any)."""

    api: client.ApiClient
    config_namespace: str | None = None

    @classmethod
    def connect(cls) -> KubeApi:
        """Configure the client from the environment (see the module docstring)."""
        url = os.environ.get(API_ENV)
        if url:
            configuration = client.Configuration()
            configuration.host = url.rstrip("/")
            return cls(client.ApiClient(configuration))
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            configuration = client.Configuration()
            config.load_incluster_config(client_configuration=configuration)
            return cls(client.ApiClient(configuration))
        # Read KUBECONFIG now: the client module captured its value when it was imported.
        path = os.environ.get("KUBECONFIG") or None
        configuration = client.Configuration()
        config.load_kube_config(config_file=path, client_configuration=configuration)
        try:
            _, context = config.list_kube_config_contexts(config_file=path)
            namespace = (context or {}).get("context", {}).get("namespace")
        except (config.ConfigException, OSError):
            namespace = None
        return cls(client.ApiClient(configuration), namespace)

    def default_namespace(self, manifest_namespace: str | None) -> str:
        """The namespace to run in when none is given: env, the pod's own, kubeconfig, manifest."""
        if os.environ.get(NAMESPACE_ENV):
            return os.environ[NAMESPACE_ENV]
        try:
            own = SA_NAMESPACE_FILE.read_text(encoding="utf-8").strip()
        except OSError:
            own = ""
        return own or self.config_namespace or manifest_namespace or "default"

    # --- raw calls ------------------------------------------------------------------------

    def _call(self, method: str, path: str, *, query: list[tuple[str, str]] | None = None,
              body: Any = None, content_type: str = "application/json") -> Any:
        return self.api.call_api(
            path, method, query_params=query or [], body=body,
            header_params={"Accept": "application/json", "Content-Type": content_type},
            response_type="object", auth_settings=["BearerToken"], _return_http_data_only=True,
            _preload_content=True, _request_timeout=REQUEST_TIMEOUT,
        )

    @staticmethod
    def _trainjobs(namespace: str, name: str | None = None) -> str:
        path = f"/apis/{N.TRAINER_GROUP}/{N.TRAINER_VERSION}/namespaces/{namespace}/trainjobs"
        return f"{path}/{name}" if name else path

    # --- TrainJobs ------------------------------------------------------------------------

    def get_trainjob(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The TrainJob, or None when it does not exist."""
        try:
            return self._call("GET", self._trainjobs(namespace, name))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def apply_trainjob(self, body: dict[str, Any], *, manager: str = N.FIELD_MANAGER,
                       force: bool = True) -> dict[str, Any]:
        """Server-side apply ``body`` (create or update), strict: unknown fields are errors.

        The body is sent as JSON, which is valid YAML, under the apply-patch content type.
        """
        meta = body["metadata"]
        query = [("fieldManager", manager), ("fieldValidation", "Strict")]
        if force:
            query.insert(1, ("force", "true"))
        return self._call("PATCH", self._trainjobs(meta["namespace"], meta["name"]), query=query,
                          body=body, content_type=APPLY_PATCH)

    def delete_trainjob(self, namespace: str, name: str) -> bool:
        """Delete with foreground propagation (JobSet and pods go first); False if already gone."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Foreground"}
        try:
            self._call("DELETE", self._trainjobs(namespace, name), body=body)
            return True
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise

    # --- runtimes -------------------------------------------------------------------------

    def get_runtime(self, kind: str, name: str, namespace: str) -> dict[str, Any] | None:
        """The ClusterTrainingRuntime or (namespaced) TrainingRuntime, or None when missing."""
        base = f"/apis/{N.TRAINER_GROUP}/{N.TRAINER_VERSION}"
        if kind == "TrainingRuntime":
            path = f"{base}/namespaces/{namespace}/trainingruntimes/{name}"
        else:
            path = f"{base}/clustertrainingruntimes/{name}"
        try:
            return self._call("GET", path)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    # --- pods -----------------------------------------------------------------------------

    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self._call("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def list_pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        result = self._call("GET", f"/api/v1/namespaces/{namespace}/pods", query=[("labelSelector", selector)])
        return list((result or {}).get("items") or [])

    def stream_log(self, namespace: str, pod: str, container: str, *, follow: bool,
                   since_seconds: int | None = None) -> Iterator[str]:
        """Lines of a container's log, with RFC 3339 timestamps (used to skip lines on reconnect)."""
        response = client.CoreV1Api(self.api).read_namespaced_pod_log(
            pod, namespace, container=container, follow=follow, timestamps=True,
            since_seconds=since_seconds, _preload_content=False,
            # A quiet stream is normal while following; after FOLLOW_IDLE the follower reconnects
            # (skipping lines it printed), which also recovers from a silently dead connection.
            _request_timeout=(REQUEST_TIMEOUT[0], FOLLOW_IDLE) if follow else REQUEST_TIMEOUT,
        )
        try:
            pending = b""
            for chunk in response.stream(4096, decode_content=True):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    yield line.decode("utf-8", errors="replace")
            if pending:
                yield pending.decode("utf-8", errors="replace")
        finally:
            response.release_conn()
