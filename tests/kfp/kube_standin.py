"""A Kubernetes API stand-in on loopback: the REST paths the launcher and the cluster commands use.

It records every request (method, path, query, headers, parsed body) so tests assert on what
the real ``kubernetes`` client sent. Behaviour is scripted, never timed. What it does like a
real API server:

* server-side apply (``application/apply-patch+yaml``): ``fieldManager`` required; each
  manager's applied configuration is kept and the object is their merge (list-maps merged by
  key: containers/replicatedJobs/env by ``name``, ownerReferences by ``uid``); a field another
  manager set to a different value is a 409 conflict unless ``force=true``; a re-apply that
  changes nothing keeps the ``resourceVersion``; ``metadata.managedFields`` lists the managers;
* ``fieldValidation=Strict`` for the CRD kinds, against the CRDs trainspec ships: an unknown
  field is rejected as kube-apiserver 1.36 does (HTTP 500, "failed to create typed patch
  object (...): .spec.trainer.gpus: field not declared in schema", see
  shared/apiserver-verdicts/07-tj-unknown-field.yaml);
* ``dryRun=All``: the answer without storing anything;
* the status subresource: writes to the object ignore ``status``; ``PATCH .../status``
  (merge patch) changes only ``status`` (the test plays the controller);
* resource versions, lists and watches (``watch=true&resourceVersion=N``: the events after N,
  then the watch ends as at its timeout; ``on_watch`` runs first, one controller step);
* foreground deletion: ``deletionTimestamp`` and the ``foregroundDeletion`` finalizer, the
  dependents (the JobSet's pods, the owned Workloads) deleted first, then the object.

What it does not do is listed in docs/cluster.md. ``status_script`` (statuses given to a
TrainJob on successive GETs), ``faults`` (responses instead of the real ones) and ``pods`` /
``logs`` script the launcher tests.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import kube_answers as answers

TRAINER = "/apis/trainer.kubeflow.org/v1alpha1"
RE_OBJECT = re.compile(
    r"^/apis?/(?P<gv>[^/]+(?:/v[^/]+)?)(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[a-z]+)"
    r"(?:/(?P<name>[^/]+)(?:/(?P<sub>status))?)?$"
)
RE_LOG = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/log$")
NOW = "2026-01-01T00:00:00Z"
#: plural -> (apiVersion, kind, namespaced, CRD file in trainspec/check/schema/data or None)
STORES = {
    "trainjobs": ("trainer.kubeflow.org/v1alpha1", "TrainJob", True, "trainer.kubeflow.org_trainjobs.json"),
    "clustertrainingruntimes": (
        "trainer.kubeflow.org/v1alpha1",
        "ClusterTrainingRuntime",
        False,
        "trainer.kubeflow.org_clustertrainingruntimes.json",
    ),
    "trainingruntimes": (
        "trainer.kubeflow.org/v1alpha1",
        "TrainingRuntime",
        True,
        "trainer.kubeflow.org_trainingruntimes.json",
    ),
    "workloads": ("kueue.x-k8s.io/v1beta2", "Workload", True, "kueue.x-k8s.io_workloads.json"),
    # The other engines' job kinds the KFP launcher applies (kept in StandIn.objects).
    "rayjobs": ("ray.io/v1", "RayJob", True, "ray.io_rayjobs.json"),
    "pytorchjobs": ("kubeflow.org/v1", "PyTorchJob", True, "kubeflow.org_pytorchjobs.json"),
    "jaxjobs": ("kubeflow.org/v1", "JAXJob", True, "kubeflow.org_jaxjobs.json"),
    "mpijobs": ("kubeflow.org/v2beta1", "MPIJob", True, "kubeflow.org_mpijobs.json"),
    "persistentvolumeclaims": ("v1", "PersistentVolumeClaim", True, None),
    "pods": ("v1", "Pod", True, None),
    # What submit applies beside the job (kept in StandIn.objects); a test takes a kind out of
    # service, as a cluster without its CRD, with StandIn.unserved.
    "configmaps": ("v1", "ConfigMap", True, None),
    "serviceaccounts": ("v1", "ServiceAccount", True, None),
    "roles": ("rbac.authorization.k8s.io/v1", "Role", True, None),
    "rolebindings": ("rbac.authorization.k8s.io/v1", "RoleBinding", True, None),
    "podmonitors": ("monitoring.coreos.com/v1", "PodMonitor", True, None),
}
#: The job kinds: ``status_script`` plays their controller, and their first apply sets ``applied``.
JOB_PLURALS = frozenset({"trainjobs", "rayjobs", "pytorchjobs", "jaxjobs", "mpijobs"})
LIST_KEYS = {"ownerReferences": "uid", "managedFields": "manager"}
CRD_DATA = Path(__file__).resolve().parents[2] / "trainspec" / "check" / "schema" / "data"
_SCHEMAS: dict[str, dict] = {}


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
    #: The answer to send (kube_answers.Answer); None: what the server sends for that status.
    answer: tuple | None = None


@dataclass
class StandIn:
    trainjobs: dict[tuple[str, str], dict] = field(default_factory=dict)
    runtimes: dict[tuple[str, str, str], dict] = field(default_factory=dict)  # (kind, namespace, name)
    pods: dict[tuple[str, str], dict] = field(default_factory=dict)
    claims: dict[tuple[str, str], dict] = field(default_factory=dict)
    workloads: dict[tuple[str, str], dict] = field(default_factory=dict)
    logs: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    #: The other kinds' objects: plural -> (namespace, name) -> object.
    objects: dict[str, dict[tuple[str, str], dict]] = field(default_factory=dict)
    #: Plurals the cluster does not serve (no CRD): every request gets kube-apiserver's answer for
    #: a path it does not know (a NotFound Status without details).
    unserved: set[str] = field(default_factory=set)
    #: The log of each pod's previous container instance (``previous=true``), when it restarted.
    previous_logs: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    #: Statuses given to a job object (any of JOB_PLURALS) on successive GETs; the last one stays.
    status_script: list[dict] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    #: (resourceVersion, plural, namespace, event type, object copy), oldest first.
    events: list[tuple[int, str, str, str, dict]] = field(default_factory=list)
    #: Per object path, each field manager's applied configuration.
    applied_configs: dict[str, dict[str, dict]] = field(default_factory=dict)
    #: Runs (with the lock held) when a watch arrives, before its events are sent: a controller step.
    on_watch: Callable[[StandIn], None] | None = None
    #: Foreground deletion finishes at once (dependents first); False keeps the object with its
    #: deletionTimestamp until the next GET of it.
    gc_immediately: bool = True
    rv: int = 100
    #: Set when a TrainJob is first applied (a test waits on it before sending SIGTERM).
    applied: threading.Event = field(default_factory=threading.Event)
    lock: threading.RLock = field(default_factory=threading.RLock)
    url: str = ""
    _deleting: set[str] = field(default_factory=set)
    #: The namespaces that exist; None: any namespace exists (the default, permissive).
    namespaces: set[str] | None = None
    #: RBAC denials: (verb, resource such as "trainjobs" or "pods/log", namespace or None: any, user).
    denied: list[tuple[str, str, str | None, str]] = field(default_factory=list)
    #: Answer paths nothing serves with the plain-text ``404 page not found`` of older servers.
    legacy_not_found: bool = False

    # --- helpers for tests ----------------------------------------------------------------

    def add_cluster_runtime(self, name: str) -> None:
        self.runtimes[("ClusterTrainingRuntime", "", name)] = {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "ClusterTrainingRuntime",
            "metadata": {"name": name, "resourceVersion": "1"},
            "spec": {
                "template": {
                    "spec": {
                        "replicatedJobs": [
                            {
                                "name": "node",
                                "template": {
                                    "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                                    "spec": {
                                        "template": {
                                            "spec": {
                                                "containers": [
                                                    {
                                                        "name": "node",
                                                        "image": "img",
                                                        "resources": {"requests": {"cpu": "2", "memory": "4Gi"}},
                                                    }
                                                ]
                                            }
                                        }
                                    },
                                },
                            }
                        ]
                    }
                }
            },
        }

    def add_pod(
        self,
        namespace: str,
        name: str,
        trainjob: str,
        *,
        phase: str = "Succeeded",
        lines: list[str] | None = None,
        index: int = 0,
        created: str = NOW,
        restarts: int = 0,
        ready: bool = False,
        uid: str | None = None,
    ) -> None:
        with self.lock:
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "uid": uid or f"uid-{name}",
                    "creationTimestamp": created,
                    "labels": {
                        "jobset.sigs.k8s.io/jobset-name": trainjob,
                        "jobset.sigs.k8s.io/replicatedjob-name": "node",
                        "batch.kubernetes.io/job-completion-index": str(index),
                    },
                },
                "status": {
                    "phase": phase,
                    "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                    "containerStatuses": [{"name": "node", "restartCount": restarts}],
                },
            }
            self._record("pods", namespace, "MODIFIED" if (namespace, name) in self.pods else "ADDED", pod)
            self.pods[(namespace, name)] = pod
            if lines is not None:
                self.logs[(namespace, name)] = lines

    def add_workload(self, trainjob: dict, *, queue: str, conditions: list[dict]) -> dict:
        """The Workload Kueue makes for a TrainJob (owned by it, labelled with its uid)."""
        meta = trainjob["metadata"]
        with self.lock:
            name = f"trainjob-{meta['name']}-3f2a9"
            workload = {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "Workload",
                "metadata": {
                    "name": name,
                    "namespace": meta["namespace"],
                    "uid": str(uuid.uuid4()),
                    "creationTimestamp": NOW,
                    "labels": {"kueue.x-k8s.io/job-uid": meta["uid"]},
                    "ownerReferences": [
                        {
                            "apiVersion": "trainer.kubeflow.org/v1alpha1",
                            "kind": "TrainJob",
                            "name": meta["name"],
                            "uid": meta["uid"],
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": {"queueName": queue, "active": True, "podSets": []},
                "status": {"conditions": conditions},
            }
            self._record("workloads", meta["namespace"], "ADDED", workload)
            self.workloads[(meta["namespace"], name)] = workload
            return workload

    def fail(self, method: str, pattern: str, *responses: int | str) -> None:
        """Answer the next requests matching ``method`` and ``pattern`` with these statuses (the
        bodies the server sends for them, kube_answers.failure) or ``"reset"`` (no answer)."""
        for response in responses:
            self.faults.append(Fault(method, pattern, response))

    def answer(self, method: str, pattern: str, code: int, payload: Any, kind: str = "json", **headers: str) -> None:
        """Answer the next matching request with exactly this (e.g. HTML, an empty body, non-JSON)."""
        self.faults.append(Fault(method, pattern, code, answer=(code, payload, kind, dict(headers))))

    def remove_crds(self, *plurals: str) -> None:
        """The cluster without these CRDs (e.g. ``"trainjobs"``): their paths are not served."""
        self.unserved.update(plurals)

    def declare_namespaces(self, *names: str) -> None:
        """Only these namespaces (and those of objects already stored) exist from now on."""
        self.namespaces = set(names) | {key[-2] for store in (self.trainjobs, self.claims) for key in store}

    def deny(self, verb: str, resource: str, namespace: str | None = None, user: str = "dev@example.com") -> None:
        """RBAC without ``verb`` on ``resource`` (``trainjobs``, ``pods/log``) for ``user``."""
        self.denied.append((verb, resource, namespace, user))

    def invalid(self, pattern: str, *causes: tuple[str, str, str]) -> None:
        """The next apply matching ``pattern`` fails validation (422) with these ``(type, field, body)``."""
        self.faults.append(Fault("PATCH", pattern, 422, answer=("invalid", *causes)))

    def sent(self, method: str | None = None, pattern: str = "") -> list[Request]:
        with self.lock:
            return [r for r in self.requests if (method is None or r.method == method) and re.search(pattern, r.path)]

    # --- storage --------------------------------------------------------------------------

    def _store(self, plural: str) -> tuple[dict, Callable[[str, str], Any]]:
        if plural == "trainjobs":
            return self.trainjobs, lambda ns, name: (ns, name)
        if plural == "clustertrainingruntimes":
            return self.runtimes, lambda ns, name: ("ClusterTrainingRuntime", "", name)
        if plural == "trainingruntimes":
            return self.runtimes, lambda ns, name: ("TrainingRuntime", ns, name)
        store = {"workloads": self.workloads, "persistentvolumeclaims": self.claims, "pods": self.pods}.get(plural)
        if store is None:
            store = self.objects.setdefault(plural, {})
        return store, lambda ns, name: (ns, name)

    def _items(self, plural: str, ns: str) -> list[dict]:
        store, _ = self._store(plural)
        out = []
        for key, obj in store.items():
            if plural.endswith("runtimes") and key[0] != STORES[plural][1]:
                continue
            obj_ns = (obj.get("metadata") or {}).get("namespace") or (key[-2] if len(key) > 1 else "")
            if ns and STORES[plural][2] and obj_ns != ns:
                continue
            out.append(obj)
        return out

    def _record(self, plural: str, ns: str, kind: str, obj: dict) -> None:
        self.rv += 1
        if kind != "DELETED":
            obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        self.events.append((self.rv, plural, ns, kind, copy.deepcopy(obj)))

    # --- serving --------------------------------------------------------------------------

    def handle(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], raw: bytes
    ) -> tuple[int, Any, str]:
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
                    return self._fault(fault, method, path, query)
            if (refusal := self._rbac(method, path, query)) is not None:
                return refusal
            return self._route(method, path, query, headers, body)

    def _about(self, method: str, path: str, query: dict[str, str]) -> tuple[str, str, str, str, str, str]:
        """(verb, group, plural, subresource, namespace, name) of a request, as the authorizer sees it."""
        if m := RE_LOG.match(path):
            return "get", "", "pods", "log", m.group(1), m.group(2)
        m = RE_OBJECT.match(path)
        if m is None:
            return method.lower(), "", "", "", "", ""
        group = m.group("gv").rpartition("/")[0] if "/" in m.group("gv") else ""
        name = m.group("name") or ""
        verb = {"PATCH": "patch", "DELETE": "delete", "POST": "create", "PUT": "update"}.get(method, "get")
        if method == "GET" and not name:
            verb = "watch" if query.get("watch") in ("true", "1") else "list"
        return verb, group, m.group("plural"), m.group("sub") or "", m.group("ns") or "", name

    def _rbac(self, method: str, path: str, query: dict[str, str]) -> tuple | None:
        verb, group, plural, sub, ns, name = self._about(method, path, query)
        resource = f"{plural}/{sub}" if sub else plural
        for d_verb, d_resource, d_ns, user in self.denied:
            if (d_verb, d_resource) == (verb, resource) and d_ns in (None, ns):
                return answers.forbidden(user, verb, group, plural, sub, ns, name)
        return None

    def _fault(self, fault: Fault, method: str, path: str, query: dict[str, str]) -> tuple:
        verb, group, plural, sub, ns, name = self._about(method, path, query)
        if fault.answer is not None and fault.answer[0] == "invalid":
            kind = STORES[plural][1] if plural in STORES else plural
            return answers.invalid(kind, group, name, list(fault.answer[1:]))
        if fault.answer is not None:
            return fault.answer
        code = int(fault.response)
        if code == 403:
            return answers.forbidden("dev@example.com", verb, group, plural, sub, ns, name)
        return answers.failure(code, "injected fault", group, plural, name)

    def _route(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: Any
    ) -> tuple[int, Any, str]:
        if (m := RE_LOG.match(path)) and method == "GET":
            return self._log(m.group(1), m.group(2), query)
        if (found := self._namespace_or_discovery(method, path)) is not None:
            return found
        m = RE_OBJECT.match(path)
        if m is not None and m.group("plural") in self.unserved:
            return answers.not_served(legacy_text=self.legacy_not_found)
        if m is None or m.group("plural") not in STORES:
            return 404, _status(404, f"the stand-in does not serve {method} {path}"), "json"
        plural, ns, name, sub = m.group("plural"), m.group("ns") or "", m.group("name"), m.group("sub")
        if name is None:
            if method != "GET":
                return 405, _status(405, "the stand-in serves no collection writes"), "json"
            if query.get("watch") in ("true", "1"):
                return 200, self._watch(plural, ns, query), "watch"
            return 200, self._list(plural, ns, query), "json"
        store, key_of = self._store(plural)
        key = key_of(ns, name)
        obj = store.get(key)
        if method == "GET":
            if obj is None:
                return 404, _not_found(plural, name), "json"
            if path in self._deleting:  # foreground deletion finishing now
                self._finish_delete(plural, ns, key, path)
                return 404, _not_found(plural, name), "json"
            if plural in JOB_PLURALS and self.status_script:
                obj["status"] = self.status_script.pop(0) if len(self.status_script) > 1 else self.status_script[0]
            return 200, obj, "json"
        if method == "PATCH" and sub == "status":
            if obj is None:
                return 404, _not_found(plural, name), "json"
            obj["status"] = _merge_patch(obj.get("status") or {}, (body or {}).get("status") or {})
            self._record(plural, ns, "MODIFIED", obj)
            return 200, obj, "json"
        if method == "PATCH":
            return self._apply(plural, ns, name, key, store, path, query, headers, body)
        if method == "DELETE":
            if obj is None:
                return 404, _not_found(plural, name), "json"
            if ((body or {}).get("propagationPolicy") or "Background") != "Foreground":
                self._finish_delete(plural, ns, key, path)
                return 200, _status(200, "deleted"), "json"
            meta = obj["metadata"]
            meta["deletionTimestamp"] = NOW
            meta["finalizers"] = [*meta.get("finalizers", []), "foregroundDeletion"]
            self._record(plural, ns, "MODIFIED", obj)
            answer = copy.deepcopy(obj)
            self._delete_dependents(ns, obj)
            if self.gc_immediately:
                self._finish_delete(plural, ns, key, path)
            else:
                self._deleting.add(path)
            return 200, answer, "json"
        return 405, _status(405, f"the stand-in does not serve {method} {path}"), "json"

    def _log(self, ns: str, pod: str, query: dict[str, str]) -> tuple[int, Any, str]:
        """A pod's log as kubelet serves it: ``previous``, ``sinceSeconds`` (against the real clock,
        as the client computes it), ``tailLines``, and ``timestamps`` (the lines are stored with
        theirs; without ``timestamps=true`` they are cut off)."""
        if (ns, pod) not in self.logs:
            return 404, _status(404, "no such pod"), "json"
        true = ("true", "True", "1")
        lines = self.logs[(ns, pod)]
        if query.get("previous") in true:
            before = self.previous_logs.get((ns, pod))
            if before is None:
                container = query.get("container", "")
                message = f'previous terminated container "{container}" in pod "{pod}" not found'
                return 400, _status(400, message, "BadRequest"), "json"
            lines = before
        if query.get("sinceSeconds"):
            import time
            from datetime import datetime, timezone

            cutoff = time.time() - int(query["sinceSeconds"])

            def recent(line: str) -> bool:
                try:
                    stamp = datetime.strptime(line[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
                except ValueError:
                    return True
                return stamp.timestamp() >= cutoff

            lines = [line for line in lines if recent(line)]
        if query.get("tailLines"):
            lines = lines[-int(query["tailLines"]) :] if int(query["tailLines"]) > 0 else []
        if query.get("timestamps") not in true:
            lines = [re.sub(r"^\d{4}-\d\d-\d\dT\S+Z ", "", line) for line in lines]
        return 200, "".join(line + "\n" for line in lines), "text"

    def _namespace_or_discovery(self, method: str, path: str) -> tuple | None:
        """``GET /api/v1/namespaces/NS`` and API discovery (``/apis/G``, ``/apis/G/V``); None for other paths."""
        if method != "GET":
            return None
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)", path):
            if self.namespaces is not None and m.group(1) not in self.namespaces:
                return answers.not_found("", "namespaces", m.group(1))
            meta = {"name": m.group(1), "uid": f"uid-ns-{m.group(1)}", "creationTimestamp": NOW}
            return (
                200,
                {"apiVersion": "v1", "kind": "Namespace", "metadata": meta, "status": {"phase": "Active"}},
                "json",
            )
        m = re.fullmatch(r"/apis/([^/]+)(?:/([^/]+))?", path)
        if m is None:
            return None
        group, version = m.group(1), m.group(2)
        served = [(p, v) for p, v in STORES.items() if v[0].startswith(group + "/") and p not in self.unserved]
        versions = sorted({v[0].split("/")[1] for _, v in served})
        if version is None and versions:
            entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
            return 200, {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": entries}, "json"
        resources = [
            {
                "name": p,
                "singularName": v[1].lower(),
                "namespaced": v[2],
                "kind": v[1],
                "verbs": ["get", "list", "patch"],
            }
            for p, v in served
            if v[0] == f"{group}/{version}"
        ]
        if version is None or not resources:
            return answers.not_served(legacy_text=self.legacy_not_found)
        listing = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}"}
        return 200, listing | {"resources": resources}, "json"

    def _finish_delete(self, plural: str, ns: str, key: Any, path: str) -> None:
        store, _ = self._store(plural)
        obj = store.pop(key, None)
        self._deleting.discard(path)
        self.applied_configs.pop(path, None)
        if obj is not None:
            self._record(plural, ns, "DELETED", obj)

    def _delete_dependents(self, ns: str, owner: dict) -> None:
        """The garbage collector's part of a foreground deletion: dependents before the owner."""
        uid, name = owner["metadata"].get("uid"), owner["metadata"]["name"]
        for key, pod in list(self.pods.items()):
            labels = pod["metadata"].get("labels") or {}
            if key[0] == ns and labels.get("jobset.sigs.k8s.io/jobset-name") == name:
                del self.pods[key]
                self._record("pods", ns, "DELETED", pod)
        for key, workload in list(self.workloads.items()):
            if any(r.get("uid") == uid for r in workload["metadata"].get("ownerReferences") or []):
                del self.workloads[key]
                self._record("workloads", ns, "DELETED", workload)

    def _apply(
        self,
        plural: str,
        ns: str,
        name: str,
        key: Any,
        store: dict,
        path: str,
        query: dict[str, str],
        headers: dict[str, str],
        body: Any,
    ) -> tuple[int, Any, str]:
        api_version, kind, _, crd = STORES[plural]
        if headers.get("Content-Type", "").split(";")[0] != "application/apply-patch+yaml":
            return 415, _status(415, "the stand-in serves only server-side apply patches"), "json"
        manager = query.get("fieldManager")
        if not manager:
            return (
                422,
                _status(
                    422,
                    'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
                    "Invalid",
                ),
                "json",
            )
        if key not in store and STORES[plural][2] and self.namespaces is not None and ns not in self.namespaces:
            return answers.namespace_not_found(ns)  # NamespaceLifecycle admission, before anything else
        where = f"{ns}/{name}" if STORES[plural][2] else f"/{name}"
        gvk = f"{api_version}, Kind={kind}" if "/" in api_version else f"/{api_version}, Kind={kind}"
        if query.get("fieldValidation") == "Strict" and crd:
            unknown = unknown_field(body, _schema(crd))
            if unknown:
                return (
                    500,
                    _status(
                        500,
                        f"failed to create typed patch object ({where}; {gvk}): {unknown}: "
                        "field not declared in schema",
                        "",
                    ),
                    "json",
                )
        config = copy.deepcopy(body)
        config.pop("status", None)  # the status subresource: the main resource's writes ignore it
        configs = dict(self.applied_configs.get(path) or {})
        if query.get("force") != "true":
            clashes = [(m, at) for m, theirs in configs.items() if m != manager for at in _conflicts(theirs, config)]
            if clashes:
                return answers.apply_conflict(clashes)
        configs[manager] = config
        old = store.get(key)
        merged: dict = {}
        for each in configs.values():
            merged = _merge(merged, each)
        meta = merged.setdefault("metadata", {})
        old_meta = (old or {}).get("metadata") or {}
        meta["uid"] = old_meta.get("uid") or str(uuid.uuid4())
        meta["creationTimestamp"] = old_meta.get("creationTimestamp") or NOW
        if STORES[plural][2]:
            meta["namespace"] = ns
        meta["managedFields"] = [
            {
                "manager": m,
                "operation": "Apply",
                "apiVersion": api_version,
                "fieldsType": "FieldsV1",
                "fieldsV1": _fields(c),
            }
            for m, c in configs.items()
        ]
        if old is not None:
            # Writers other than apply (the tests' direct edits, the launcher tests' fixtures) keep their fields.
            merged = (
                _merge({k: v for k, v in old.items() if k != "status"}, merged)
                if path not in self.applied_configs
                else merged
            )
            merged["status"] = old.get("status") or {}
            # Deletion's fields belong to the server: an apply to an object being deleted is accepted
            # and leaves it terminating (kube-apiserver keeps deletionTimestamp and the finalizers).
            for server_field in ("deletionTimestamp", "deletionGracePeriodSeconds", "finalizers"):
                if server_field in old_meta:
                    merged["metadata"][server_field] = copy.deepcopy(old_meta[server_field])
        else:
            merged["status"] = {}
        unchanged = old is not None and _same(old, merged)
        if query.get("dryRun") == "All":
            answer = copy.deepcopy(old if unchanged else merged)
            if not unchanged:
                answer["metadata"]["resourceVersion"] = old_meta.get("resourceVersion") or "0"
            return (200 if old is not None else 201), answer, "json"
        if unchanged:
            return 200, old, "json"
        self.applied_configs[path] = configs
        merged["metadata"]["generation"] = int(old_meta.get("generation") or 0) + (
            old is None or old.get("spec") != merged.get("spec")
        )
        store[key] = merged
        self._record(plural, ns, "ADDED" if old is None else "MODIFIED", merged)
        if plural in JOB_PLURALS:
            self.applied.set()
        return (201 if old is None else 200), merged, "json"

    def _list(self, plural: str, ns: str, query: dict[str, str]) -> dict:
        api_version, kind, _, _ = STORES[plural]
        items = [o for o in self._items(plural, ns) if _selected(o, query)]
        if plural == "pods":  # the launcher tests: pods of TrainJobs that exist only (a GC stand-in)
            items = [
                p
                for p in items
                if (
                    p["metadata"].get("namespace"),
                    (p["metadata"].get("labels") or {}).get("jobset.sigs.k8s.io/jobset-name"),
                )
                in self.trainjobs
                or "jobset.sigs.k8s.io/jobset-name" not in query.get("labelSelector", "")
            ]
        return {
            "apiVersion": api_version,
            "kind": f"{kind}List",
            "metadata": {"resourceVersion": str(self.rv)},
            "items": items,
        }

    def _watch(self, plural: str, ns: str, query: dict[str, str]) -> str:
        if self.on_watch is not None:
            self.on_watch(self)
        since = int(query.get("resourceVersion") or 0)
        lines = [
            json.dumps({"type": kind, "object": obj})
            for rv, p, ev_ns, kind, obj in self.events
            if rv > since and p == plural and (not ns or ev_ns == ns) and _selected(obj, query)
        ]
        return "".join(line + "\n" for line in lines)


