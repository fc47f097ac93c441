"""Answers that refuse a request: credentials (401), RBAC (403), apply conflicts (409), invalid objects
(422, strict apply's 500), objects being deleted, and throttling or failing servers after retries."""

from __future__ import annotations

import re
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Related
from trainspec.kube.errors.missing import namespace_diagnostic
from trainspec.kube.errors.model import Context, Target, diag

REFUSED_HINT = (
    "the cluster's CRDs or webhooks disagree with the manifest: check the cluster's Trainer version "
    "against --target (trainspec check)"
)


def unauthorized(ctx: Context) -> Diagnostic:
    """TS719: the credentials were refused (401): authentication, which a new login fixes, not RBAC."""
    how = {
        "url": "TRAINSPEC_KUBE_API sends no credentials: point it at a kubectl proxy, which adds them",
        "certificate": "the kubeconfig's client certificate is expired or not one the cluster trusts: renew it",
        "token": "log in again: the kubeconfig's token (or the one its exec plugin or OIDC login fetched) "
        "is expired or revoked; rerun the login or credentials command the exec plugin uses",
    }.get(
        ctx.auth,
        "no credentials were sent: the kubeconfig's user has none, or its exec plugin (or OIDC login) "
        "produced none: run its login again",
    )
    if ctx.auth == "url":
        whose = f"the request to TRAINSPEC_KUBE_API ({ctx.context})"
    else:
        whose = f"the credentials of context {ctx.context}" if ctx.context else "the credentials"
    return diag(
        codes.UNAUTHORIZED,
        ctx,
        f"the cluster rejected {whose} (HTTP 401 Unauthorized) to {ctx.what}: credentials missing, expired or invalid",
        f"{how}; kubectl auth whoami checks them (this is authentication, not RBAC)",
    )


