"""``trainspec ladder run`` / ``ladder report``: climb a job's scaling ladder and measure it; and ``explain --ladder``.

    trainspec ladder run --local SPEC... [--job NAME] [--rungs TAG,...] [--data-source PATH]
                         [--warmup N|P%] [--min-efficiency F] [--max-data-wait F]
                         [--workdir DIR] [--env-file FILE] [--format text|json]
    trainspec ladder run SPEC... [--job NAME] [--rungs TAG,...] [-n NS] [--context NAME]
                         [--kubeconfig FILE] [--with-runtimes] [--poll SECONDS]
                         [--min-efficiency F] [--max-data-wait F] [--format text|json]
    trainspec ladder report SPEC... [--job NAME] [--rungs TAG,...] [-n NS] [--context NAME]
                         [--kubeconfig FILE] [--min-efficiency F] [--max-data-wait F] [--format text|json]

Argument handling only: the rungs are planned by the pipeline (:mod:`trainspec.compiler.ladder_rungs`),
run on this machine by :mod:`trainspec.run.ladder_run` and measured from the ranks' step logs
(:mod:`trainspec.stages.step_rates`), or climbed on a cluster (:mod:`trainspec.cli.ladder_cluster`:
``ladder run`` without ``--local``, also spelled ``submit --ladder``) and read back from rank 0's
progress reports (``ladder report``); the table is :mod:`trainspec.explain.ladder_scaling`'s either
way. ``explain --ladder``'s table of planned rungs is :mod:`trainspec.explain.ladder_report`'s.

Exit status of ``ladder run --local``: 0 when every rung that ran succeeded (skipped ones included); the
first failing rung's status otherwise (130/143 when interrupted); 1 when the specs do not compile
or a rung cannot run here (diagnostics); 2 for usage errors. On a cluster: 0 when every rung
completed, 1 when one failed (or the cluster refused something), 130 when interrupted (the rung
under way keeps running; the same command resumes), 2 for usage errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainspec.explain.ladder_scaling import MeasuredRung
    from trainspec.run.ladder_run import RungRun

#: ``ladder``'s subcommands and what each does.
ACTIONS = {
    "run": "climb a job's ladder rung after rung, on the cluster (--local: on this machine), and print the "
    "measured scaling table",
    "report": "read back what each rung of a job's ladder measured on the cluster and print the scaling table",
}
#: Options of ``ladder run`` for one side only: dest -> the flag as typed.
LOCAL_ONLY = {"workdir": "--workdir", "env_file": "--env-file", "data_source": "--data-source", "warmup": "--warmup"}
CLUSTER_ONLY = {
    "namespace": "-n/--namespace",
    "context": "--context",
    "kubeconfig": "--kubeconfig",
    "with_runtimes": "--with-runtimes",
    "poll": "--poll",
}


def _fraction(low: float, high: float) -> Callable[[str], float]:
    """A parser of ``0.8`` or ``80%`` into a number in ``(low, high]``."""

    def parse(text: str) -> float:
        try:
            value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            value = float("nan")
        if not low < value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number in ({low:g}, {high:g}] (e.g. 0.8 or 80%)")
        return value

    return parse


def _warmup(text: str) -> object:
    from trainspec.stages.step_rates import Warmup

    try:
        return Warmup.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (e.g. 10 or 10%)") from None


def _tags(text: str) -> tuple[str, ...]:
    tags = tuple(t.strip() for t in text.split(",") if t.strip())
    if not tags:
        raise argparse.ArgumentTypeError(f"{text!r} names no rung (e.g. 1n,2n)")
    return tags


def _add_ladder_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--job", metavar="NAME", help="the job whose ladder it is, when the specs hold several")
    parser.add_argument(
        "--rungs", type=_tags, metavar="TAG,...", help="only these rungs (e.g. 1n,2n; default: every rung)"
    )
    parser.add_argument(
        "--min-efficiency",
        type=_fraction(0.0, 2.0),
        default=None,
        metavar="F",
        help="the efficiency per GPU (speed-up / GPU ratio) a rung must keep to be recommended (default 0.8)",
    )
    parser.add_argument(
        "--max-data-wait",
        type=_fraction(0.0, 1.0),
        default=None,
        metavar="F",
        help="the share of the loop waiting for data above which the data pipeline is named the bottleneck "
        "(default 0.2)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from trainspec.cli.common import add_input_options
    from trainspec.kube.session import add_cluster_options

    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    run_parser = actions.add_parser("run", help=ACTIONS["run"], description=ACTIONS["run"])
    add_input_options(run_parser, format_help="the scaling table's format (progress lines go to stderr)")
    run_parser.add_argument(
        "--local",
        action="store_true",
        help="run the rungs on this machine as run --local does; rungs that do not fit it are skipped",
    )
    _add_ladder_options(run_parser)
    run_parser.add_argument(
        "--warmup",
        type=_warmup,
        default=None,
        metavar="N|P%",
        help="with --local: steps left out at the start of each rank before the rate is read: N steps or P%% of "
        "them (default 10%%; never fewer than 1)",
    )
    run_parser.add_argument(
        "--workdir",
        metavar="DIR",
        help="with --local: where the rungs run, one directory each (default .trainspec/ladder/<namespace>/<job>)",
    )
    run_parser.add_argument(
        "--env-file", metavar="FILE", help="with --local: NAME=value lines for the job's secretEnv (as run --local)"
    )
    run_parser.add_argument(
        "--data-source",
        metavar="PATH",
        help="with --local: read the dataset from here instead of the job's data.source (as run --local)",
    )
    add_cluster_options(run_parser)
    run_parser.add_argument(
        "--with-runtimes",
        action="store_true",
        help="on a cluster: also apply the runtimes the rungs use (as submit --with-runtimes)",
    )
    run_parser.add_argument(
        "--poll",
        type=_poll,
        default=None,
        metavar="SECONDS",
        help="on a cluster: read the running rung at least this often (default 10)",
    )
    report_parser = actions.add_parser("report", help=ACTIONS["report"], description=ACTIONS["report"])
    add_input_options(report_parser, format_help="the scaling table's format")
    _add_ladder_options(report_parser)
    add_cluster_options(report_parser)


def _poll(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0 to 3600")
    return value


def run(args: argparse.Namespace) -> int:
    """``trainspec ladder ACTION``."""
    if args.action == "report":
        from trainspec.cli.ladder_cluster import report

        return report(args)
    chosen = {**LOCAL_ONLY, **CLUSTER_ONLY}
    wrong = [
        chosen[d] for d in (CLUSTER_ONLY if args.local else LOCAL_ONLY) if getattr(args, d, None) not in (None, False)
    ]
    if wrong:
        side = "only on a cluster (without --local)" if args.local else "only with --local"
        print(f"trainspec ladder run: {', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} {side}", file=sys.stderr)
        return 2
    if not args.local:
        from trainspec.cli.ladder_cluster import climb

        return climb(args)
    return ladder_run(args)


def ladder_run(args: argparse.Namespace) -> int:
    """Compile the ladder, run the chosen job's rungs in order, print the scaling table."""
    from trainspec.cli import report
    from trainspec.cli.common import compile_args
    from trainspec.cli.main import EXIT_INVALID, EXIT_USAGE
    from trainspec.compiler.pipeline import Stop

    result = compile_args(args, Stop.LOWER, ladder=True)
    if not result.ok:
        report.write(result.diagnostics, sys.stderr, args.format, files=result.files)
        return EXIT_INVALID
    from trainspec.cli.ladder_cluster import thresholds
    from trainspec.explain.ladder_scaling import analyse, render
    from trainspec.run.ladder_run import LadderOptions, LadderRunner, pick_ladder
    from trainspec.stages.step_rates import Warmup

    warmup = args.warmup or Warmup()
    ladder, problems = pick_ladder(result, args.job)
    if ladder is None:
        report.write(problems, sys.stderr, args.format, files=result.files)
        return EXIT_INVALID
    problem = ladder.unknown(args.rungs)
    if problem:
        print(f"trainspec ladder run: {problem}", file=sys.stderr)
        return EXIT_USAGE
    warnings = [d for d in result.diagnostics if not d.is_error]
    if warnings:
        report.write(warnings, sys.stderr, args.format, files=result.files, quiet=True)

    def write(found: list) -> None:
        report.write(found, sys.stderr, args.format, files=result.files, quiet=True)

    options = LadderOptions(
        job=args.job,
        rungs=args.rungs,
        workdir=args.workdir,
        env_file=args.env_file,
        data_source=args.data_source,
        warmup=warmup,
    )
    runner = LadderRunner(result, options, say=sys.stderr, report=write)
    rungs = runner.run(ladder)
    if runner.code == EXIT_INVALID and not rungs:
        return EXIT_INVALID
    scaling = analyse(ladder.namespace, ladder.job, [_measured(r) for r in rungs], thresholds(args, warmup=warmup))
    sys.stdout.write(render([scaling], args.format))
    return runner.code