def _selected(obj: dict, query: dict[str, str]) -> bool:
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    wanted = dict(kv.split("=", 1) for kv in query.get("labelSelector", "").split(",") if kv)
    fields = dict(kv.split("=", 1) for kv in query.get("fieldSelector", "").split(",") if kv)
    values = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace")}
    return all(labels.get(k) == v for k, v in wanted.items()) and all(values.get(k) == v for k, v in fields.items())


def _schema(crd_file: str) -> dict:
    if crd_file not in _SCHEMAS:
        crd = json.loads((CRD_DATA / crd_file).read_text(encoding="utf-8"))
        version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
        _SCHEMAS[crd_file] = version["schema"]["openAPIV3Schema"]
    return _SCHEMAS[crd_file]


def unknown_field(obj: Any, schema: dict, path: str = "") -> str:
    """The first field the structural schema does not declare, in apply's path form
    (``.spec.template.spec.replicatedJobs[name="node"].x``), or "" when there is none."""
    if schema.get("x-kubernetes-preserve-unknown-fields") or not isinstance(obj, (dict, list)):
        return ""
    if isinstance(obj, list):
        items = schema.get("items") or {}
        keys = schema.get("x-kubernetes-list-map-keys") or []
        for i, item in enumerate(obj):
            mark = ",".join(f'{k}="{item.get(k)}"' for k in keys) if keys and isinstance(item, dict) else str(i)
            if found := unknown_field(item, items, f"{path}[{mark}]"):
                return found
        return ""
    props = schema.get("properties")
    if props is None:
        return ""  # a map (additionalProperties) or an untyped object: anything goes
    for key, value in obj.items():
        if path == "" and key == "metadata":
            continue  # ObjectMeta is checked by the server itself, not the CRD schema
        if key not in props:
            return f"{path}.{key}"
        if found := unknown_field(value, props[key], f"{path}.{key}"):
            return found
    return ""


