"""``trainspec list``: the TrainJobs of a namespace (or all, ``-A``), one line each, phase from conditions.

``-o wide|json|yaml|name`` as kubectl has them (:mod:`trainspec.cli.formats`).
"""

from __future__ import annotations

import argparse
import sys

from trainspec.cli.formats import add_output_option
from trainspec.kube.session import add_cluster_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_options(parser)
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="list every namespace")
    add_output_option(parser)


def nothing_found(namespace: str | None) -> str:
    """What is said (on stderr) when there is no TrainJob to show, as kubectl says it."""
    return f"no TrainJobs in namespace {namespace}" if namespace else "no TrainJobs in any namespace"


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.cli.formats import diagnostics_format, list_text
    from trainspec.client.cluster import views
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
