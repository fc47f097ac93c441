"""``trainspec logs JOB``: the trainer pods' logs, prefixed with node and rank.

Waits for the pods to exist, reads the newest pod of each node index (a pod JobSet replaced
is followed in its replacement), and with ``--follow`` keeps reading, across container
restarts, until the TrainJob is finished.
"""

from __future__ import annotations

import argparse
import sys

from trainspec.kube.session import add_cluster_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", metavar="JOB", help="the TrainJob")
    add_cluster_options(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--node", type=int, default=None, metavar="N", help="this node index only (default 0)")
    which.add_argument("--all", action="store_true", help="every node")
    parser.add_argument("-f", "--follow", action="store_true", help="keep reading until the job finishes")
    parser.add_argument(
        "--poll-seconds",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="how often to look for new or replaced pods (default 2)",
    )


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.kube import reading
    from trainspec.kube.follow import PodLogs
    from trainspec.kube.session import CommandError, connect, namespace_of
    from trainspec.kube.state import job_state

    if args.node is not None and args.node < 0:
        print("trainspec logs: --node must be >= 0", file=sys.stderr)
        return 2
    try:
        kube = connect(args.context)
        ns = namespace_of(args, kube)
        job = reading.trainjob(kube, ns, args.job)
        args.job = reading.name_of(job) or args.job  # a job's name gives its current run
        procs = (job.get("spec") or {}).get("trainer", {}).get("numProcPerNode")
        nodes = None if args.all else frozenset({args.node or 0})
        follower = PodLogs(
            kube,
            ns,
            args.job,
            nodes=nodes,
            procs_per_node=procs if isinstance(procs, int) else 1,
            poll_seconds=args.poll_seconds,
        )

        def finished() -> bool:
            current = kube.get(reading.R.TRAINJOB, ns, args.job)
            return current is None or job_state(current)[0] in ("Complete", "Failed")

        try:
            follower.run(follow=args.follow, finished=finished)
        except KeyboardInterrupt:
            follower.stop()
            return 130
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr)
        return 2 if exc.usage else 1
    return 0