def _key_of(item: Any, name: str) -> Any:
    if not isinstance(item, dict):
        return None
    return item.get(LIST_KEYS.get(name, "name"))


def _merge(base: Any, top: Any, name: str = "") -> Any:
    """Apply's merge of two configurations: maps by key, list-maps by their key, other lists replaced."""
    if isinstance(base, dict) and isinstance(top, dict):
        out = dict(base)
        for key, value in top.items():
            out[key] = _merge(base[key], value, key) if key in base else copy.deepcopy(value)
        return out
    if isinstance(base, list) and isinstance(top, list) and all(_key_of(i, name) for i in base + top):
        out = [copy.deepcopy(i) for i in base]
        index = {_key_of(i, name): n for n, i in enumerate(out)}
        for item in top:
            k = _key_of(item, name)
            if k in index:
                out[index[k]] = _merge(out[index[k]], item, name)
            else:
                index[k] = len(out)
                out.append(copy.deepcopy(item))
        return out
    return copy.deepcopy(top)


def _conflicts(theirs: Any, mine: Any, path: str = "", name: str = "") -> list[str]:
    """Every leaf both configurations set to different values (apply's conflicts), in order."""
    if isinstance(theirs, dict) and isinstance(mine, dict):
        out = []
        for key in [k for k in theirs if k in mine]:
            if (path == "" and key in ("apiVersion", "kind")) or (path == ".metadata" and key in ("name", "namespace")):
                continue
            out += _conflicts(theirs[key], mine[key], f"{path}.{key}", key)
        return out
    if isinstance(theirs, list) and isinstance(mine, list) and all(_key_of(i, name) for i in theirs + mine):
        ours = {_key_of(i, name): i for i in mine}  # a list-map: entries of other keys never clash
        keyed = [(item, ours.get(_key_of(item, name))) for item in theirs]
        return [
            c
            for item, other in keyed
            if other is not None
            for c in _conflicts(item, other, _entry(path, item, name), name)
        ]
    return [] if theirs == mine else [path]


