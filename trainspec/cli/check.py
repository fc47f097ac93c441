"""``trainspec check``: what the cluster would say, offline.

This module only parses arguments and prints the report; the checker is
:func:`trainspec.check.run_check` (see :mod:`trainspec.check.request`). The specs among the
PATHs are compiled for the target, Kubernetes manifests among them are read as they are, and
every manifest gets the CRD check (``--crds``, else ``$TRAINSPEC_CRDS_DIR``, else the CRDs
shipped for the target), the admission-webhook rules and, with ``--cluster``, the Kueue
pre-flight.
"""

from __future__ import annotations

import argparse
import sys

from trainspec.cli.common import add_input_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    parser.add_argument(
        "--crds",
        metavar="DIR",
        action="append",
        default=[],
        help="the cluster's CRD files or folders (repeat; `kubectl get crd -o yaml` output works); "
        "default: $TRAINSPEC_CRDS_DIR, else the CRDs shipped with trainspec for the target "
        "(Trainer 2.3 with JobSet 0.12, Kueue 0.19)",
    )
    parser.add_argument(
        "--cluster",
        metavar="DIR",
        action="append",
        default=[],
        help="Kueue objects of the cluster (ClusterQueues, LocalQueues, ResourceFlavors, "
        "WorkloadPriorityClasses, Cohorts, Topologies, Namespaces) for the pre-flight; - reads "
        "standard input (kubectl get clusterqueues,localqueues,resourceflavors -A -o yaml | ...)",
    )
    parser.add_argument(
        "--previous",
        metavar="DIR|REF:PATH",
        help="the manifests the cluster has now (a directory, or a git ref and path such as origin/main:deploy): "
        "objects on both sides are checked as updates (immutable fields, claims, webhook update rules)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing when everything is valid")


def run(args: argparse.Namespace) -> int:
    from trainspec.check.request import CheckRequest, CheckUsageError, run_check
    from trainspec.cli import report
    from trainspec.cli.common import pipeline_options, report_foreign
    from trainspec.compiler.pipeline import Stop

    if "-" in args.cluster and "-" in args.paths:  # standard input can be read once
        print(
            "trainspec check: `-` (standard input) given for both the specs and --cluster; name a file for one",
            file=sys.stderr,
        )
        return 2
    request = CheckRequest(
        paths=args.paths,
        crds=args.crds or None,
        cluster=args.cluster,
        options=pipeline_options(args, Stop.LOWER),
        previous=args.previous,
    )
    try:
        outcome = run_check(request)
    except CheckUsageError as exc:
        print(f"trainspec check: {exc}", file=sys.stderr)
        return 2
    if outcome.result is not None:
        report_foreign(outcome.result, args, sys.stdout)
    report.write(outcome.diagnostics, sys.stdout, args.format, files=outcome.files, quiet=args.quiet)
    return outcome.exit_code
