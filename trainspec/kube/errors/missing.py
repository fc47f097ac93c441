"""404s: a namespace, an object, or a resource type the cluster does not serve (a missing CRD)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.k8s import wellknown as W
from trainspec.kube.errors.model import Context, Target, diag, status_of, target_of

#: 1.36's answer for a path no API serves (older servers send the text "404 page not found").
NOT_SERVED = "the server could not find the requested resource"

#: What to install when a group is not served: (product, install command with {v} for the version).
INSTALL = {
    W.TRAINER_GROUP: (
        "Kubeflow Trainer",
        (
            "helm install kubeflow-trainer oci://ghcr.io/kubeflow/charts/kubeflow-trainer --version {v}.0 "
            "--namespace kubeflow-system --create-namespace (or the manifests of its v{v}.0 release)"
        ),
    ),
    W.KUEUE_GROUP: (
        "Kueue",
        (
            "helm install kueue oci://registry.k8s.io/kueue/charts/kueue --version {v}.0 "
            "--namespace kueue-system --create-namespace"
        ),
    ),
    W.JOBSET_GROUP: ("JobSet", "Kubeflow Trainer's chart and manifests install the JobSet it needs"),
    W.MONITORING_GROUP: (
        "the Prometheus Operator",
        "its CRDs come with e.g. the kube-prometheus-stack Helm chart",
    ),
}


def namespace_diagnostic(namespace: str, ctx: Context, *, terminating: bool = False) -> Diagnostic:
    """TS720: the namespace does not exist (or is being deleted)."""
    if terminating:
        return diag(
            codes.NO_NAMESPACE,
            ctx,
            f"cannot {ctx.what}: namespace {namespace} is being deleted, nothing new can be created in it",
            f"wait until it is gone (kubectl get namespace {namespace} -w) and create it again, or use another",
        )
    return diag(
        codes.NO_NAMESPACE,
        ctx,
        f"namespace {namespace} does not exist in the cluster{f' (to {ctx.what})' if ctx.what else ''}",
        f"kubectl get namespaces lists them; create it (kubectl create namespace {namespace}) or pick an "
        "existing one (-n, or metadata.namespace in the spec)",
    )


def not_found(body: dict, details: dict, target: Target | None, ctx: Context) -> Diagnostic:
    """404: the namespace (TS720), the object (TS716) or the resource type (TS721) is missing."""
    if details.get("kind") == "namespaces" and (target is None or target.plural != "namespaces"):
        return namespace_diagnostic(str(details.get("name") or ""), ctx)
    if target is not None and target.name and object_missing(body, details, target, ctx.probe):
        where = f" in namespace {target.namespace}" if target.namespace else ""
        return diag(
            codes.NO_SUCH_CLUSTER_JOB,
            ctx,
            f"no {target.kind} {target.name!r}{where}",
            f"trainspec list -n {target.namespace} shows the TrainJobs there; -n picks the namespace"
            if target.namespace and target.plural == "trainjobs"
            else f"kubectl get {target.resource}{f' -n {target.namespace}' if target.namespace else ''} lists them",
        )
    return not_served(target, ctx)


def object_missing(body: dict, details: dict, target: Target, probe: Callable[[str], Any] | None) -> bool:
    """Whether a 404 on ``target`` says its object is missing (not its resource type): the NotFound
    of that object (``details.name``, or its message); when that is unclear, discovery decides."""
    if details.get("name") == target.name or f'"{target.name}" not found' in str(body.get("message") or ""):
        return True
    if body and (details or body.get("message") != NOT_SERVED):
        return False
    return served(target, probe)[0] is True


def served(target: Target, probe: Callable[[str], Any] | None) -> tuple[bool | None, list[str]]:
    """Discovery: whether the cluster serves ``target``'s resource (None: unknown), and when it does not
    serve that version of the group at all, the versions it serves instead."""
    if probe is None:
        return None, []

    def get(path: str) -> Any:
        try:
            return probe(path)
        except Exception as exc:
            return 404 if getattr(exc, "status", None) == 404 else None

    base = f"/apis/{target.group}" if target.group else "/api"
    listing = get(f"{base}/{target.version}")
    if isinstance(listing, dict):  # the version is served: is the resource among it?
        return any(r.get("name") == target.plural for r in listing.get("resources") or []), []
    if listing != 404:
        return None, []
    group = get(base) if target.group else None
    versions = [str(v.get("version")) for v in (group or {}).get("versions") or []] if isinstance(group, dict) else []
    return False, versions


def not_served(target: Target | None, ctx: Context, *, version: str | None = None) -> Diagnostic:
    """TS721: the cluster does not serve the resource type (its CRD is not installed, or another version).

    ``version`` is the product version to install (``--target``'s); default: trainspec's default target.
    """
    if target is None:
        return diag(
            codes.KIND_NOT_SERVED,
            ctx,
            f"cannot {ctx.what}: the API server does not serve that resource (HTTP 404)",
            "kubectl api-resources lists what the cluster serves; install the CRD that defines it",
        )
    from trainspec.compiler.targets import DEFAULT_KUEUE, DEFAULT_TRAINER

    _, versions = served(target, ctx.probe)
    if versions:
        detail = f"it serves {target.group} in version {', '.join(versions)} only, not {target.version}"
    elif target.group:
        detail = f"the CustomResourceDefinition {target.resource} is not installed"
    else:
        detail = "the API server does not know it"
    product, command = INSTALL.get(target.group, ("", ""))
    # Only Trainer and Kueue are versioned by --target: another product's version is not trainspec's to say.
    default = {W.TRAINER_GROUP: DEFAULT_TRAINER, W.KUEUE_GROUP: DEFAULT_KUEUE}.get(target.group)
    v = (version or ".".join(map(str, default))) if default else ""
    if product:
        other = f"the cluster's {product} is not the version trainspec targets (--target): " if versions else ""
        hint = f"{other}install {product}{f' {v}' if v else ''}: {command.format(v=v)}"
    else:
        hint = "install the CustomResourceDefinition that defines it"
    if target.group:
        hint += f"; kubectl api-resources --api-group={target.group} shows what the cluster serves"
    return diag(
        codes.KIND_NOT_SERVED,
        ctx,
        f"cannot {ctx.what}: the cluster does not serve {target.kind} ({target.api_version}): {detail}",
        hint,
    )


def get_or_none(kube: Any, resource: Any, namespace: str | None, name: str) -> dict[str, Any] | None:
    """GET an object: None when the object is missing; raises when its resource type is not served
    (or on any other failure), unlike ``KubeApi.get``, which answers None for any 404."""
    path = resource.path(namespace, name)
    try:
        found: dict[str, Any] | None = kube.request("GET", path)
        return found
    except Exception as exc:
        target = target_of(path)
        if getattr(exc, "status", None) == 404 and target is not None:
            body = status_of(exc)
            probe = lambda p: kube.request("GET", p)  # noqa: E731
            if object_missing(body, body.get("details") or {}, target, probe):
                return None
        raise
