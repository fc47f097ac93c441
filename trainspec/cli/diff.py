"""``trainspec diff``: what changed between two sets of specs, by meaning, keyed by job and runtime.

``trainspec diff OLD NEW`` compares two files or directories; ``trainspec diff --git REF [PATH...]``
compares the specs at a git ref with the working tree. Exit 0: no change, 1: changes, 2: usage
error or a side that does not compile (its diagnostics are printed).

Only argparse is imported at start-up; the compiler loads when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_SAME, EXIT_CHANGED, EXIT_FAILED = 0, 1, 2
_NONE = ""  # "no project file" for one side (an explicit empty choice, not discovery)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from trainspec.cli.common import add_input_options

    # The options every compiling command takes (one builder: compile and diff read specs alike);
    # only the paths, the formats and the project default read differently here.
    add_input_options(
        parser,
        formats=("text", "markdown", "json"),
        paths_required=False,
        paths_help="OLD NEW: two spec files or directories (one may be - for standard input); "
        "with --git: the paths to compare (default .)",
        format_help="text (default), markdown (a table for pull requests) or json",
        project_help="project file for both sides (with --git, the old side reads its version at REF); "
        "default: each side's nearest trainspec.yaml",
    )
    parser.add_argument(
        "--git", metavar="REF", help="compare the specs at git REF (a commit, branch or tag) with the working tree"
    )


def _side(args: argparse.Namespace, paths: list[str], project: Any = None, sink: Any = None) -> Any:
    """Compile one side: its own nearest project file unless --project/--no-project say otherwise.

    With ``sink`` (a :class:`~trainspec.diff.job_digests.DiffSink`), a repository's job files are
    compiled a batch at a time and the sink keeps a digest per job.
    """
    from pathlib import Path

    from trainspec.cli.common import pipeline_options, project_choice
    from trainspec.compiler.pipeline import DISCOVER, Stop, run

    choice = project if project is not None else project_choice(args)
    if choice == _NONE:
        choice = None
    start = None
    if choice is DISCOVER and paths:
        first = Path(paths[0])
        start = str(first if first.is_dir() else first.parent)
    options = pipeline_options(args, Stop.LOWER, project=choice, cwd=start)
    if sink is None:
        return run(paths, options)
    from trainspec.compiler.streaming import run_streamed

    return run_streamed(paths, options, sink)


def _again(args: argparse.Namespace, old: Any, old_jobs: Any, new: Any, new_jobs: Any) -> tuple[Any, Any]:
    """Streamed sides kept digests only: compile again, as a whole, what :func:`diff_results` must see."""
    from trainspec.diff.job_digests import changed_files

    old_files, new_files = changed_files(old, old_jobs, new, new_jobs)
    sides = []
    for side, files in ((old, old_files), (new, new_files)):
        again = _side(args, files, project=side.project_spec.file if side.project_spec is not None else _NONE)
        # What the whole side read and said (--verbose lists its foreign documents) stays the side's.
        again.foreign, again.diagnostics, again.files = side.foreign, side.diagnostics, side.files
        sides.append(again)
    return sides[0], sides[1]


def _streamed(*sides: Any) -> bool:
    """Whether a side was read in batches (its result holds no plans for those) and all compiled."""
    return any(side.streamed_files for side in sides) and not any(d.is_error for s in sides for d in s.diagnostics)


def _no_spec(args: argparse.Namespace, old: Any, new: Any) -> Any:
    """TS418: neither side holds a spec; "no changes" would say nothing of what was given."""
    from trainspec.dsl import codes
    from trainspec.dsl.diagnostics import Diagnostic, Severity

    foreign = len(old.foreign) + len(new.foreign)
    what = f"{old.files + new.files} files read"
    if foreign:
        what += f"; {foreign} documents not trainspec's (compiled manifests?): --verbose lists them"
    return Diagnostic(
        code=codes.NO_SPECS,
        message=f"no spec on either side ({what}): diff compares specs",
        severity=Severity.ERROR,
        file="<command line>",
        path="PATH",
        hint="give the spec directories (trainspec diff OLD-SPECS NEW-SPECS), or --git REF with the specs' path",
    )


def _nearest_project(path: str) -> str | None:
    from trainspec.dsl.spec.project import find_project_file

    return find_project_file(path)


def _relocate(diagnostics: list, root: str, ref: str) -> list:
    """Diagnostics of the exported tree, named ``REF:path`` instead of a temporary path."""
    from trainspec.dsl.record import replace

    prefix = root.rstrip("/") + "/"

    def name(file: str | None) -> str | None:
        return f"{ref}:{file[len(prefix) :]}" if file and file.startswith(prefix) else file

    return [
        replace(d, file=name(d.file), related=tuple(replace(r, file=name(r.file)) for r in d.related))
        for d in diagnostics
    ]


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from trainspec.cli import report
    from trainspec.compiler.outtree.gitref import GitError, export_ref
    from trainspec.diff import diff_results
    from trainspec.diff.render import render

    if not args.git and len(args.paths) != 2:
        print("trainspec diff: give OLD and NEW (two files or directories), or --git REF [PATH...]", file=sys.stderr)
        return EXIT_FAILED
    # `-` is standard input, read once: one side at most, and never a path looked up at a git ref.
    if args.paths.count("-") > 1 or (args.git and "-" in args.paths):
        said = "with --git, the paths name files at REF and here" if args.git else "it can be read only once"
        print(f"trainspec diff: `-` (standard input) is one side at most: {said}", file=sys.stderr)
        return EXIT_FAILED
    from trainspec.diff.job_digests import DiffSink

    old_jobs, new_jobs = DiffSink(), DiffSink()
    if args.git:
        paths = args.paths or ["."]
        project = None if args.no_project else (args.project or _nearest_project(paths[0]))
        new = _side(args, paths, project=project if project else _NONE, sink=new_jobs)
        try:
            with export_ref(args.git, paths, Path.cwd(), Path(project) if project else None) as exported:
                old_paths = [str(p) for p in exported.paths if p is not None]
                # No path existed at the ref: an empty side, so every job shows up as added.
                old = _side(
                    args, old_paths, project=str(exported.project) if exported.project else _NONE, sink=old_jobs
                )
                if _streamed(old, new):  # while the exported tree is there
                    old, new = _again(args, old, old_jobs, new, new_jobs)
                old.diagnostics = _relocate(old.diagnostics, str(exported.root), args.git)
        except GitError as exc:
            print(f"trainspec diff: {exc}", file=sys.stderr)
            return EXIT_FAILED
    else:
        old = _side(args, [args.paths[0]], sink=old_jobs)
        new = _side(args, [args.paths[1]], sink=new_jobs)
        if _streamed(old, new):
            old, new = _again(args, old, old_jobs, new, new_jobs)
    from trainspec.cli.common import report_foreign

    for result in (old, new):  # --verbose: the documents each side left alone
        report_foreign(result, args, sys.stderr)
    failed = [d for result in (old, new) for d in result.diagnostics if d.is_error]
    if failed:
        report.write(failed, sys.stderr)
        print("trainspec diff: the specs do not compile; fix the errors above to compare them", file=sys.stderr)
        return EXIT_FAILED
    if not any(side.specs or side.streamed for side in (old, new)):
        report.write([_no_spec(args, old, new)], sys.stderr)
        return EXIT_FAILED
    diff = diff_results(old, new)
    sys.stdout.write(render(diff, args.format))
    # Day 2: the old side's objects are what the cluster has; say which updates it would refuse.
    from trainspec.check.day2 import update_diagnostics
    from trainspec.compiler.emit import manifest_dicts

    previous = [d for output in old.outputs for d in manifest_dicts(output.objects)]
    refused = update_diagnostics(new, previous)
    if refused:
        report.write(refused, sys.stderr)
    return EXIT_CHANGED if diff.changed else EXIT_SAME
