"""The loopback stand-in with what the Python client's tests need beside it: core v1 Events
(``GET /api/v1/namespaces/NS/events``, what ``Client.events`` reads) and a hook run on every request,
so a test plays a controller when the client reads a log. Used by test_client_api.py and
test_readme_client.py; the stand-in itself is tests/kfp/kube_standin.py."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from helpers import serving
from kube_standin import NOW, Request, StandIn

RE_EVENTS = re.compile(r"^/api/v1/(?:namespaces/(?P<ns>[^/]+)/)?events$")


@dataclass
class EventsStandIn(StandIn):
    """A :class:`StandIn` that also serves Events (the ``kube_events`` list; ``events`` is the
    stand-in's own watch history) and runs ``on_request`` before answering each request."""

    kube_events: list[dict] = field(default_factory=list)
    on_request: Callable[[EventsStandIn, Request], None] | None = None

    def _route(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: Any
    ) -> tuple[int, Any, str]:
        if self.on_request is not None:
            self.on_request(self, self.requests[-1])
        m = RE_EVENTS.match(path)
        if m is not None and method == "GET":
            items = [e for e in self.kube_events if not m["ns"] or e["metadata"]["namespace"] == m["ns"]]
            listed = {"apiVersion": "v1", "kind": "EventList", "metadata": {"resourceVersion": str(self.rv)}}
            return 200, {**listed, "items": items}, "json"
        return super()._route(method, path, query, headers, body)

    def add_event(
        self,
        obj: dict,
        reason: str,
        message: str,
        *,
        time: str = NOW,
        type: str = "Normal",
        source: str = "",
        count: int = 1,
        first: str | None = None,
    ) -> dict:
        """An Event about ``obj`` as the API server stores one a controller recorded (core v1)."""
        meta = obj["metadata"]
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{meta['name']}.{len(self.kube_events):016x}",
                "namespace": meta["namespace"],
                "creationTimestamp": first or time,
            },
            "involvedObject": {
                "apiVersion": obj.get("apiVersion", "v1"),
                "kind": obj["kind"],
                "name": meta["name"],
                "namespace": meta["namespace"],
                "uid": meta.get("uid", ""),
            },
            "reason": reason,
            "message": message,
            "type": type,
            "count": count,
            "firstTimestamp": first or time,
            "lastTimestamp": time,
            "source": {"component": source},
            "reportingComponent": source,
            "eventTime": None,
        }
        with self.lock:
            self.kube_events.append(event)
        return event


@contextlib.contextmanager
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[EventsStandIn]:
    """An :class:`EventsStandIn` on loopback; TRAINSPEC_KUBE_API points the client at it."""
    with serving(EventsStandIn(), monkeypatch) as standin:
        yield standin


def record(api: StandIn, plural: str, obj: dict) -> None:
    """A controller's write of ``obj`` (already changed in place): a new resourceVersion and a watch event."""
    with api.lock:
        api._record(plural, obj["metadata"].get("namespace", ""), "MODIFIED", obj)


def pod(api: StandIn, trainjob: dict, index: int, *, phase: str, lines: list[str], node: str = "") -> dict:
    """A trainer pod of ``trainjob`` (node index ``index``), as JobSet names it, with its log."""
    name = trainjob["metadata"]["name"]
    ns = trainjob["metadata"]["namespace"]
    pod_name = f"{name}-node-0-{index}-{'abcde'[index % 5] * 5}"
    api.add_pod(ns, pod_name, name, phase=phase, ready=phase == "Running", index=index, lines=lines)
    made = api.pods[(ns, pod_name)]
    if node:
        made["spec"] = {"nodeName": node}
    return made
