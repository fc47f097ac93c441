"""A Kubernetes API stand-in on loopback: just the REST paths the launcher uses.

It records every request (method, path, query, headers, parsed body) so tests assert on what
the real ``kubernetes`` client sent. Behaviour is scripted, never timed:

* ``status_script``: statuses given to the TrainJob on successive GETs after it exists (the
  last one stays);
* ``faults``: responses to give instead of the real one, to the next matching requests
  (an HTTP status, or ``"reset"`` to drop the connection without an answer);
* ``pods`` / ``logs``: what the pod list and log endpoints return.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TRAINER = "/apis/trainer.kubeflow.org/v1alpha1"
RE_TRAINJOB = re.compile(rf"^{TRAINER}/namespaces/([^/]+)/trainjobs/([^/]+)$")
RE_CTR = re.compile(rf"^{TRAINER}/clustertrainingruntimes/([^/]+)$")
RE_TR = re.compile(rf"^{TRAINER}/namespaces/([^/]+)/trainingruntimes/([^/]+)$")
RE_PODS = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")
RE_POD = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)$")
RE_LOG = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/log$")


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass
class Fault:
    method: str
    pattern: str  # regex searched in the path
    response: int | str  # HTTP status, or "reset"
    count: int = 1


@dataclass
class StandIn:
    trainjobs: dict[tuple[str, str], dict] = field(default_factory=dict)
    runtimes: dict[tuple[str, str, str], dict] = field(default_factory=dict)  # (kind, namespace, name)
    pods: dict[tuple[str, str], dict] = field(default_factory=dict)
    logs: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    status_script: list[dict] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    #: Set when a TrainJob is first applied (a test waits on it before sending SIGTERM).
    applied: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    # --- helpers for tests ----------------------------------------------------------------

    def add_cluster_runtime(self, name: str) -> None:
        self.runtimes[("ClusterTrainingRuntime", "", name)] = {
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": name}, "spec": {"template": {"spec": {"replicatedJobs": [{
                "name": "node", "template": {
                    "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                    "spec": {"template": {"spec": {"containers": [{
                        "name": "node", "image": "img",
                        "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}]}}}}}]}}},
        }

    def add_pod(self, namespace: str, name: str, trainjob: str, *, phase: str = "Succeeded",
                lines: list[str] | None = None, index: int = 0) -> None:
        self.pods[(namespace, name)] = {
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                         "creationTimestamp": "2026-01-01T00:00:00Z",
                         "labels": {"jobset.sigs.k8s.io/jobset-name": trainjob,
                                    "jobset.sigs.k8s.io/replicatedjob-name": "node",
                                    "batch.kubernetes.io/job-completion-index": str(index)}},
            "status": {"phase": phase},
        }
        if lines is not None:
            self.logs[(namespace, name)] = lines

    def fail(self, method: str, pattern: str, *responses: int | str) -> None:
        for response in responses:
            self.faults.append(Fault(method, pattern, response))

    def sent(self, method: str | None = None, pattern: str = "") -> list[Request]:
        with self.lock:
            return [r for r in self.requests
                    if (method is None or r.method == method) and re.search(pattern, r.path)]

    # --- serving --------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: dict[str, str], headers: dict[str, str],
               raw: bytes) -> tuple[int, Any, str]:
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        with self.lock:
            self.requests.append(Request(method, path, query, headers, body))
            for fault in self.faults:
                if fault.method == method and re.search(fault.pattern, path) and fault.count > 0:
                    fault.count -= 1
                    if fault.count == 0:
                        self.faults.remove(fault)
                    if fault.response == "reset":
                        return -1, None, ""
                    return int(fault.response), _status(int(fault.response), "injected fault"), "json"
            return self._route(method, path, query, body)

    def _route(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any, str]:
        if (m := RE_LOG.match(path)) and method == "GET":
            lines = self.logs.get((m.group(1), m.group(2)))
            if lines is None:
                return 404, _status(404, "no such pod"), "json"
            return 200, "".join(line + "\n" for line in lines), "text"
        if m := RE_OBJECT.match(path):
            plural = m.group("plural")
            if plural not in STORES:
                return 404, _status(404, f"the stand-in does not serve {method} {path}"), "json"
            ns, name, sub = m.group("ns") or "", m.group("name"), m.group("sub")
            if name is None:
                if method != "GET":
                    return 405, _status(405, "method not allowed"), "json"
                if query.get("watch") in ("true", "1"):
                    return 200, self._watch_events(plural, ns, query), "watch"
                return 200, self._list(plural, ns, query), "json"
            return apiserver.route_object(self, method, plural, ns, name, sub, query, body)
        return 404, _status(404, f"the stand-in does not serve {method} {path}"), "json"

def _status(code: int, message: str) -> dict:
    return {"apiVersion": "v1", "kind": "Status", "status": "Success" if code < 400 else "Failure",
            "message": message, "code": code}


def serve(standin: StandIn) -> ThreadingHTTPServer:
    """Serve ``standin`` on 127.0.0.1 (a free port) in a daemon thread; sets ``standin.url``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _do(self) -> None:
            split = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(split.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            code, payload, kind = standin.handle(self.command, split.path, query, dict(self.headers.items()), raw)
            if code < 0:  # drop the connection without an answer
                self.close_connection = True
                self.connection.shutdown(2)
                return
            data = (payload if kind == "text" else json.dumps(payload)).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "text/plain" if kind == "text" else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PATCH = do_DELETE = do_POST = do_PUT = _do

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    standin.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, name="kube-standin", daemon=True).start()
    return server
