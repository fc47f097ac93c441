"""``trainspec submit SPEC...``: compile and server-side apply everything each job needs.

Runtimes only with ``--with-runtimes``; then per job its prerequisites (RBAC, ConfigMaps, PVCs),
the TrainJob, and its PodMonitor and dashboard (:mod:`trainspec.kube.submit`).

``-n NS`` places a job whose spec names no namespace (over the project's ``defaults.namespace``)
and refuses one whose spec names another (TS732), as ``kubectl apply -n`` does. Without ``-n``, a
job that neither its spec nor the project places goes to ``$TRAINSPEC_NAMESPACE``, else the
context's namespace, else ``default``: where ``trainspec status`` then looks for it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from trainspec.cli.common import add_input_options
from trainspec.kube.session import add_cluster_options


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
    parser.add_argument(
        "--ladder",
        action="store_true",
        help="climb the job's scaling ladder: submit each rung once the previous one has ended, then print the "
        "measured scaling table (the same as trainspec ladder run SPEC)",
    )
    add_cluster_options(parser)


def _unplaced(result: Any, job: str | None) -> bool:
    """Whether a selected job's namespace came from nowhere (no spec namespace, no project default)."""
    if result.project.spec.defaults.namespace:
        return False
    return any(
        getattr(s, "kind", "") == "TrainingJob" and not s.namespace and job in (None, s.name) for s in result.specs
    )


def run(args: argparse.Namespace) -> int:
    if args.ladder:
        from trainspec.cli.ladder_cluster import climb

        return climb(args, "submit --ladder")
    from trainspec.cli import report
    from trainspec.cli.common import compile_args
    from trainspec.compiler.pipeline import Stop
    from trainspec.compiler.resolve import DEFAULT_NAMESPACE
    from trainspec.kube.session import CommandError, connect
    from trainspec.kube.submit import SubmitIncomplete, select_jobs, submit
    from trainspec.kube.submit_plan import namespace_name_problem, namespace_problems

    namespace = getattr(args, "namespace", None)
    bad = namespace_name_problem(namespace) if namespace is not None else None
    if bad is not None:
        report.write([bad], sys.stderr, args.format)
        return 2
    result = compile_args(args, Stop.LOWER, namespace=namespace)
    problems = namespace_problems(result, namespace, args.job) if namespace else []
    if not result.ok or problems:
        report.write([*result.diagnostics, *problems], sys.stderr, args.format)
        return 1
    warnings: list = []
    try:
        jobs = select_jobs(result, args.job)
        kube = connect(args.context, getattr(args, "kubeconfig", None))
        fallback = kube.default_namespace(None)
        if namespace is None and fallback != DEFAULT_NAMESPACE and _unplaced(result, args.job):
            # kubectl's habit: an object without a namespace goes to the context's.
            result = compile_args(args, Stop.LOWER, namespace=fallback)
            if not result.ok:
                report.write(result.diagnostics, sys.stderr, args.format)
                return 1
            jobs = select_jobs(result, args.job)
        print(f"context {kube.context}" + (" (server dry run)" if args.dry_run else ""), file=sys.stderr)
        try:
            outcomes = submit(
                kube, jobs, with_runtimes=args.with_runtimes, dry_run=args.dry_run, force=args.force_conflicts
            )
        except SubmitIncomplete as exc:
            warnings = [o.diagnostic for o in exc.outcomes if o.diagnostic is not None]
            raise
        warnings = [o.diagnostic for o in outcomes if o.diagnostic is not None]
    except CommandError as exc:
        report.write([*warnings, *exc.diagnostics], sys.stderr, args.format)
        return 2 if exc.usage else 1
    if warnings:
        report.write(warnings, sys.stderr, args.format)
    if not args.dry_run:
        for job in jobs:
            print(
                f"next: trainspec status {job.name} -n {job.namespace} --watch; "
                f"trainspec logs {job.name} -n {job.namespace} --follow",
                file=sys.stderr,
            )
    return 0
