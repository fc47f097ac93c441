"""``trainspec migrate``: turn PyTorchJob, MPIJob, RayJob and TrainJob manifests into specs.

Specs go to standard output as one YAML stream, or with ``-o DIR`` one file per input file under
DIR (never over a file trainspec migrate did not write). Every field that is not carried is a
located warning on standard error; nothing is written when any manifest cannot be migrated.
"""

from __future__ import annotations

import argparse
import sys

from trainspec.compiler.engines import DEFAULT_ENGINE, ENGINE_NAMES

#: trainspec.migrate.convert.TARGETS (not imported: the CLI starts without it); a test keeps them equal.
TARGETS = (DEFAULT_ENGINE.value, "source", *(name for name in ENGINE_NAMES if name != DEFAULT_ENGINE.value))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="FILE",
        help="manifests to migrate (files or directories of *.yaml / *.yml; - reads standard input)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="write one spec file per input file under DIR (default: one YAML stream on standard output)",
    )
    parser.add_argument(
        "--target",
        choices=TARGETS,
        default=DEFAULT_ENGINE.value,
        help="engine of the result: trainer (default; jobs Trainer cannot run as they are keep "
        "their engine, TS546), source (every job keeps its engine), or ray / "
        "training-operator",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="format of the diagnostics")


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.migrate import migrate
    from trainspec.migrate.writer import write_files

    result = migrate(args.paths, target=args.target)
    if not result.ok:
        report.write(result.diagnostics, sys.stderr, args.format)
        return 1
    if result.diagnostics:
        report.write(result.diagnostics, sys.stderr, args.format)
    if args.output is None:
        sys.stdout.write(result.to_yaml())
        return 0
    written = write_files(args.output, {f.name: f.text for f in result.files})
    for path in written.written:
        print(f"wrote {path}", file=sys.stderr)
    if written.diagnostics:
        report.write(written.diagnostics, sys.stderr, args.format)
        return 1
    return 0
