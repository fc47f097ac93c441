"""``trainspec cancel JOB``: delete the TrainJob (foreground: its JobSet and pods go first) and keep
its checkpoint PVC, so a later submit resumes from the checkpoints."""

from __future__ import annotations

import argparse
import sys
import time

from trainspec.kube.session import add_cluster_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", metavar="JOB", help="the TrainJob")
    add_cluster_options(parser)
    parser.add_argument("--no-wait", action="store_true", help="return once the deletion is accepted")
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long to wait for the TrainJob to be gone (default 300)",
    )
    parser.add_argument("--poll-seconds", type=float, default=1.0, metavar="SECONDS", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.kube import reading, resources as R
    from trainspec.kube.errors import being_deleted
    from trainspec.kube.session import CommandError, connect, namespace_of
    from trainspec.kube.submit import claim_names

    try:
        kube = connect(args.context, args.kubeconfig)
        ns = namespace_of(args, kube)
        job = reading.trainjob(kube, ns, args.job)
        args.job = reading.name_of(job) or args.job  # a job's name gives its current run
        claims = sorted(set(claim_names(job.get("spec") or {})))
        if being_deleted(job):  # deleting it again changes nothing; say so, then wait as usual
            since = (job.get("metadata") or {}).get("deletionTimestamp")
            print(f"TrainJob {ns}/{args.job} was already being deleted (since {since})", file=sys.stderr)
        answer = reading.retried(
            kube,
            lambda: kube.delete(R.TRAINJOB, ns, args.job, propagation="Foreground"),
            f"delete TrainJob {ns}/{args.job}",
        )
        what = f"trainjob.trainer.kubeflow.org/{ns}/{args.job}"
        if answer is None:
            print(f"{what} was already gone")
        elif args.no_wait:
            print(f"{what} deletion requested (foreground: its JobSet and pods are deleted first)")
        else:
            deadline = time.monotonic() + args.timeout
            while reading.retried(kube, lambda: kube.get(R.TRAINJOB, ns, args.job), "read the TrainJob") is not None:
                if time.monotonic() >= deadline:
                    print(
                        f"{what} is still being deleted after {args.timeout:g}s (its pods are stopping); "
                        f"check with: trainspec status {args.job} -n {ns}",
                        file=sys.stderr,
                    )
                    return 1
                time.sleep(args.poll_seconds)
            print(f"{what} deleted (foreground: its JobSet and pods went first)")
        for claim in claims:
            found = reading.retried(kube, lambda c=claim: kube.get(R.PVC, ns, c), f"read PVC {claim}")
            if found is not None:
                print(
                    f"kept persistentvolumeclaim/{ns}/{claim} (checkpoints): submitting the job again resumes "
                    f"from it; delete it with kubectl delete pvc {claim} -n {ns} when it is no longer needed"
                )
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr)
        return 2 if exc.usage else 1
    return 0
