"""``trainspec status [JOB]``: a TrainJob's phase, Kueue admission, pods, progress, age and deadline.

Progress is Trainer's ``status.trainerStatus`` (the TrainJobStatus feature: what the training
code posts, e.g. with ``trainspec.stages.ProgressReporter``): percentage, time left, metrics and
how long ago it was updated.

``-o wide|json|yaml|name`` as kubectl has them (:mod:`trainspec.cli.formats`); without JOB, every
TrainJob of the namespace (``-A``: of every namespace).

With ``--watch`` it follows the TrainJob (a watch, renewed every ``--interval`` seconds) and
prints each change until the job completes (exit 0) or fails (exit 1).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from trainspec.cli.formats import add_output_option
from trainspec.kube.session import add_cluster_options

#: The forms ``--watch`` prints a change in: lines of text, or one JSON object a line.
WATCH_FORMS = ("text", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", nargs="?", metavar="JOB", help="the TrainJob (default: every TrainJob in the namespace)")
    add_cluster_options(parser)
    parser.add_argument(
        "-A", "--all-namespaces", action="store_true", help="without JOB: the TrainJobs of every namespace"
    )
    parser.add_argument("--watch", "-w", action="store_true", help="print each change until the job finishes")
    parser.add_argument(
        "--interval",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="with --watch: re-read pods and Kueue at least this often (default 10)",
    )
    add_output_option(parser)


def _usage(args: argparse.Namespace) -> str:
    """What is wrong with the command line, before any cluster is asked ("" when nothing)."""
    if args.job is not None and args.all_namespaces:
        return "a TrainJob is named in one namespace: give -n NS, not -A, with JOB"
    if args.watch and args.job is None:
        return "--watch needs a JOB"
    if args.watch and args.format not in WATCH_FORMS:
        return f"--watch prints text or json (one object a line), not -o {args.format}"
    return ""


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.cli.formats import diagnostics_format, status_text
    from trainspec.kube import reading
    from trainspec.kube.session import CommandError, connect, namespace_of

    problem = _usage(args)
    if problem:
        print(f"trainspec status: {problem}", file=sys.stderr)
        return 2
    try:
        kube = connect(args.context, args.kubeconfig)
        if args.job is None:
            from trainspec.cli.listing import nothing_found
            from trainspec.client.cluster import views

            ns = None if args.all_namespaces else namespace_of(args, kube)
            found = views(kube, ns)
            if not found and args.format in ("text", "wide"):
                print(nothing_found(ns), file=sys.stderr)
            sys.stdout.write(status_text(found, args.format, many=True))
            return 0
        ns = namespace_of(args, kube)
        if args.watch:
            return _watch(kube, ns, args.job, args)
        sys.stdout.write(status_text([reading.job_view(kube, ns, args.job)], args.format, many=False))
        return 0
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr, diagnostics_format(args.format))
        return 2 if exc.usage else 1


def _watch(kube: Any, ns: str, name: str, args: argparse.Namespace) -> int:
    from trainspec.kube import reading, resources as R
    from trainspec.kube.state import transition
    from trainspec.progress import Progress

    job = reading.trainjob(kube, ns, name)
    name = reading.name_of(job) or name  # a job's name gives its current run
    shown = None
    before = None  # the view last printed: text prints the status once, then each transition
    waiting: Progress | None = None  # a spinner on a terminal while Kueue has not admitted the job
    while True:
        current = reading.job_view(kube, ns, name, job)
        # Ages change by the second; only a change of the job itself is worth a new print.
        key = json.dumps(
            current.to_dict() | {"age_seconds": None, "deadline_left_seconds": None, "last_updated_seconds": None},
            sort_keys=True,
        )
        if key != shown:
            if waiting is not None:  # erase the spinner line before the new status
                waiting.close()
                waiting = None
            shown = key
            if args.format == "json":
                print(json.dumps(current.to_dict(), sort_keys=True), flush=True)
            elif said := transition(before, current):
                print("\n".join(said), flush=True)
            before = current
        if current.done:
            if waiting is not None:
                waiting.close()
            return 0 if current.phase == "Complete" else 1
        if current.phase in ("Queued", "Suspended") and args.format != "json":
            if waiting is None:
                waiting = Progress("waiting for admission", delay=0.0)
            waiting.update(detail=current.queue.reason if current.queue is not None else current.phase)
        version = (job.get("metadata") or {}).get("resourceVersion") or "0"
        changed = None
        try:
            for event in kube.watch(
                R.TRAINJOB,
                ns,
                resource_version=version,
                field_selector=f"metadata.name={name}",
                timeout_seconds=max(1, int(args.interval)),
            ):
                kind = event.get("type")
                if kind == "DELETED":
                    print(f"TrainJob {ns}/{name} was deleted", flush=True)
                    return 1
                if kind in ("ADDED", "MODIFIED"):
                    changed = event["object"]
                    break  # re-read pods and Kueue for this change
                if kind == "ERROR":  # 410 Gone: the version is too old; read the object again
                    break
        except Exception as exc:  # a broken watch: read again (with backoff) and re-watch
            from trainspec.kube.retry import is_transient

            if not is_transient(exc):  # RBAC on watch, say: a located diagnostic, not a traceback
                from trainspec.kube.session import CommandError, api_diagnostic

                raise CommandError(api_diagnostic(exc, kube, what=f"watch TrainJob {ns}/{name}")) from None
        job = changed or reading.trainjob(kube, ns, name)
