"""``trainspec validate``: every problem of every spec, at once, without writing anything."""

from __future__ import annotations

import argparse
import sys

from trainspec.cli.common import add_input_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing when everything is valid")


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.cli.common import compile_streamed, report_foreign
    from trainspec.compiler.pipeline import Stop

    # The same passes as compile, stopped before lowering: every rule runs, nothing is built. A
    # repository's job files go through them a batch at a time (flat memory at any size).
    result = compile_streamed(args, Stop.VALIDATE)
    report_foreign(result, args, sys.stdout)
    report.write(result.diagnostics, sys.stdout, args.format, files=result.files, quiet=args.quiet)
    return 0 if result.ok else 1
