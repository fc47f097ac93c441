"""What kube-apiserver 1.36 answers when it does not do what was asked: the bodies and headers the
stand-in (kube_standin.py) sends, built the way the server builds them.

* ``Status`` objects (``apimachinery/pkg/api/errors``): ``NewNotFound``, ``NewForbidden`` (the
  RBAC message of ``responsewriters.forbiddenMessage``), ``NewInvalid`` (``details.causes``, the
  aggregated message), ``NewApplyConflict`` (``FieldManagerConflict`` causes), ``NewConflict``,
  ``NewUnauthorized``, ``NewInternalError``, ``NewServiceUnavailable`` with ``retryAfterSeconds``
  (and its ``Retry-After`` header), ``NewTimeoutError``; ``details`` keeps only the fields the
  server sets (its JSON omits empty ones), ``details.kind`` is the resource (plural) except for
  ``Invalid``, where it is the Kind;
* plain text where the server answers with ``http.Error``: throttling (429, ``Retry-After: 1``,
  max-in-flight and API Priority and Fairness) and, from servers before the not-found handler
  answered with a Status, ``404 page not found`` for a path nothing serves;
* the 404 of 1.36's not-found handler for a resource no API (no CRD) serves: a Status with reason
  NotFound, "the server could not find the requested resource" and no details.

An answer is ``(code, payload, kind, headers)``: kind ``json`` (payload a dict), ``text`` or
``html`` (payload a str).
"""

from __future__ import annotations

from typing import Any

Answer = tuple[int, Any, str, dict[str, str]]
NOT_SERVED = "the server could not find the requested resource"
#: What a load balancer in front of the API server sends when the server behind it is gone.
BAD_GATEWAY_HTML = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
    "</center>\r\n</body>\r\n</html>\r\n"
)


def status(code: int, message: str, reason: str = "", details: dict | None = None) -> dict:
    """A ``Status`` as the server serialises it (empty ``reason``/``details`` left out)."""
    out: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if code < 400 else "Failure",
        "message": message,
    }
    if reason:
        out["reason"] = reason
    if details:
        out["details"] = {k: v for k, v in details.items() if v not in ("", None, [])}
    out["code"] = code
    return out


def group_resource(group: str, plural: str) -> str:
    """``GroupResource.String()``: ``trainjobs.trainer.kubeflow.org``, ``pods``."""
    return f"{plural}.{group}" if group else plural


def not_found(group: str, plural: str, name: str) -> Answer:
    """``NewNotFound``: the object is missing."""
    details = {"name": name, "group": group, "kind": plural}
    return 404, status(404, f'{group_resource(group, plural)} "{name}" not found', "NotFound", details), "json", {}


def namespace_not_found(namespace: str) -> Answer:
    """What an apply (create) into a namespace that does not exist gets from NamespaceLifecycle."""
    return not_found("", "namespaces", namespace)


def not_served(*, legacy_text: bool = False) -> Answer:
    """A path no API serves (no CRD for that group, version or resource)."""
    if legacy_text:
        return 404, "404 page not found\n", "text", {}
    return 404, status(404, NOT_SERVED, "NotFound"), "json", {}


def forbidden(user: str, verb: str, group: str, plural: str, sub: str, namespace: str, name: str) -> Answer:
    """RBAC's denial: ``NewForbidden`` with ``forbiddenMessage`` (no reason from the RBAC authorizer)."""
    resource = f"{plural}/{sub}" if sub else plural
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    why = f'User "{user}" cannot {verb} resource "{resource}" in API group "{group}" {scope}'
    subject = group_resource(group, plural) + (f' "{name}"' if name else "")
    details = {"name": name, "group": group, "kind": plural}
    return 403, status(403, f"{subject} is forbidden: {why}", "Forbidden", details), "json", {}


def unauthorized() -> Answer:
    """The authentication filter's answer to missing, expired or unknown credentials."""
    return 401, status(401, "Unauthorized", "Unauthorized"), "json", {}


def invalid(kind: str, group: str, name: str, causes: list[tuple[str, str, str]]) -> Answer:
    """``NewInvalid``: ``causes`` as ``(type, field, body)``, e.g. ``("FieldValueInvalid",
    "spec.trainer.numNodes", "Invalid value: -1: spec.trainer.numNodes in body should be ...")``."""
    errors = [f"{field}: {body}" for _, field, body in causes]
    aggregate = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details = {
        "name": name,
        "group": group,
        "kind": kind,
        "causes": [{"reason": t, "message": body, "field": field} for t, field, body in causes],
    }
    return 422, status(422, f'{qualified} "{name}" is invalid: {aggregate}', "Invalid", details), "json", {}


def apply_conflict(clashes: list[tuple[str, str]]) -> Answer:
    """``NewApplyConflict``: ``clashes`` as ``(manager, field path)``; Apply managers print as ``"name"``."""
    causes = [
        {"reason": "FieldManagerConflict", "message": f'conflict with "{m}"', "field": path} for m, path in clashes
    ]
    if len(clashes) == 1:
        message = f'Apply failed with 1 conflict: conflict with "{clashes[0][0]}": {clashes[0][1]}'
    else:
        lines = []
        for manager in sorted({m for m, _ in clashes}):
            lines.append(f'conflicts with "{manager}":')
            lines += [f"- {path}" for m, path in clashes if m == manager]
        message = f"Apply failed with {len(clashes)} conflicts: " + "\n".join(lines)
    return 409, status(409, message, "Conflict", {"causes": causes}), "json", {}


def modified(group: str, plural: str, name: str) -> Answer:
    """``NewConflict`` of an update with a stale resourceVersion."""
    message = (
        f'Operation cannot be fulfilled on {group_resource(group, plural)} "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )
    details = {"name": name, "group": group, "kind": plural}
    return 409, status(409, message, "Conflict", details), "json", {}


def throttled() -> Answer:
    """Max-in-flight or API Priority and Fairness rejecting a request: ``http.Error`` text."""
    headers = {
        "Retry-After": "1",
        "X-Content-Type-Options": "nosniff",
        "X-Kubernetes-PF-FlowSchema-UID": "7b2a-flowschema",
        "X-Kubernetes-PF-PriorityLevel-UID": "9c41-prioritylevel",
    }
    return 429, "Too many requests, please try again later.\n", "text", headers


def failure(code: int, message: str = "injected fault", group: str = "", plural: str = "", name: str = "") -> Answer:
    """The default answer of a status a test injects, as the server would send it."""
    if code == 401:
        return unauthorized()
    if code == 404:
        return not_found(group, plural, name) if name else not_served()
    if code == 409:
        return modified(group, plural, name)
    if code == 429:
        return throttled()
    if code == 500:
        details = {"causes": [{"message": message}]}
        return 500, status(500, f"Internal error occurred: {message}", "InternalError", details), "json", {}
    if code == 502:
        return 502, BAD_GATEWAY_HTML, "html", {}
    if code == 503:
        text = "the request has been made before all known HTTP paths have been installed, please try again"
        body = status(503, text, "ServiceUnavailable", {"retryAfterSeconds": 5})
        return 503, body, "json", {"Retry-After": "5"}
    if code == 504:
        text = "Timeout: request did not complete within requested timeout - context deadline exceeded"
        return 504, status(504, text, "Timeout"), "json", {}
    reason = {400: "BadRequest", 405: "MethodNotAllowed", 415: "UnsupportedMediaType", 422: "Invalid"}.get(code, "")
    return code, status(code, message, reason), "json", {}
