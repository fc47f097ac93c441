"""``trainspec validate``: every problem of every spec, at once, without writing anything."""

from __future__ import annotations

import argparse
import sys

from trainspec.cli.common import add_input_options, load_values, project_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing when everything is valid")


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.compiler.pipeline import compile_paths
    from trainspec.dsl.diagnostics import has_errors

    values, problems = load_values(args.values)
    if problems:
        report.write(problems, sys.stdout, args.format)
        return 1
    result = compile_paths(args.paths, values=values, project=project_file(args), lower=False)
    report.write(result.diagnostics, sys.stdout, args.format, files=result.files, quiet=args.quiet)
    return 1 if has_errors(result.diagnostics) else 0
