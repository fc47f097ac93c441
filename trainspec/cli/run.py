"""``trainspec run --local``: run a job on this machine the way the cluster would (docs/run.md).

    trainspec run --local SPEC... [--job NAME] [--nodes N] [--procs-per-node N]
                  [--env-file FILE] [--workdir DIR] [--data-source PATH]

Exit status: the job's (the first failing node's), 130/143 when interrupted, 1 when the specs
do not compile or the job cannot run here (diagnostics), 2 for usage errors.
"""

from __future__ import annotations

import argparse
import sys


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count >= 1")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from trainspec.cli.common import add_input_options

    parser.add_argument(
        "--local",
        action="store_true",
        help="run on this machine: one process group per node, the env Kubeflow Trainer gives a pod",
    )
    parser.add_argument("--job", metavar="NAME", help="the job to run when the specs hold several")
    parser.add_argument("--nodes", type=_count, metavar="N", help="run N nodes instead of the job's (scale down)")
    parser.add_argument(
        "--procs-per-node",
        type=_count,
        metavar="N",
        help="processes per node (PET_NPROC_PER_NODE, MPI slots) instead of the job's",
    )
    parser.add_argument(
        "--env-file",
        metavar="FILE",
        help="NAME=value lines for the job's secretEnv (default: the local environment); "
        "values are passed to the processes only, never written",
    )
    parser.add_argument(
        "--workdir",
        metavar="DIR",
        help="local volumes: shards, checkpoints (default .trainspec/run/<namespace>/<job>; kept "
        "between runs so a killed run resumes)",
    )
    parser.add_argument(
        "--data-source",
        metavar="PATH",
        help="read the dataset from here instead of the job's data.source (a local copy of a "
        "pvc:// source, or another URI)",
    )
    add_input_options(parser)


def run(args: argparse.Namespace) -> int:
    """Compile, prepare the chosen job, run it; diagnostics go to stderr, the job's output is relayed."""
    from trainspec.cli import report
    from trainspec.cli.common import compile_args
    from trainspec.cli.main import EXIT_INVALID, EXIT_USAGE
    from trainspec.compiler.pipeline import Stop

    if not args.local:
        print(
            "trainspec run: only --local runs are supported here (to run on a cluster: trainspec submit)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    result = compile_args(args, Stop.LOWER)
    if not result.ok:
        report.write(result.diagnostics, sys.stderr, args.format, files=result.files)
        return EXIT_INVALID
    from trainspec.run.local import RunOptions, execute, prepare

    options = RunOptions(
        job=args.job,
        nodes=args.nodes,
        procs_per_node=args.procs_per_node,
        env_file=args.env_file,
        workdir=args.workdir,
        data_source=args.data_source,
    )
    prepared, problems = prepare(result, options)
    shown = [d for d in result.diagnostics if not d.is_error] + problems
    if prepared is None:
        report.write(shown, sys.stderr, args.format, files=result.files)
        return EXIT_INVALID
    if shown:
        report.write(shown, sys.stderr, args.format, files=result.files, quiet=True)
    sys.stdout.flush()
    return execute(prepared, stdout=sys.stdout.buffer, stderr=sys.stderr.buffer, say=sys.stderr)
