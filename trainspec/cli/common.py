"""Options and steps shared by commands."""

from __future__ import annotations

import argparse
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic


def add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="spec files or directories (searched for *.yaml, *.yml, *.py)")
    parser.add_argument("--values", metavar="FILE", action="append", default=[],
                        help="values for {{ values.x }} templates (YAML mapping; repeat to layer files)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="diagnostics format")
    project = parser.add_mutually_exclusive_group()
    project.add_argument("--project", metavar="FILE",
                         help="project file (default: trainspec.yaml in this directory or the nearest parent "
                              "up to the repository root)")
    project.add_argument("--no-project", action="store_true", help="ignore any trainspec.yaml")


def project_file(args: argparse.Namespace) -> str | None:
    """The project file the command uses, if any."""
    if args.no_project:
        return None
    if args.project:
        return args.project
    from pathlib import Path

    from trainspec.dsl.project import find_project_file

    found = find_project_file(Path.cwd())
    return str(found) if found else None


def load_values(files: list[str]) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """Merge values files, later ones winning key by key at the top level."""
    if not files:
        return None, []
    from trainspec.dsl.sources import display_name
    from trainspec.dsl.yaml_loader import load_file
    from pathlib import Path

    merged: dict[str, Any] = {}
    problems: list[Diagnostic] = []
    for file in files:
        docs, found = load_file(file, display_name(Path(file)))
        problems.extend(found)
        if not found and len(docs) != 1:
            problems.append(Diagnostic(code="TS308", message="a values file must hold exactly one mapping",
                                       file=file, line=1, column=1))
        for doc in docs[:1]:
            merged.update(doc.data)
    return merged, problems
