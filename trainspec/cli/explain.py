"""``trainspec explain``: each job's resolved plan, where every value came from, and estimates.

Only argparse is imported at start-up; the compiler and the renderers load when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

FORMATS = ("text", "markdown", "json", "mermaid")


def _price(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{raw!r} is not a price (a number >= 0)")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from trainspec.cli.common import add_input_options

    add_input_options(parser, formats=FORMATS)
    parser.add_argument(
        "--gpu-hour-price",
        type=_price,
        metavar="PRICE",
        help="price of one GPU-hour, for the cost estimate (default: spec.pricing.gpuHour of the project file)",
    )
    parser.add_argument(
        "--ladder",
        action="store_true",
        help="show each job's scaling ladder (the jobs compile --ladder writes) instead of the job",
    )


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.cli.common import compile_args, report_foreign
    from trainspec.compiler.pipeline import Stop
    from trainspec.dsl.diagnostics import has_errors
    from trainspec.explain import explain_plan, render

    if args.ladder:
        from trainspec.cli.ladder import explain_ladder

        return explain_ladder(args)
    result = compile_args(args, Stop.LOWER)
    report_foreign(result, args, sys.stderr)
    explanations = [explain_plan(plan, result.project, price=args.gpu_hour_price) for plan in result.plans]
    # Jobs that resolved are explained even when another spec has errors: explain is how people
    # find out why (a GPU ceiling, a missing queue); the errors still go to stderr and exit 1.
    text = render(explanations, args.format)
    if result.pipelines and args.format in ("text", "json"):
        text = _with_pipelines(text, result.pipelines, explanations, args.format)
    sys.stdout.write(text)
    if result.diagnostics:
        report.write(result.diagnostics, sys.stderr)
    return 1 if has_errors(result.diagnostics) else 0


def _with_pipelines(text: str, graphs: list[Any], explanations: list[Any], fmt: str) -> str:
    """The pipelines' blocks after the jobs' (text), or a ``pipelines`` list beside ``jobs`` (JSON)."""
    from trainspec.explain.pipeline_summary import as_dict, render_text, summarize

    summaries = [summarize(graph, explanations) for graph in graphs]
    if fmt == "json":
        import json

        data = json.loads(text)
        data["pipelines"] = [as_dict(summary) for summary in summaries]
        return json.dumps(data, indent=2) + "\n"
    return text + "".join("\n" + render_text(summary) for summary in summaries)
