"""``trainspec logs JOB``: the trainer pods' logs, prefixed with node and rank.

Waits for the pods to exist, reads the newest pod of each node index (a pod JobSet replaced
is followed in its replacement), and with ``--follow`` keeps reading, across container
restarts, until the TrainJob is finished.

``--tail``, ``--since``, ``--timestamps`` and ``--previous`` are kubectl's: the log API's
``tailLines``, ``sinceSeconds``, ``timestamps`` and ``previous``, for each node's pod.
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
    when = parser.add_mutually_exclusive_group()
    when.add_argument("-f", "--follow", action="store_true", help="keep reading until the job finishes")
    when.add_argument(
        "-p",
        "--previous",
        action="store_true",
        help="the log of the container's previous instance (before its last restart)",
    )
    parser.add_argument(
        "--tail",
        type=_lines,
        default=None,
        metavar="N",
        help="the last N lines of each node's log (default: all; -1: all)",
    )
    parser.add_argument(
        "--since",
        type=_since,
        default=None,
        metavar="DURATION",
        help="only lines newer than this, e.g. 5s, 2m, 3h, 1h30m",
    )
    parser.add_argument("--timestamps", action="store_true", help="print each line's time (RFC 3339) after its prefix")
    parser.add_argument(
        "--poll-seconds",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="how often to look for new or replaced pods (default 2)",
    )


def _lines(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -2
    if value < -1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of lines (>= 0, or -1 for all)")
    return value


def _since(text: str) -> int:
    """``--since``: a duration (``5s``, ``2m``, ``3h``, ``1h30m``) in whole seconds."""
    from trainspec.dsl.framework.measures import Duration

    try:
        seconds = Duration.parse(text).seconds
    except ValueError:
        seconds = 0
    if seconds <= 0:  # the log API's sinceSeconds must be positive
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration such as 5s, 2m, 3h or 1h30m")
    return seconds


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
        kube = connect(args.context, args.kubeconfig)
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
            tail=args.tail,
            since=args.since,
            timestamps=args.timestamps,
            previous=args.previous,
        )

        def finished() -> bool:
            what = f"read TrainJob {ns}/{args.job}"  # retried, and a diagnostic when it still fails
            current = reading.retried(kube, lambda: kube.get(reading.R.TRAINJOB, ns, args.job), what)
            return current is None or job_state(current)[0] in ("Complete", "Failed")

        try:
            follower.run(follow=args.follow, finished=finished)
        except KeyboardInterrupt:
            follower.stop()
            return 130
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr)
        return 2 if exc.usage else 1
    return 1 if follower.failed else 0