def _measured(rung: RungRun) -> MeasuredRung:
    from trainspec.explain.ladder_scaling import MeasuredRung

    return MeasuredRung(
        tag=rung.tag,
        name=rung.name,
        nodes=rung.nodes,
        procs_per_node=rung.procs_per_node,
        world_size=rung.world_size,
        gpus=rung.gpus,
        status=rung.status,
        measurement=rung.measurement,
        note=rung.note,
        seconds=rung.seconds,
    )


def explain_ladder(args: argparse.Namespace) -> int:
    """Print the rungs of every job among ``args.paths``; exit 1 when any spec or rung has an error."""
    from trainspec.cli import report
    from trainspec.cli.common import compile_args, report_foreign
    from trainspec.compiler.pipeline import Stop
    from trainspec.dsl.diagnostics import has_errors
    from trainspec.explain.ladder_report import FORMATS, render

    if args.format not in FORMATS:
        print(f"trainspec explain: --ladder shows a table: use --format {', '.join(FORMATS)}", file=sys.stderr)
        return 2
    result = compile_args(args, Stop.LOWER, ladder=True)
    report_foreign(result, args, sys.stderr)
    # As explain does: the rungs that were planned are shown even when another spec has errors.
    sys.stdout.write(render(result.plans, args.format))
    if result.diagnostics:
        report.write(result.diagnostics, sys.stderr)
    return 1 if has_errors(result.diagnostics) else 0
