"""Reading a TrainJob with what ``status`` shows beside it: its Kueue Workload and its pods."""

from __future__ import annotations

import contextlib
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.k8s import wellknown as W
from trainspec.kube import resources as R
from trainspec.kube.errors import get_or_none
from trainspec.kube.retry import RetryPolicy, call, is_transient
from trainspec.kube.session import CommandError, api_diagnostic, where
from trainspec.kube.state import JobView, view

__all__ = [
    "R",
    "job_view",
    "missing_namespace",
    "name_of",
    "namespace_exists",
    "newest_run",
    "pods",
    "retried",
    "trainjob",
    "workloads",
]

NAMESPACE = R.Resource("v1", "Namespace", "namespaces", namespaced=False)
#: Status and logs retry like the launcher, but give up sooner: a person is waiting.
POLICY = RetryPolicy(base=0.5, cap=5.0, attempts=5)


def retried(kube: Any, fn: Any, what: str, *, policy: RetryPolicy = POLICY, file: str | None = None) -> Any:
    """``fn()`` with the launcher's backoff; a located diagnostic naming the cause when it still fails
    (with how many attempts were made over how long, for throttling and server failures)."""
    import sys
    import time

    from trainspec.kube.errors import GaveUp

    attempts, started = [1], time.monotonic()

    def log(message: str) -> None:
        attempts[0] += 1
        print(message, file=sys.stderr)

    try:
        return call(fn, policy, what=what, log=log)
    except Exception as exc:
        failed = GaveUp(exc, attempts[0], time.monotonic() - started)
        raise CommandError(api_diagnostic(failed, kube, what=what, file=file)) from None


def namespace_exists(kube: Any, namespace: str) -> bool | None:
    """Whether the namespace exists (None: unknown, e.g. no right to read namespaces).

    Asked when a list came back empty or an object is missing: a real API server lists nothing,
    and answers an object's 404, in a namespace that does not exist.
    """
    try:
        return get_or_none(kube, NAMESPACE, None, namespace) is not None
    except Exception:  # 403 on namespaces is common for namespaced users: then do not judge
        return None


def missing_namespace(kube: Any, namespace: str, what: str) -> None:
    """Raise TS720 when ``namespace`` does not exist (nothing when it does, or when that is unknown)."""
    if namespace and namespace_exists(kube, namespace) is False:
        from trainspec.kube.errors import Context, namespace_diagnostic

        raise CommandError(namespace_diagnostic(namespace, Context(what, where(kube, namespace))))


def trainjob(kube: Any, namespace: str, name: str) -> dict[str, Any]:
    """The TrainJob named ``name``, else the newest run of the job ``name``; TS716 when neither exists.

    A job compiled by trainspec runs as ``<job>-<run id>`` (docs/gitops.md), so users name the
    job and get its current run. Callers use the returned object's name from then on.
    """
    # get_or_none, not kube.get: a TrainJob CRD the cluster does not serve is TS721, not "no TrainJob".
    what = f"read TrainJob {namespace}/{name}"
    found = retried(kube, lambda: get_or_none(kube, R.TRAINJOB, namespace, name), what)
    if found is None:
        found = newest_run(kube, namespace, name)
    if found is None:
        missing_namespace(kube, namespace, what)
        raise CommandError(
            Diagnostic(
                codes.NO_SUCH_CLUSTER_JOB,
                f"no TrainJob {name!r} in namespace {namespace}",
                file=where(kube, namespace),
                line=1,
                column=1,
                hint=f"trainspec list -n {namespace} shows the TrainJobs there; -n picks the namespace",
            )
        )
    return found


def newest_run(kube: Any, namespace: str, job: str) -> dict[str, Any] | None:
    """The newest TrainJob labelled ``trainspec.dev/job=<job>`` (None: none, or not a label value)."""
    from trainspec.k8s.name_rules import label_value_problem

    if not job or label_value_problem(job) is not None:
        return None  # not a job name: nothing carries it as a label
    listed = retried(
        kube, lambda: kube.list(R.TRAINJOB, namespace, selector=f"{W.JOB_LABEL}={job}"), f"list the runs of {job}"
    )
    runs = [item for item in listed.get("items") or [] if isinstance(item, dict)]
    if not runs:
        return None
    return max(runs, key=lambda r: ((r.get("metadata") or {}).get("creationTimestamp") or "", r["metadata"]["name"]))


def name_of(job: dict[str, Any]) -> str:
    """The object's own name (the run's, when a job name was given)."""
    return str((job.get("metadata") or {}).get("name") or "")


def workloads(kube: Any, namespace: str, job: dict[str, Any]) -> list[dict[str, Any]]:
    """The namespace's Workloads for this job ([] without Kueue, whose CRD missing is a 404 on the
    list, or without the right to read them: Kueue is optional)."""
    uid = (job.get("metadata") or {}).get("uid") or ""
    try:
        listed = call(
            lambda: kube.list(R.WORKLOAD, namespace, selector=f"{W.KUEUE_JOB_UID_LABEL}={uid}"),
            POLICY,
            what="list Kueue workloads",
            log=lambda m: None,
        )
    except Exception as exc:
        if getattr(exc, "status", None) in (403, 404):
            return []
        raise CommandError(api_diagnostic(exc, kube, what="list Kueue workloads")) from None
    return list(listed.get("items") or [])


def pods(kube: Any, namespace: str, name: str) -> list[dict[str, Any]]:
    """Every pod of the TrainJob's JobSet."""
    return retried(kube, lambda: kube.list_pods(namespace, f"{W.JOBSET_NAME_LABEL}={name}"), "list pods")


def job_view(kube: Any, namespace: str, name: str, job: dict[str, Any] | None = None) -> JobView:
    """The :class:`JobView` of one TrainJob, read fresh."""
    job = job or trainjob(kube, namespace, name)
    return view(job, workloads=workloads(kube, namespace, job), pods=pods(kube, namespace, name_of(job) or name))


#: What one short watch of a TrainJob saw (:func:`watch_trainjob`).
CHANGED, DELETED = "changed", "deleted"


def watch_trainjob(
    kube: Any, namespace: str, name: str, resource_version: str, seconds: float
) -> tuple[str, dict[str, Any] | None]:
    """Watch TrainJob ``name`` from ``resource_version`` for at most ``seconds``: ``(CHANGED, the
    object)``, ``(DELETED, None)``, or ``("", None)`` when nothing changed, the version was too old
    (a 410 ERROR event) or the watch broke in a way worth retrying: the caller reads it again.
    Raises the API error that is not transient (:func:`trainspec.kube.retry.is_transient`)."""
    try:
        with contextlib.closing(
            kube.watch(
                R.TRAINJOB,
                namespace,
                resource_version=resource_version,
                field_selector=f"metadata.name={name}",
                timeout_seconds=max(1, int(seconds)),
            )
        ) as events:
            for event in events:
                kind = event.get("type")
                if kind == "DELETED":
                    return DELETED, None
                if kind in ("ADDED", "MODIFIED") and isinstance(event.get("object"), dict):
                    return CHANGED, dict(event["object"])
                if kind == "ERROR":
                    return "", None
    except Exception as exc:  # a broken watch: the caller reads again (with backoff) and watches again
        if not is_transient(exc):
            raise
    return "", None
