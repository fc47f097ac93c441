"""One Kubernetes client layer for the cluster commands and the KFP launcher.

Built on the official ``kubernetes`` client (extra ``trainspec[kube]``), which configures the
connection: the host, TLS (CA, client certificates), proxies and the bearer token with its refresh
hook (exec plugins, OIDC, in-cluster token files). Objects are plain dicts and every call goes
through :meth:`KubeApi.request` / :meth:`KubeApi.stream`, which build the HTTP request here and send
it on the client's urllib3 pool (``ApiClient.rest_client.pool_manager``).

Why not the client's own request functions: none of them has a signature that holds across the
releases the extra allows. ``ApiClient.call_api`` lost ``query_params``/``response_type`` in 36/37,
``ApiClient.request`` is gone in 37, and ``RESTClientObject.request`` lost ``query_params`` and
``_preload_content`` in 37. What this module uses has not changed from 27.2 to 37:
``Configuration.host``, ``Configuration.auth_settings()`` (which runs ``refresh_api_key_hook``),
``ApiClient.default_headers``/``cookie``/``rest_client.pool_manager``, and
``ApiException(status=, reason=)``. The generated ``patch_*`` methods could not be used anyway:
they cannot send a server-side apply (``application/apply-patch+yaml``).

Where the API is, in order: ``TRAINSPEC_KUBE_API`` (a URL, e.g. a ``kubectl proxy`` or a test
stand-in; no credentials are added), in-cluster config (a pod), ``KUBECONFIG`` / ``~/.kube/config``
(its current context, or the one asked for).
"""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from trainspec.k8s import wellknown as W
from trainspec.kube import resources as R

if TYPE_CHECKING:  # typing.Self is Python 3.11+; trainspec runs on 3.10
    from typing import Self

    from urllib3 import BaseHTTPResponse

API_ENV = "TRAINSPEC_KUBE_API"
NAMESPACE_ENV = "TRAINSPEC_NAMESPACE"
SA_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
APPLY_PATCH = "application/apply-patch+yaml"
MERGE_PATCH = "application/merge-patch+json"
#: (connect, read) seconds for one request; a hung connection turns into a retryable error.
REQUEST_TIMEOUT = (10, 60)
#: Seconds a quiet log stream or watch may stay silent before the reader reconnects.
FOLLOW_IDLE = 300

__all__ = ["ApiException", "KubeApi", "error_message", "server_status"]


def server_status(exc: BaseException) -> dict[str, Any]:
    """The API server's ``Status`` object of a failed call ({} when there is none)."""
    body = getattr(exc, "body", None)
    if body:
        try:
            data = json.loads(body)
        except (TypeError, ValueError):
            return {}
        if isinstance(data, dict):
            return data
    return {}


def error_message(exc: BaseException, *, forbidden_hint: str = "") -> str:
    """The API server's own message for a failed call (its Status ``message``), else the error text.

    ``forbidden_hint`` is appended to a 403 (where to get the RBAC the caller needs).
    """
    status = getattr(exc, "status", None)
    hint = forbidden_hint if status == 403 else ""
    message = server_status(exc).get("message")
    if message:
        return str(message) + hint
    reason = getattr(exc, "reason", None)
    if status:
        return f"HTTP {status} {reason or ''}".strip() + hint
    return f"{type(exc).__name__}: {exc}"


