"""``trainspec submit SPEC...``: compile and server-side apply each job's PVCs and TrainJob."""

from __future__ import annotations

import argparse
import sys

from trainspec.cli.common import add_input_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    parser.add_argument("--job", metavar="NAME", help="submit only this job (default: every job in the specs)")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="server dry run: the API server validates and defaults, nothing is stored",
    )
    parser.add_argument(
        "--with-runtimes",
        action="store_true",
        help="also apply the runtimes the jobs use (trainspec never creates or changes them otherwise)",
    )
    parser.add_argument(
        "--force-conflicts",
        action="store_true",
        help="take over fields another field manager owns (server-side apply force)",
    )
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current one)")


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.cli.common import compile_args
    from trainspec.compiler.pipeline import Stop
    from trainspec.kube.session import CommandError, connect
    from trainspec.kube.submit import select_jobs, submit

    result = compile_args(args, Stop.LOWER)
    if not result.ok:
        report.write(result.diagnostics, sys.stderr, args.format)
        return 1
    try:
        jobs = select_jobs(result, args.job)
        kube = connect(args.context)
        print(f"context {kube.context}" + (" (server dry run)" if args.dry_run else ""), file=sys.stderr)
        submit(kube, jobs, with_runtimes=args.with_runtimes, dry_run=args.dry_run, force=args.force_conflicts)
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr, args.format)
        return 2 if exc.usage else 1
    if not args.dry_run:
        for job in jobs:
            print(
                f"next: trainspec status {job.name} -n {job.namespace} --watch; "
                f"trainspec logs {job.name} -n {job.namespace} --follow",
                file=sys.stderr,
            )
    return 0
