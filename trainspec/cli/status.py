"""``trainspec status [JOB]``: a TrainJob's phase, Kueue admission, pods, progress, age and deadline.

Progress is Trainer's ``status.trainerStatus`` (the TrainJobStatus feature: what the training
code posts, e.g. with ``trainspec.stages.ProgressReporter``): percentage, time left, metrics and
how long ago it was updated.

With ``--watch`` it follows the TrainJob (a watch, renewed every ``--interval`` seconds) and
prints each change until the job completes (exit 0) or fails (exit 1).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from trainspec.kube.session import add_cluster_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", nargs="?", metavar="JOB", help="the TrainJob (default: every TrainJob in the namespace)")
    add_cluster_options(parser)
    parser.add_argument("--watch", "-w", action="store_true", help="print each change until the job finishes")
    parser.add_argument(
        "--interval",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="with --watch: re-read pods and Kueue at least this often (default 10)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.kube import reading
    from trainspec.kube.session import CommandError, connect, namespace_of

    try:
        kube = connect(args.context)
        ns = namespace_of(args, kube)
        if args.job is None:
            if args.watch:
                print("trainspec status: --watch needs a JOB", file=sys.stderr)
                return 2
            from trainspec.cli.listing import views

            found = views(kube, ns)
            _print(found, args.format, many=True)
            return 0
        if args.watch:
            return _watch(kube, ns, args.job, args)
        _print([reading.job_view(kube, ns, args.job)], args.format)
        return 0
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr, "json" if args.format == "json" else "text")
        return 2 if exc.usage else 1


def _print(views: list, fmt: str, *, many: bool = False) -> None:
    if fmt == "json":
        data = [v.to_dict() for v in views]
        print(json.dumps(data if many else data[0], indent=2, sort_keys=True))
        return
    for v in views:
        print("\n".join(v.lines()))
    sys.stdout.flush()


def _watch(kube: Any, ns: str, name: str, args: argparse.Namespace) -> int:
    from trainspec.kube import reading, resources as R
    from trainspec.progress import Progress

    job = reading.trainjob(kube, ns, name)
    name = reading.name_of(job) or name  # a job's name gives its current run
    shown = None
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
            else:
                print("\n".join(current.lines()), flush=True)
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

            if not is_transient(exc):
                raise
        job = changed or reading.trainjob(kube, ns, name)
