"""``trainspec explain``: each job's resolved plan, where every value came from, and estimates.

Only argparse is imported at start-up; the compiler and the renderers load when the command runs.
"""

from __future__ import annotations

import argparse
import sys

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
    parser.add_argument("paths", nargs="+", metavar="SPEC",
                        help="spec files or directories (searched for *.yaml, *.yml, *.py)")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text (default), markdown (a table for pull requests), json, or mermaid (a flowchart)")
    parser.add_argument("--gpu-hour-price", type=_price, metavar="PRICE",
                        help="price of one GPU-hour, for the cost estimate (default: spec.pricing.gpuHour of the "
                             "project file)")
    parser.add_argument("--values", metavar="FILE", action="append", default=[],
                        help="values for {{ values.x }} templates (YAML mapping; repeat to layer files)")
    project = parser.add_mutually_exclusive_group()
    project.add_argument("--project", metavar="FILE",
                         help="project file (default: trainspec.yaml in this directory or the nearest parent "
                              "up to the repository root)")
    project.add_argument("--no-project", action="store_true", help="ignore any trainspec.yaml")


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.cli.common import load_values, project_file
    from trainspec.compiler.pipeline import compile_paths
    from trainspec.dsl.diagnostics import has_errors
    from trainspec.explain import explain_plan, render

    values, problems = load_values(args.values)
    if problems:
        report.write(problems, sys.stderr)
        return 1
    result = compile_paths(args.paths, values=values, project=project_file(args))
    explanations = [explain_plan(plan, result.project, price=args.gpu_hour_price) for plan in result.plans]
    # Jobs that resolved are explained even when another spec has errors: explain is how people
    # find out why (a GPU ceiling, a missing queue); the errors still go to stderr and exit 1.
    sys.stdout.write(render(explanations, args.format))
    if result.diagnostics:
        report.write(result.diagnostics, sys.stderr)
    return 1 if has_errors(result.diagnostics) else 0
