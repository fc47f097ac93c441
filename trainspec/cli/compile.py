"""``trainspec compile``: write manifests for GitOps (or a YAML stream with ``-o -``)."""

from __future__ import annotations

import argparse
import sys

from trainspec.cli.common import add_input_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    parser.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="output directory, or - for one YAML stream on standard output")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 and list the files that are stale")
    parser.add_argument("--gitops", choices=("argocd",), help="add Argo CD sync waves: runtimes, then claims, then jobs")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from trainspec.cli import report
    from trainspec.cli.common import compile_args, report_foreign
    from trainspec.compiler import emit
    from trainspec.compiler.pipeline import Stop
    from trainspec.dsl.diagnostics import Diagnostic

    to_dir = args.output != "-"
    result = compile_args(args, Stop.EMIT if to_dir else Stop.LOWER, gitops=args.gitops,
                          output=args.output if to_dir else None)
    report_foreign(result, args, sys.stderr)
    if not result.ok:
        report.write(result.diagnostics, sys.stderr, args.format)
        return 1
    if result.diagnostics:
        report.write(result.diagnostics, sys.stderr, args.format)
    if args.output == "-":
        if args.check:
            print("trainspec compile: --check needs an output directory", file=sys.stderr)
            return 2
        sys.stdout.write(emit.render_stream(result.outputs, gitops=args.gitops))
        return 0
    root = Path(args.output)
    files = result.files_text
    if args.check:
        diff = emit.diff_tree(root, files)
        for label, names in (("missing", diff.added), ("stale", diff.changed), ("no longer produced", diff.removed)):
            for name in names:
                print(f"{root / name}: {label}", file=sys.stderr)
        if diff.stale:
            print(f"{args.output} is out of date: run trainspec compile {' '.join(args.paths)} -o {args.output}",
                  file=sys.stderr)
            return 1
        print(f"{args.output} is up to date ({len(files)} files)", file=sys.stderr)
        return 0
    try:
        diff = emit.write_tree(root, files)
    except OSError as exc:
        report.write([Diagnostic(code="TS407", message=f"cannot write {exc.filename or root}: {exc.strerror}",
                                 file=str(root))], sys.stderr, args.format)
        return 1
    if diff.conflicts:
        report.write([Diagnostic(code="TS407", file=str(root / name),
                                 message="file exists and was not written by trainspec; refusing to overwrite it",
                                 hint="move it away, or compile into another directory") for name in diff.conflicts],
                     sys.stderr, args.format)
        return 1
    print(f"wrote {args.output}: {len(diff.added)} added, {len(diff.changed)} changed, "
          f"{len(diff.removed)} removed, {len(files) - len(diff.added) - len(diff.changed)} unchanged", file=sys.stderr)
    return 0
