"""``trainspec schema``: print a JSON Schema of the spec language."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kind",
        choices=("all", "Runtime", "TrainingJob", "Pipeline"),
        default="all",
        help="one kind, or all (dispatching on kind)",
    )


def run(args: argparse.Namespace) -> int:
    from trainspec.schemas import schema_text

    sys.stdout.write(schema_text(args.kind))
    return 0
