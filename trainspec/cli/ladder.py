"""``trainspec explain --ladder``: each job's scaling ladder (argument handling only; the rungs are
planned by the pipeline, :mod:`trainspec.compiler.ladder_rungs`, and tabulated by :mod:`trainspec.explain.ladder_report`)."""

from __future__ import annotations

import argparse
import sys


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