_RBAC = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) resource "(?P<res>[^"]+)" in API group "(?P<group>[^"]*)"'
    r'(?: in the namespace "(?P<ns>[^"]*)"| at the cluster scope)(?:: (?P<why>.*))?'
)


def forbidden(message: str, target: Target | None, ctx: Context) -> Diagnostic:
    """403: RBAC (TS717, with who lacks which verb on what, and the rule that grants it), a namespace
    being deleted (TS720), or an admission webhook, quota or policy refusing the object (TS714)."""
    if "because it is being terminated" in message:
        ending = re.search(r'namespace "?([^" ]+)"? because', message)
        return namespace_diagnostic(ending.group(1) if ending else "", ctx, terminating=True)
    m = _RBAC.search(message)
    if m is None:  # an admission webhook, a quota, a policy: a refusal of this object
        quota = "exceeded quota" in message
        hint = "the namespace's ResourceQuota is used up (kubectl describe resourcequota -n NS)" if quota else ""
        return refused(403, message, [], ctx, hint=hint)
    user, verb, res, group, ns = m["user"], m["verb"], m["res"], m["group"], m["ns"]
    plural, _, sub = res.partition("/")
    full = f"{plural}.{group}" if group else plural
    scope = f"-n {ns}" if ns else "--all-namespaces"
    can_i = f"kubectl auth can-i {verb} {full}{f' --subresource={sub}' if sub else ''} {scope}"
    who = f"--serviceaccount={user.split(':', 2)[2]}" if user.startswith("system:serviceaccount:") else f"--user={user}"
    role = "role" if ns else "clusterrole"
    rule = f'{{apiGroups: ["{group}"], resources: ["{res}"], verbs: ["{verb}"]}}'
    return diag(
        codes.RBAC_DENIED,
        ctx,
        f'not allowed to {ctx.what}: user "{user}" may not {verb} {res if not group else f"{res} in API group {group}"}'
        + (f" in namespace {ns}" if ns else " at the cluster scope")
        + (f" ({m['why']})" if m["why"] else ""),
        f"check with: {can_i}. The RBAC rule needed: {rule} in a {role.title()}"
        f"{f' of namespace {ns}' if ns else ''} bound to it (kubectl create {role} trainspec-{verb}-{plural} "
        f"--verb={verb} --resource={full}{f' -n {ns}' if ns else ''}, then kubectl create {role}binding "
        f"trainspec-{verb}-{plural} --{role}=trainspec-{verb}-{plural} {who}{f' -n {ns}' if ns else ''})",
    )


def conflict(causes: list[dict], message: str, target: Target | None, ctx: Context) -> Diagnostic:
    """TS714: a server-side apply conflict: which fields, owned by which other field manager, placed at
    the spec field the first one came from (with ``ctx.sources``)."""
    by_manager: dict[str, list[str]] = {}
    for cause in causes:
        manager = str(cause.get("message") or "").removeprefix("conflict with ")
        by_manager.setdefault(manager, []).append(str(cause.get("field") or ""))
    owners = "; ".join(f"{', '.join(fields)} owned by field manager {m}" for m, fields in by_manager.items())
    show = (
        f"{target.resource} {target.name}{f' -n {target.namespace}' if target.namespace else ''}" if target else "..."
    )
    field = str(causes[0].get("field") or "").lstrip(".")
    place = _spec_place(field, ctx.sources)
    where = {"file": place.file, "line": place.line, "column": place.column} if place is not None else {}
    return diag(
        codes.API_REFUSED,
        ctx,
        f"cannot {ctx.what}: server-side apply conflict: {owners}, with another value ({message})"
        + (f" [{field} from {place.path}]" if place is not None and place.path else ""),
        f"rerun with --force-conflicts to take {'them' if len(causes) > 1 else 'it'} over from "
        f"{' and '.join(by_manager)} (server-side apply force), or change the spec to agree; "
        f"kubectl get {show} --show-managed-fields -o yaml shows who owns what",
        path=(place.path if place is not None and place.path else field),
        **where,
    )


def verdict_500(status: int, message: str) -> bool:
    """An HTTP 500 that judges the request (strict apply: a field the schema lacks), not server trouble."""
    from trainspec.kube.retry import PERMANENT_500

    return status == 500 and any(m in message for m in PERMANENT_500)


def gave_up(exc: BaseException, status: int, message: str, ctx: Context, attempts: int, seconds: float) -> Diagnostic:
    """TS723: throttled (429) or failing (5xx) still when the retries gave up: how often, how long, last words."""
    tries = f"gave up after {attempts} attempts over {seconds:.1f}s; the last" if attempts > 1 else "the"
    reason = str(getattr(exc, "reason", "") or "")
    webhook = re.search(r'failed calling webhook "([^"]+)"', message)
    if status == 429:
        after = (getattr(exc, "headers", None) or {}).get("Retry-After")
        text = f"the API server kept throttling the requests to {ctx.what} (HTTP 429" + (
            f", Retry-After {after}s)" if after else ")"
        )
        hint = (
            "retry later; the cluster's API Priority and Fairness limits this client "
            "(kubectl get flowschemas): ask the cluster's admins if it persists"
        )
    else:
        text = f"the API server failed to {ctx.what} (HTTP {status} {reason})".replace(" )", ")")
        hint = "check the API server's health (kubectl get --raw='/readyz?verbose') and retry later"
        if webhook:
            hint = (
                f"the admission webhook {webhook.group(1)} does not answer: its controller is down or "
                "unreachable (kubectl get pods of that controller; kubectl get validatingwebhookconfigurations,"
                "mutatingwebhookconfigurations); retry once it runs"
            )
    return diag(codes.SERVER_GAVE_UP, ctx, f"{text}; {tries} answer: {message or '(empty)'}", hint)


def refused(status: int, message: str, causes: list[dict], ctx: Context, *, hint: str = "") -> Diagnostic:
    """TS714: the server's verdict verbatim, each rejected field placed at the spec field it came from
    (with ``ctx.sources``), else named as the manifest's field."""
    fields = [f for f in ([_field_of(c) for c in causes] or [rejected_path(message)]) if f]
    if any(f in ("metadata.deletionTimestamp", "metadata.finalizers") for f in fields) and "delet" in message:
        return diag(codes.BEING_DELETED, ctx, f"cannot {ctx.what}: {message}", wait_hint("", ""))
    placed = [(f, _spec_place(f, ctx.sources)) for f in fields]
    where: dict[str, Any] = {}
    path = fields[0] if fields else ""
    note = f" [the manifest's field{'s' if len(fields) > 1 else ''} {', '.join(fields)}]" if fields else ""
    if placed and placed[0][1] is not None:
        first = placed[0][1]
        where = {"file": first.file, "line": first.line, "column": first.column}
        path = first.path or path
        note = " [" + ", ".join(f"{f} from {p.path}" if p and p.path else f"{f} of the manifest" for f, p in placed)
        note += "]"
    related = tuple(
        Related(message=f"{f} comes from here", file=p.file, line=p.line, column=p.column)
        for f, p in placed[1:]
        if p is not None
    )
    head = f"the API server refused to {ctx.what}" if status != 409 else f"cannot {ctx.what}"
    return diag(
        codes.API_REFUSED, ctx, f"{head}: {message}{note}", hint or REFUSED_HINT, path=path, related=related, **where
    )


def _field_of(cause: dict) -> str:
    """A cause's field; ``<nil>`` ones name it at the end of their text ("... int32 in spec.x")."""
    field = str(cause.get("field") or "")
    if field in ("", "<nil>"):
        m = re.search(r" in ([a-z][A-Za-z0-9_.\[\]]*)$", str(cause.get("message") or ""))
        return m.group(1) if m else ""
    return field.lstrip(".")


def rejected_path(message: str) -> str:
    """The field a rejection names: ``.spec.trainer.gpus: field not declared`` (apply) or
    ``is invalid: spec.trainer.numNodes: ...`` (validation); "" when none is named."""
    if m := re.search(r"\): \.([A-Za-z0-9_.\[\]=\"-]+): ", message):
        return m.group(1)
    if m := re.search(r"is invalid: \[?([a-z][A-Za-z0-9_.\[\]]*): ", message):
        return m.group(1)
    if m := re.search(r"is invalid: \[?<nil>: .* in ([a-z][A-Za-z0-9_.\[\]]*)(?:[,\]]|$)", message):
        return m.group(1)
    return ""


def _spec_place(field: str, sources: Any) -> Any:
    """The spec location (``provenance.Location``) a manifest field came from, or None."""
    if sources is None or not field:
        return None
    parts: list[str | int] = []
    for name, index in re.findall(r"([A-Za-z_$][\w$-]*)|\[([^\]]*)\]", field):
        if name:
            parts.append(name)
        elif index.isdigit():
            parts.append(int(index))
        elif "=" in index:  # a list-map entry by key: the index is unknown here, stop at the list
            break
        else:
            parts.append(index.strip("\"'"))
    ref = sources.lookup(tuple(parts))
    return ref.location() if ref is not None else None


# --- objects being deleted -----------------------------------------------------------------------


def being_deleted(obj: Any) -> bool:
    """Whether an object the server returned is being deleted (it has a ``deletionTimestamp``)."""
    return isinstance(obj, dict) and bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def wait_hint(name: str, namespace: str) -> str:
    """What to do about an object being deleted: wait for it to be gone, then submit again."""
    job = f" {name}" if name else " JOB"
    return (
        f"wait until it is gone (trainspec cancel{job}{f' -n {namespace}' if namespace else ''} waits for it), "
        "then submit again; a finalizer that never clears needs its controller running"
    )


def deleting_diagnostic(
    obj: dict[str, Any], *, file: str | None = None, line: int | None = None, column: int | None = None
) -> Diagnostic:
    """TS722: an apply reached an object that is being deleted; the server kept it terminating."""
    meta = obj.get("metadata") or {}
    name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "")
    finalizers = ", ".join(meta.get("finalizers") or [])
    return Diagnostic(
        codes.BEING_DELETED,
        f"{obj.get('kind') or 'the object'} {'/'.join(filter(None, (ns, name)))} is being deleted "
        f"(since {meta.get('deletionTimestamp')}{f'; finalizers: {finalizers}' if finalizers else ''}): "
        "the apply reached an object that is about to be gone, so it will not run",
        file=file,
        line=line or 1,
        column=column or 1,
        hint=wait_hint(name, ns),
    )
