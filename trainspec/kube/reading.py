"""Reading a TrainJob with what ``status`` shows beside it: its Kueue Workload and its pods."""

from __future__ import annotations

from typing import Any

from trainspec.dsl.diagnostics import Diagnostic
from trainspec.k8s import wellknown as W
from trainspec.kube import resources as R
from trainspec.kube.retry import RetryPolicy, call
from trainspec.kube.session import CommandError, api_diagnostic, where
from trainspec.kube.state import JobView, view

__all__ = ["R", "job_view", "name_of", "newest_run", "pods", "retried", "trainjob", "workloads"]

#: Status and logs retry like the launcher, but give up sooner: a person is waiting.
POLICY = RetryPolicy(base=0.5, cap=5.0, attempts=5)


def retried(kube: Any, fn: Any, what: str, *, policy: RetryPolicy = POLICY) -> Any:
    """``fn()`` with the launcher's backoff; a located diagnostic when it still fails."""
    import sys

    try:
        return call(fn, policy, what=what, log=lambda m: print(m, file=sys.stderr))
    except Exception as exc:
        raise CommandError(api_diagnostic(exc, kube, what=what)) from None


def trainjob(kube: Any, namespace: str, name: str) -> dict[str, Any]:
    """The TrainJob named ``name``, else the newest run of the job ``name``; TS716 when neither exists.

    A job compiled by trainspec runs as ``<job>-<run id>`` (docs/gitops.md), so users name the
    job and get its current run. Callers use the returned object's name from then on.
    """
    found = retried(kube, lambda: kube.get(R.TRAINJOB, namespace, name), f"read TrainJob {namespace}/{name}")
    if found is None:
        found = newest_run(kube, namespace, name)
    if found is None:
        raise CommandError(
            Diagnostic(
                "TS716",
                f"no TrainJob {name!r} in namespace {namespace}",
                file=where(kube, namespace),
                line=1,
                column=1,
                hint="trainspec list -n NS shows the TrainJobs there; -n picks the namespace",
            )
        )
    return found


def newest_run(kube: Any, namespace: str, job: str) -> dict[str, Any] | None:
    """The newest TrainJob labelled ``trainspec.dev/job=<job>`` (None: none, or not a label value)."""
    import re

    if not job or len(job) > W.LABEL_VALUE_MAX or not re.fullmatch(W.LABEL_VALUE_PATTERN, job):
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
    """The namespace's Workloads for this job ([] without Kueue: its CRD missing is a 404)."""
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