@dataclass
class KubeApi:
    """A connected client, the namespace its configuration points at, and its context's name."""

    api: client.ApiClient
    config_namespace: str | None = None
    context: str = ""

    @classmethod
    def connect(cls, context: str | None = None, kubeconfig: str | None = None) -> Self:
        """Configure the client from the environment (see the module docstring).

        ``kubeconfig`` is a kubeconfig file (or an ``os.pathsep``-separated list, as
        ``$KUBECONFIG``) read instead of ``$KUBECONFIG`` / ``~/.kube/config``; with it, or with a
        ``context``, a pod's in-cluster configuration is not used.
        """
        url = os.environ.get(API_ENV)
        if url:
            configuration = client.Configuration()
            configuration.host = url.rstrip("/")
            return cls(client.ApiClient(configuration), context=url)
        if os.environ.get("KUBERNETES_SERVICE_HOST") and context is None and kubeconfig is None:
            configuration = client.Configuration()
            config.load_incluster_config(client_configuration=configuration)
            return cls(client.ApiClient(configuration), context="in-cluster")
        # Read KUBECONFIG now: the client module captured its value when it was imported.
        path = kubeconfig or os.environ.get("KUBECONFIG") or None
        configuration = client.Configuration()
        config.load_kube_config(config_file=path, context=context, client_configuration=configuration)
        try:
            contexts, active = config.list_kube_config_contexts(config_file=path)
            chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
            namespace = (chosen or {}).get("context", {}).get("namespace")
            name = (chosen or {}).get("name") or ""
        except (config.ConfigException, OSError):
            namespace, name = None, context or ""
        return cls(client.ApiClient(configuration), namespace, name)

    def default_namespace(self, manifest_namespace: str | None = None, *, sa_namespace_file: Path | None = None) -> str:
        """The namespace to use when none is given: env, the pod's own, kubeconfig, manifest, default."""
        if os.environ.get(NAMESPACE_ENV):
            return os.environ[NAMESPACE_ENV]
        try:
            own = (sa_namespace_file or SA_NAMESPACE_FILE).read_text(encoding="utf-8").strip()
        except OSError:
            own = ""
        return own or self.config_namespace or manifest_namespace or "default"

    # --- generic calls ----------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Any:
        """One API call; the decoded JSON answer (None for an empty one). Raises ``ApiException`` for an
        error status, and for an answer that is not JSON (with its status, 2xx)."""
        response = self.stream(method, path, query=query, body=body, content_type=content_type)
        try:
            data = response.data
        finally:
            response.release_conn()
        if not data and method != "GET":
            return None
        try:  # an empty answer to a GET is not the API server's either
            return json.loads(data)
        except ValueError:  # not JSON: a proxy's or login page's answer, not the API server's
            raise _not_json(response, data, method, path) from None

    def stream(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        accept: str = "application/json",
        timeout: tuple[float, float] = REQUEST_TIMEOUT,
    ) -> BaseHTTPResponse:
        """Send one request; the unread HTTP response (the caller reads it and calls ``release_conn``).

        ``body`` is sent as JSON (also under the apply-patch content type: JSON is valid YAML).
        Raises ``ApiException`` (with the server's ``status``, ``reason``, ``body`` and ``headers``)
        for a status outside 2xx, and ``ApiException`` with status 0 for a TLS failure, as the
        client's own request functions do, so callers and the retry policy see the same errors.
        """
        api = self.api
        configuration = api.configuration
        query = list(query or [])
        headers: dict[str, str] = {**api.default_headers, "Accept": accept}
        if api.cookie:
            headers["Cookie"] = api.cookie
        payload = None
        if body is not None:
            headers["Content-Type"] = content_type
            payload = json.dumps(body).encode("utf-8")
        # As ``call_api(auth_settings=["BearerToken"])`` did: auth_settings() reads the token after
        # running configuration.refresh_api_key_hook, so expiring tokens are renewed per request.
        auth = configuration.auth_settings().get("BearerToken")
        if auth and auth.get("value"):
            if auth["in"] == "header":
                headers[auth["key"]] = auth["value"]
            elif auth["in"] == "query":
                query.append((auth["key"], auth["value"]))
            elif auth["in"] == "cookie":
                headers["Cookie"] = auth["value"]
        url = configuration.host + path + ("?" + urlencode(query) if query else "")
        try:
            response: BaseHTTPResponse = api.rest_client.pool_manager.request(
                method,
                url,
                body=payload,
                headers=headers,
                timeout=urllib3.Timeout(connect=timeout[0], read=timeout[1]),
                preload_content=False,
            )
        except urllib3.exceptions.SSLError as exc:
            raise ApiException(status=0, reason=f"{type(exc).__name__}\n{exc}") from exc
        if not 200 <= response.status <= 299:
            try:
                data = response.data
            finally:
                response.release_conn()
            error = ApiException(status=response.status, reason=response.reason)
            # Set after construction: the constructor's other arguments differ between releases.
            error.body = data.decode("utf-8", errors="replace")
            error.headers = response.headers
            error.method, error.path = method, path  # what the request was about (trainspec.kube.errors)
            raise error
        return response

    def get(self, resource: R.Resource, namespace: str | None, name: str) -> dict[str, Any] | None:
        """The object, or None when it does not exist."""
        try:
            return self.request("GET", resource.path(namespace, name))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def list(
        self, resource: R.Resource, namespace: str | None, *, selector: str = "", field_selector: str = ""
    ) -> dict[str, Any]:
        """The list object (``items``, ``metadata.resourceVersion``); ``namespace`` None: all namespaces."""
        query = [("labelSelector", selector)] if selector else []
        if field_selector:
            query.append(("fieldSelector", field_selector))
        return self.request("GET", resource.path(namespace), query=query) or {}

    def apply(
        self, obj: dict[str, Any], *, manager: str = W.FIELD_MANAGER, force: bool = True, dry_run: bool = False
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` (create or update) with strict field validation.

        The body is sent as JSON, which is valid YAML, under the apply-patch content type;
        ``dry_run`` asks the server to validate and default without storing (``dryRun=All``).
        """
        resource = R.resource_of(obj)
        meta = obj["metadata"]
        query = [("fieldManager", manager), ("fieldValidation", "Strict")]
        if force:
            query.insert(1, ("force", "true"))
        if dry_run:
            query.append(("dryRun", "All"))
        return self.request(
            "PATCH", resource.path(meta.get("namespace"), meta["name"]), query=query, body=obj, content_type=APPLY_PATCH
        )

    def delete(
        self, resource: R.Resource, namespace: str | None, name: str, *, propagation: str = "Foreground"
    ) -> dict[str, Any] | None:
        """Delete with the given propagation; the server's answer, or None if already gone."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation}
        try:
            return self.request("DELETE", resource.path(namespace, name), body=body)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def watch(
        self,
        resource: R.Resource,
        namespace: str | None,
        *,
        resource_version: str,
        field_selector: str = "",
        timeout_seconds: int = FOLLOW_IDLE,
    ) -> Iterator[dict[str, Any]]:
        """Watch events (``{"type", "object"}``) after ``resource_version`` until the server ends the watch."""
        query = [
            ("watch", "true"),
            ("resourceVersion", resource_version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(timeout_seconds)),
        ]
        if field_selector:
            query.append(("fieldSelector", field_selector))
        response = self.stream(
            "GET", resource.path(namespace), query=query, timeout=(REQUEST_TIMEOUT[0], timeout_seconds + 30)
        )
        try:
            for line in _lines(response):
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except ValueError:  # a proxy's page in place of the event stream: not a defect
                    raise _not_json(response, line.encode("utf-8"), "GET", resource.path(namespace)) from None
                yield event
        finally:
            response.release_conn()

    def stream_log(
        self,
        namespace: str,
        pod: str,
        container: str,
        *,
        follow: bool,
        since_seconds: int | None = None,
        tail_lines: int | None = None,
        previous: bool = False,
    ) -> Iterator[str]:
        """Lines of a container's log, with RFC 3339 timestamps (used to skip lines on reconnect).

        ``since_seconds``, ``tail_lines`` and ``previous`` (the container's previous instance,
        the one before its last restart) are the log API's ``sinceSeconds``, ``tailLines`` and
        ``previous``; the server applies them.
        """
        # Booleans spelled as the generated client up to 35 sent them; the API server parses
        # true/True alike (strconv.ParseBool).
        query = [("container", container), ("follow", str(follow)), ("timestamps", "True")]
        if since_seconds is not None:
            query.append(("sinceSeconds", str(since_seconds)))
        if tail_lines is not None:
            query.append(("tailLines", str(tail_lines)))
        if previous:
            query.append(("previous", "True"))
        response = self.stream(
            "GET",
            f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(pod, safe='')}/log",
            query=query,
            accept="*/*",
            # A quiet stream is normal while following; after FOLLOW_IDLE the follower reconnects
            # (skipping lines it printed), which also recovers from a silently dead connection.
            timeout=(REQUEST_TIMEOUT[0], FOLLOW_IDLE) if follow else REQUEST_TIMEOUT,
        )
        try:
            yield from _lines(response)
        finally:
            response.release_conn()

    # --- the launcher's calls (TrainJobs, runtimes, pods) ------------------------------------

    def get_trainjob(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The TrainJob, or None when it does not exist."""
        return self.get(R.TRAINJOB, namespace, name)

    def apply_trainjob(
        self, body: dict[str, Any], *, manager: str = W.FIELD_MANAGER, force: bool = True
    ) -> dict[str, Any]:
        """Server-side apply a TrainJob, strict: unknown fields are errors."""
        return self.apply(body, manager=manager, force=force)

    def delete_trainjob(self, namespace: str, name: str) -> bool:
        """Delete with foreground propagation (JobSet and pods go first); False if already gone."""
        return self.delete(R.TRAINJOB, namespace, name) is not None

    def get_runtime(self, kind: str, name: str, namespace: str) -> dict[str, Any] | None:
        """The ClusterTrainingRuntime or (namespaced) TrainingRuntime, or None when missing."""
        if kind == "TrainingRuntime":
            return self.get(R.TRAINING_RUNTIME, namespace, name)
        return self.get(R.CLUSTER_TRAINING_RUNTIME, None, name)

    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The pod, or None when it does not exist."""
        return self.get(R.POD, namespace, name)

    def list_pods(self, namespace: str, selector: str) -> builtins.list[dict[str, Any]]:  # `list` is a method here
        """The pods matching a label selector."""
        return list(self.list(R.POD, namespace, selector=selector).get("items") or [])


def _not_json(response: Any, data: bytes, method: str, path: str) -> ApiException:
    """The error for a 2xx answer that is not JSON (its status kept: the classifier names it TS724)."""
    error = ApiException(status=response.status, reason=f"{response.reason} (not JSON)")
    error.body, error.headers = data.decode("utf-8", errors="replace"), response.headers
    error.method, error.path = method, path
    return error


def _lines(response: Any) -> Iterator[str]:
    """The lines of a streamed HTTP response, decoded (a last line without newline included)."""
    pending = b""
    for chunk in response.stream(4096, decode_content=True):
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line.decode("utf-8", errors="replace")
    if pending:
        yield pending.decode("utf-8", errors="replace")
