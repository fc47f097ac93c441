"""``trainspec list``: the TrainJobs of a namespace (or all, ``-A``), one line each, phase from conditions."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from trainspec.kube.session import add_cluster_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_options(parser)
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="list every namespace")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")


def views(kube: Any, namespace: str | None) -> list[Any]:
    """The :class:`~trainspec.kube.state.JobView` of every TrainJob in ``namespace`` (None: all)."""
    from trainspec.k8s.wellknown import JOBSET_NAME_LABEL
    from trainspec.kube import reading, resources as R
    from trainspec.kube.state import view

    listed = reading.retried(kube, lambda: kube.list(R.TRAINJOB, namespace), "list TrainJobs")
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
    from trainspec.kube import resources as R
    from trainspec.kube.reading import POLICY
    from trainspec.kube.retry import call

    try:
        return list(
            call(lambda: kube.list(R.WORKLOAD, namespace), POLICY, what="list workloads", log=lambda m: None).get(
                "items"
            )
            or []
        )
    except Exception as exc:
        if getattr(exc, "status", None) in (403, 404):  # no Kueue, or no right to read it
            return []
        raise


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.kube.session import CommandError, connect, namespace_of
    from trainspec.kube.state import human_duration

    try:
        kube = connect(args.context)
        found = views(kube, None if args.all_namespaces else namespace_of(args, kube))
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr, args.format)
        return 2 if exc.usage else 1
    if args.format == "json":
        print(json.dumps([v.to_dict() for v in found], indent=2, sort_keys=True))
        return 0
    if not found:
        print("no TrainJobs", file=sys.stderr)
        return 0
    rows = [("NAMESPACE", "NAME", "PHASE", "PODS", "AGE", "DETAIL")]
    for v in found:
        ready = sum(g.ready for g in v.groups)
        total = sum(g.pods for g in v.groups)
        age = human_duration(v.age_seconds) if v.age_seconds is not None else "-"
        rows.append((v.namespace, v.name, v.phase, f"{ready}/{total}", age, v.detail()))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        print(
            "  ".join(c.ljust(w) for c, w in zip(r[:5], widths, strict=True)) + ("  " + r[5] if r[5] else "").rstrip()
        )
    return 0
