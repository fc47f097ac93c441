"""A job's scaling ladder on a cluster: ``ladder run`` without ``--local`` (also ``submit --ladder``) and ``ladder report``.

Argument handling only. Both compile the ladder as ``compile --ladder`` does, with the namespace
placed as ``trainspec submit`` places it (``-n``, else the spec's, the project's default, the
context's), pick the job (``--job``, TS703) and its rungs (``--rungs``); the climb is
:class:`trainspec.client.ladder_climb.Climb`, the reading back
:mod:`trainspec.client.ladder_readback`, the table :mod:`trainspec.explain.ladder_scaling`'s.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trainspec.cli.main import EXIT_INVALID, EXIT_USAGE

if TYPE_CHECKING:
    from trainspec.client.ladder_readback import ClusterRung
    from trainspec.explain.ladder_scaling import Settings

#: What the interrupted climb's exit status is (as Ctrl-C of any command).
EXIT_INTERRUPTED = 130


@dataclass
class _Ladder:
    """A compiled ladder on a connected cluster, its rungs chosen."""

    kube: Any
    namespace: str
    job: str
    rungs: Sequence[ClusterRung]


def thresholds(args: argparse.Namespace, **extra: Any) -> Settings:
    """The table's settings from ``--min-efficiency`` / ``--max-data-wait`` (``extra``: the warm-up or window)."""
    from trainspec.explain.ladder_scaling import MAX_DATA_WAIT, MIN_EFFICIENCY, Settings

    return Settings(
        min_efficiency=MIN_EFFICIENCY if getattr(args, "min_efficiency", None) is None else args.min_efficiency,
        max_data_wait=MAX_DATA_WAIT if getattr(args, "max_data_wait", None) is None else args.max_data_wait,
        **extra,
    )


def _say(line: str) -> None:
    # Phases, reasons and messages come from the API server (any controller's words): a control or
    # bidi character is shown escaped, never obeyed by the terminal (as every cluster command does).
    from trainspec.dsl.diagnostics import escape_text

    print(escape_text(line, backslashes=False), file=sys.stderr, flush=True)


def _prepare(args: argparse.Namespace, command: str) -> _Ladder | int:
    """Compile, connect and choose the rungs; an exit status (after saying why) when that fails."""
    from trainspec.cli import report
    from trainspec.cli.common import compile_args
    from trainspec.client.submitting import _unplaced
    from trainspec.compiler.pipeline import Stop
    from trainspec.compiler.resolve import DEFAULT_NAMESPACE
    from trainspec.kube.session import CommandError, connect
    from trainspec.kube.submit_plan import namespace_name_problem, namespace_problems
    from trainspec.run.ladder_run import pick_ladder

    namespace = getattr(args, "namespace", None)
    bad = namespace_name_problem(namespace) if namespace is not None else None
    if bad is not None:
        report.write([bad], sys.stderr, args.format)
        return EXIT_USAGE
    result = compile_args(args, Stop.LOWER, ladder=True, namespace=namespace)
    problems = namespace_problems(result, namespace, args.job) if namespace else []
    if not result.ok or problems:
        report.write([*result.diagnostics, *problems], sys.stderr, args.format, files=result.files)
        return EXIT_INVALID
    try:
        kube = connect(args.context, getattr(args, "kubeconfig", None))
        fallback = kube.default_namespace(None)
        if namespace is None and fallback != DEFAULT_NAMESPACE and _unplaced(result, args.job):
            # As submit does: a job nothing places goes to the context's namespace.
            result = compile_args(args, Stop.LOWER, ladder=True, namespace=fallback)
            if not result.ok:
                report.write(result.diagnostics, sys.stderr, args.format, files=result.files)
                return EXIT_INVALID
        ladder, found = pick_ladder(result, args.job)
        if ladder is None:
            report.write(found, sys.stderr, args.format, files=result.files)
            return EXIT_INVALID
        problem = ladder.unknown(getattr(args, "rungs", None))
        if problem:
            print(f"trainspec {command}: {problem}", file=sys.stderr)
            return EXIT_USAGE
        warnings = [d for d in result.diagnostics if not d.is_error]
        if warnings:
            report.write(warnings, sys.stderr, args.format, files=result.files, quiet=True)
        from trainspec.client.ladder_readback import cluster_rungs

        rungs = cluster_rungs(result, ladder, getattr(args, "rungs", None))
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr, args.format)
        return EXIT_USAGE if exc.usage else EXIT_INVALID
    return _Ladder(kube, ladder.namespace, ladder.job, rungs)


def climb(args: argparse.Namespace, command: str = "ladder run") -> int:
    """Submit the rungs one after the other, each once the previous one completed; print the table."""
    from trainspec.cli import report
    from trainspec.client.ladder_climb import POLL_SECONDS, Climb, ClimbOptions
    from trainspec.kube.session import CommandError

    prepared = _prepare(args, command)
    if isinstance(prepared, int):
        return prepared
    options = ClimbOptions(
        with_runtimes=bool(getattr(args, "with_runtimes", False)),
        force_conflicts=bool(getattr(args, "force_conflicts", False)),
        dry_run=bool(getattr(args, "dry_run", False)),
        poll=POLL_SECONDS if getattr(args, "poll", None) is None else args.poll,
    )
    count = f"{len(prepared.rungs)} rung{'s' * (len(prepared.rungs) != 1)}"
    dry = " (server dry run: each rung validated, nothing stored, nothing waited for)" if options.dry_run else ""
    _say(
        f"trainspec {command}: {prepared.namespace}/{prepared.job}, {count} on context "
        f"{prepared.kube.context}, one after the other{dry}"
    )
    steps = Climb(prepared.kube, prepared.rungs, _say, options)
    try:
        code = steps.run()
    except KeyboardInterrupt:
        rung = steps.current
        left = (
            f"; rung {rung.tag} (TrainJob {rung.namespace}/{rung.trainjob}) keeps running on the cluster "
            f"(trainspec cancel {rung.trainjob} -n {rung.namespace} stops it)"
            if rung is not None
            else ""
        )
        _say(
            f"trainspec {command}: interrupted{left}. The same command resumes the climb: rungs that completed "
            "are not submitted again, and a rung under way is waited for"
        )
        return EXIT_INTERRUPTED
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr, args.format)
        return EXIT_USAGE if exc.usage else EXIT_INVALID
    if options.dry_run:
        return code
    return _table(args, prepared, steps.stopped) or code


def report(args: argparse.Namespace) -> int:
    """``trainspec ladder report``: each rung's figures as the cluster holds them, in the scaling table."""
    prepared = _prepare(args, "ladder report")
    if isinstance(prepared, int):
        return prepared
    return _table(args, prepared, {})


def _table(args: argparse.Namespace, prepared: _Ladder, stopped: dict[str, str]) -> int:
    """Read the rungs back and print the table; 0, or the exit status of a failed read (said)."""
    from trainspec.cli import report
    from trainspec.client.ladder_readback import WINDOW, read_rungs
    from trainspec.explain.ladder_scaling import analyse, render
    from trainspec.kube.session import CommandError

    try:
        rungs = read_rungs(prepared.kube, prepared.rungs, stopped)
    except CommandError as exc:
        report.write(exc.diagnostics, sys.stderr, args.format)
        return EXIT_USAGE if exc.usage else EXIT_INVALID
    scaling = analyse(prepared.namespace, prepared.job, rungs, thresholds(args, window=WINDOW))
    sys.stdout.write(render([scaling], args.format))
    return 0
