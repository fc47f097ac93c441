"""``trainspec run --local``: run a job on this machine the way the cluster would (docs/run.md).

    trainspec run --local SPEC... [--job NAME] [--nodes N] [--procs-per-node N]
                  [--env-file FILE] [--workdir DIR] [--data-source PATH]
    trainspec run --local PIPELINE... [--pipeline NAME] [--param NAME=VALUE]... [--env-file FILE] [--workdir DIR]

When the inputs hold a Pipeline (and no --job is given), its steps run in the graph's order
(:mod:`trainspec.run.pipeline_local`). Exit status: the job's (the first failing node's), or a
pipeline's first failed step's; 130/143 when interrupted, 1 when the specs do not compile or the
job cannot run here (diagnostics), 2 for usage errors (a --param that is not a parameter of
the pipeline's, or not of its type, included).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainspec.compiler.pipeline import CompileResult
    from trainspec.dsl.diagnostics import Diagnostic


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
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a pipeline parameter's value for this run (repeatable; checked against the parameter's type)",
    )
    parser.add_argument("--pipeline", metavar="NAME", help="the pipeline to run when the specs hold several")
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
    if args.job is None and (result.pipelines or args.pipeline):
        return _run_pipeline(args, result)
    if args.param:
        print("trainspec run: --param sets a pipeline's parameters; the inputs hold no pipeline", file=sys.stderr)
        return EXIT_USAGE
    from trainspec.run.local import RunOptions, execute, prepare
    from trainspec.run.pipeline_steps_local import with_pipeline_jobs

    options = RunOptions(
        job=args.job,
        nodes=args.nodes,
        procs_per_node=args.procs_per_node,
        env_file=args.env_file,
        workdir=args.workdir,
        data_source=args.data_source,
    )
    prepared, problems = prepare(with_pipeline_jobs(result), options)  # --job may name a pipeline's job
    shown = [d for d in result.diagnostics if not d.is_error] + problems
    if prepared is None:
        report.write(shown, sys.stderr, args.format, files=result.files)
        return EXIT_INVALID
    if shown:
        report.write(shown, sys.stderr, args.format, files=result.files, quiet=True)
    sys.stdout.flush()
    return execute(prepared, stdout=sys.stdout.buffer, stderr=sys.stderr.buffer, say=sys.stderr)


def _run_pipeline(args: argparse.Namespace, result: CompileResult) -> int:
    """Check the --param values, compile them in, run the pipeline's steps."""
    from trainspec.cli import report
    from trainspec.cli.common import pipeline_options
    from trainspec.cli.main import EXIT_INVALID, EXIT_USAGE
    from trainspec.compiler.pipeline import Stop
    from trainspec.run.pipeline_local import PipelineOptions, run_pipeline
    from trainspec.run.pipeline_params import compile_with_params, parse_params

    job_only = [f for f in ("nodes", "procs_per_node", "data_source") if getattr(args, f) is not None]
    if job_only:
        flags = ", ".join("--" + f.replace("_", "-") for f in job_only)
        print(
            f"trainspec run: {flags} apply to one job; a pipeline's steps take their sizes and data from the "
            "pipeline (override a parameter with --param NAME=VALUE, or run one job with --job NAME)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    graphs = [g for g in result.pipelines if args.pipeline is None or g.pipeline.name == args.pipeline]
    if len(graphs) != 1:
        names = ", ".join(sorted(g.pipeline.name for g in result.pipelines)) or "none"
        what = f"no pipeline named {args.pipeline!r}" if args.pipeline else f"the inputs hold {len(graphs)} pipelines"
        print(f"trainspec run: {what} (pipelines: {names}); pick one with --pipeline NAME", file=sys.stderr)
        return EXIT_USAGE
    graph = graphs[0]
    values, problems = parse_params(graph, args.param)
    if problems:
        report.write(problems, sys.stderr, args.format, files=result.files)
        return EXIT_USAGE
    if values:  # the job steps are compiled (and checked) with the values this run uses
        files = result.files
        result = compile_with_params(result, graph, values, pipeline_options(args, Stop.LOWER))
        result.files = files  # the same files, handed over as loaded specs
        if not result.ok:
            report.write(result.diagnostics, sys.stderr, args.format, files=result.files)
            return EXIT_INVALID
        graph = next(g for g in result.pipelines if g.pipeline.name == graph.pipeline.name)

    def write(found: list[Diagnostic]) -> None:
        report.write(found, sys.stderr, args.format, files=result.files, quiet=True)

    warnings = [d for d in result.diagnostics if not d.is_error]
    if warnings:
        write(warnings)
    sys.stdout.flush()
    options = PipelineOptions(params=values, workdir=args.workdir, env_file=args.env_file)
    return run_pipeline(
        result, graph, options, stdout=sys.stdout.buffer, stderr=sys.stderr.buffer, say=sys.stderr, report=write
    )
