"""``trainspec compile``: write manifests for GitOps (or a YAML stream with ``-o -``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from trainspec.cli.common import add_input_options
from trainspec.dsl import codes

if TYPE_CHECKING:
    from trainspec.dsl.diagnostics import Diagnostic

#: What the progress line says during each compiler pass.
PASS_LABELS = {
    "load": "reading specs",
    "project": "project file",
    "resolve": "resolving runtimes",
    "plan": "planning",
    "rules": "checking",
    "lower": "building objects",
    "emit": "rendering files",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="DIR",
        help="output directory, or - for one YAML stream on standard output",
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 and list the files that are stale")
    parser.add_argument(
        "--gitops",
        choices=("argocd", "flux"),
        help="the GitOps controller that applies DIR (default: the project's spec.gitops): argocd adds sync waves "
        "(runtimes first); both write no kustomization.yaml, so pull requests adding jobs never conflict",
    )
    parser.add_argument(
        "--allow-volume-removal",
        action="store_true",
        help="let the output lose a PersistentVolumeClaim (a removed job's checkpoints), TS410",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite or delete managed files edited by hand since trainspec wrote them, TS411",
    )
    parser.add_argument(
        "--adopt",
        action="store_true",
        help="write into an existing directory that holds files trainspec did not write and none it did (they "
        "stay as they are, never overwritten nor pruned), TS417; needed once",
    )
    parser.add_argument(
        "--ladder",
        action="store_true",
        help="emit each job's scaling ladder instead of the job: 1 GPU, 1 node, 2, 4 ... nodes up to "
        "its size, each a job of its own (own name, checkpoints, 1h deadline)",
    )


def run(args: argparse.Namespace) -> int:
    from trainspec.cli import report
    from trainspec.cli.common import compile_streamed, report_foreign
    from trainspec.compiler.output_sinks import SpilledStream, SpillFailed, TreeTexts
    from trainspec.compiler.pipeline import Stop
    from trainspec.dsl.diagnostics import escape_text
    from trainspec.progress import Progress, pass_reporter

    to_dir = args.output != "-"
    # Each output is rendered as its batch of specs is lowered (flat memory at any repository size):
    # a tree's files kept as text for the tree writer, a stream spilled to a temporary file.
    try:
        sink = TreeTexts(args.output) if to_dir else SpilledStream()
        # On a terminal, thousands of specs show which pass the compile is in; piped output stays clean.
        with Progress("compiling") as progress:
            result = compile_streamed(
                args,
                Stop.LOWER,
                sink,
                gitops=args.gitops,
                output=args.output if to_dir else None,
                progress=pass_reporter(progress, PASS_LABELS),
                ladder=args.ladder,
            )
    except SpillFailed as exc:  # nothing was written: the output directory is as it was
        report.write([_spill_problem(exc)], sys.stderr, args.format)
        return 1
    report_foreign(result, args, sys.stderr)
    collisions = [_collision(*found) for found in getattr(sink, "collisions", ())]
    if not result.ok or collisions:
        report.write([*result.diagnostics, *collisions], sys.stderr, args.format)
        return 1
    # No spec at all is an error (TS418) for an output directory, whose files it would all prune; an
    # empty stream is what validate says of the same inputs (nothing), and kubectl refuses to apply it.
    no_spec = [] if result.specs or result.streamed or not to_dir else [_no_spec(args, result)]
    if result.diagnostics or no_spec:
        report.write([*result.diagnostics, *no_spec], sys.stderr, args.format)
    if args.output == "-" and args.check:
        print("trainspec compile: --check needs an output directory", file=sys.stderr)
        return 2
    if no_spec:
        if to_dir:
            print(f"trainspec compile: {escape_text(args.output)} was left as it was", file=sys.stderr)
        return 1
    with sink:
        try:
            if isinstance(sink, SpilledStream):
                sink.write_to(sys.stdout)
                return 0
            return _write_tree(args, result, sink)
        except SpillFailed as exc:  # read back: a tree is swapped in whole or not at all
            report.write([_spill_problem(exc)], sys.stderr, args.format)
            return 1


def _spill_problem(exc: Any) -> Any:
    from trainspec.dsl import codes
    from trainspec.dsl.diagnostics import Diagnostic, Severity

    return Diagnostic(
        code=codes.OUTPUT_UNWRITABLE,
        message=f"{exc}: the compiled files are kept there until they are written out",
        severity=Severity.ERROR,
        file=exc.directory,
        hint="free space there, or point TMPDIR at a directory with room",
    )


def _collision(path: str, kept: tuple[str, ...], lost: tuple[str, ...]) -> Any:
    """TS407 for two outputs of one path: the tree holds one file there, so one would be lost."""
    from trainspec.dsl import codes
    from trainspec.dsl.diagnostics import Diagnostic, Severity

    others = ", ".join(kept) or "another output"
    return Diagnostic(
        code=codes.OUTPUT_UNWRITABLE,
        message=f"its output file {path} is also the file of {others}: the tree would lose one of them",
        severity=Severity.ERROR,
        file=next((source for source in lost if not source.startswith("<")), None),
        hint="rename the job, or move it to another namespace (runtimes/ holds the runtimes' files)",
    )


def _write_tree(args: argparse.Namespace, result: Any, sink: Any) -> int:
    """Day 2's checks over the directory's current files, then the tree written as a whole."""
    from trainspec.check.day2 import changed_files, parse_objects, run_notes, update_diagnostics
    from trainspec.check.manifests import compiled_manifests
    from trainspec.cli import report
    from trainspec.compiler.outtree import emit_directory
    from trainspec.dsl.diagnostics import escape_text

    files_text = sink.files(result.gitops)
    project = result.project_spec
    inputs = [
        *args.paths,
        *(args.values or ()),
        *(s.file for s in result.specs),
        *sink.sources(),  # a streamed run's spec files, from the files compiled from them
        *([project.file] if project is not None else []),
    ]
    # Day 2: the objects the tree holds now are what the cluster has; an update it would refuse
    # stops the compile before anything is written (and fails --check).
    changed = changed_files(args.output, files_text)
    previous = parse_objects(list(changed.values()))
    if previous and result.streamed:
        # A streamed run kept no objects: compile again only what the changed files come from.
        result = _compiled_again(args, result, sink.sources(list(changed)))
    manifests = compiled_manifests(result) if previous else []
    refused = update_diagnostics(result, previous, manifests) if previous else []
    if refused:
        report.write(refused, sys.stderr, args.format)
        if any(d.is_error for d in refused):
            print(f"trainspec compile: {escape_text(args.output)} was left as it was", file=sys.stderr)
            return 1
    outcome = emit_directory(
        args.output,
        files_text,
        inputs=inputs,
        check=args.check,
        force=args.force,
        allow_volume_removal=args.allow_volume_removal,
        rerun=f"trainspec compile {' '.join(args.paths)}{' --ladder' * args.ladder} -o {args.output}",
        adopt=args.adopt,
    )
    for line in outcome.messages:  # they name the paths given: escaped for the terminal
        print(escape_text(line, backslashes=False), file=sys.stderr)
    for line in run_notes(result, previous, manifests) if previous else ():
        print(line, file=sys.stderr)
    if outcome.diagnostics:
        report.write(outcome.diagnostics, sys.stderr, args.format)
    return outcome.exit_code


def _compiled_again(args: argparse.Namespace, streamed: Any, sources: list[str]) -> Any:
    """A whole run over the files the streamed run read whole (runtimes, project) and ``sources``."""
    from trainspec.cli.common import compile_args
    from trainspec.compiler.pipeline import Stop

    paths = sorted({*(s.file for s in streamed.specs), *sources})
    return compile_args(args, Stop.LOWER, paths, gitops=args.gitops, output=args.output, ladder=args.ladder)


def _no_spec(args: argparse.Namespace, result: Any) -> Diagnostic:
    """TS418: the inputs hold no spec, and an empty tree would prune every file trainspec wrote (``-o DIR``)."""
    from trainspec.dsl.diagnostics import Diagnostic

    read, foreign = result.files, len(result.foreign)
    what = f"{read} file{'s' * (read != 1)} read"
    if foreign:
        what += f"; {foreign} document{'s' * (foreign != 1)} not trainspec's: --verbose lists them"
    refused = "write an empty tree (it would prune every file trainspec wrote there)"
    return Diagnostic(
        code=codes.NO_SPECS,
        file="<command line>",
        path="PATH",
        message=f"no spec found in {', '.join(args.paths)} ({what}); refusing to {refused}",
        hint="check the paths and .trainspecignore: a directory is searched for *.yaml, *.yml and spec modules "
        "(*.py) holding documents of apiVersion trainspec.dev/v1alpha1; hidden entries are skipped",
    )
