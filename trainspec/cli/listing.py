"""``trainspec list``: the TrainJobs of a namespace (or all, ``-A``), one line each, phase from conditions.

``-o wide|json|yaml|name`` as kubectl has them (:mod:`trainspec.cli.output`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from trainspec.cli.output import add_output_option
from trainspec.kube.session import add_cluster_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_options(parser)
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="list every namespace")
    add_output_option(parser)


def nothing_found(namespace: str | None) -> str:
    """What is said (on stderr) when there is no TrainJob to show, as kubectl says it."""
    return f"no TrainJobs in namespace {namespace}" if namespace else "no TrainJobs in any namespace"


def views(kube: Any, namespace: str | None) -> list[Any]:
    """The :class:`~trainspec.kube.state.JobView` of every TrainJob in ``namespace`` (None: all)."""
    from trainspec.k8s.wellknown import JOBSET_NAME_LABEL
    from trainspec.kube import reading, resources as R
    from trainspec.kube.state import view

    what = f"list TrainJobs in namespace {namespace}" if namespace else "list TrainJobs in every namespace"
    listed = reading.retried(kube, lambda: kube.list(R.TRAINJOB, namespace), what)
    if namespace and not listed.get("items"):
        # A real API server lists nothing in a namespace that does not exist: say so, not "no TrainJobs".
        reading.missing_namespace(kube, namespace, what)
    jobs = sorted(listed.get("items") or [], key=lambda j: (j["metadata"].get("namespace", ""), j["metadata"]["name"]))
    pods_by_ns: dict[str, list[Any]] = {}
    loads_by_ns: dict[str, list[Any]] = {}
    out = []
    for job in jobs:
        ns = job["metadata"].get("namespace", "")
        if ns not in pods_by_ns:  # one pod list and one workload list per namespace, not per job
            pods_by_ns[ns] = reading.retried(kube, lambda ns=ns: kube.list(R.POD, ns).get("items") or [], "list pods")
            loads_by_ns[ns] = _workloads(kube, ns)
        name = job["metadata"]["name"]
        mine = [
            p for p in pods_by_ns[ns] if ((p.get("metadata") or {}).get("labels") or {}).get(JOBSET_NAME_LABEL) == name
        ]
        out.append(view(job, workloads=loads_by_ns[ns], pods=mine))
    return out


def _workloads(kube: Any, namespace: str) -> list[Any]:
    """The namespace's Kueue Workloads; [] without Kueue (a 404 on the list) or the right to read them."""
    from trainspec.kube import resources as R
    from trainspec.kube.reading import POLICY
    from trainspec.kube.retry import call
    from trainspec.kube.session import CommandError, api_diagnostic

    what = f"list Kueue workloads in namespace {namespace}"
    try:
        return list(
            call(lambda: kube.list(R.WORKLOAD, namespace), POLICY, what=what, log=lambda m: None).get("items") or []
        )
    except Exception as exc:
        if getattr(exc, "status", None) in (403, 404):  # no Kueue, or no right to read it: Kueue is optional
            return []
        raise CommandError(api_diagnostic(exc, kube, what=what)) from None


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.cli.output import diagnostics_format, list_text
    from trainspec.kube.session import CommandError, connect, namespace_of

    try:
        kube = connect(args.context, args.kubeconfig)
        ns = None if args.all_namespaces else namespace_of(args, kube)
        found = views(kube, ns)
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr, diagnostics_format(args.format))
        return 2 if exc.usage else 1
    if not found and args.format in ("text", "wide"):
        print(nothing_found(ns), file=sys.stderr)
        return 0
    sys.stdout.write(list_text(found, args.format))
    return 0