def _entry(path: str, item: dict, name: str) -> str:
    """A list-map entry in apply's path form: ``.spec.containers[name="node"]``."""
    key = LIST_KEYS.get(name, "name")
    return f'{path}[{key}="{item.get(key)}"]'


def _fields(config: Any) -> dict:
    """``fieldsV1`` of a configuration: ``f:`` per field, ``k:{...}`` per list-map entry."""
    if isinstance(config, dict):
        return {f"f:{k}": _fields(v) for k, v in config.items() if k not in ("apiVersion", "kind")}
    if isinstance(config, list) and config and all(isinstance(i, dict) and "name" in i for i in config):
        return {f"k:{json.dumps({'name': i['name']}, separators=(',', ':'))}": _fields(i) for i in config}
    return {}


def _same(old: dict, new: dict) -> bool:
    def strip(obj: dict) -> dict:
        out = copy.deepcopy(obj)
        for key in ("resourceVersion", "generation", "managedFields"):
            out.get("metadata", {}).pop(key, None)
        return out

    return strip(old) == strip(new)


def _merge_patch(base: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


def _not_found(plural: str, name: str) -> dict:
    """``NewNotFound``'s Status (details name the object and its resource)."""
    return answers.not_found(STORES[plural][0].rpartition("/")[0], plural, name)[1]


def _status(code: int, message: str, reason: str | None = None) -> dict:
    status = {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Success" if code < 400 else "Failure",
        "message": message,
        "code": code,
    }
    if reason:
        status["reason"] = reason
    return status


def serve(standin: StandIn) -> ThreadingHTTPServer:
    """Serve ``standin`` on 127.0.0.1 (a free port) in a daemon thread; sets ``standin.url``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # As Go's net/http (kube-apiserver) does: TCP_NODELAY. Without it the headers and the body
        # go out as two small writes and every keep-alive request waits out a delayed ACK (~40 ms).
        disable_nagle_algorithm = True

        def _do(self) -> None:
            split = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(split.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            # (code, payload, kind) or, with headers to send, (code, payload, kind, headers)
            code, payload, kind, *extra = standin.handle(
                self.command, split.path, query, dict(self.headers.items()), raw
            )
            if code < 0:  # drop the connection without an answer
                self.close_connection = True
                self.connection.shutdown(2)
                return
            data = (payload if kind in ("text", "html", "watch") else json.dumps(payload)).encode("utf-8")
            self.send_response(code)
            content_type = {
                "text": "text/plain; charset=utf-8",
                "html": "text/html",
                "watch": "application/json;stream=watch",
            }.get(kind, "application/json")
            self.send_header("Content-Type", content_type)
            for name, value in (extra[0] if extra else {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PATCH = do_DELETE = do_POST = do_PUT = _do

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    standin.url = f"http://127.0.0.1:{server.server_address[1]}"
    # A short poll interval: shutting the stand-in down after each test waits for one poll.
    threading.Thread(target=server.serve_forever, args=(0.05,), name="kube-standin", daemon=True).start()
    return server
