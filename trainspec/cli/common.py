"""Options every compiling command shares, and how they become :class:`~trainspec.compiler.pipeline.Options`.

The commands only parse arguments: what a flag means is decided by the pipeline's options,
so validate, compile, check, explain, diff and kfp read the same project file, values and
target in the same way the library does.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from trainspec.compiler.pipeline import CompileResult, Options, Stop
    from trainspec.compiler.streaming import Sink
    from trainspec.dsl.load.strict_yaml import LoadLimits

_DEFAULT_TARGET = "trainer=2.3,kueue=0.19"


def add_input_options(
    parser: argparse.ArgumentParser,
    *,
    formats: tuple[str, ...] = ("text", "json"),
    paths_required: bool = True,
    target: bool = True,
    paths_help: str = "spec files or directories (searched for *.yaml, *.yml, *.py); - reads YAML from standard input",
    format_help: str = "output format",
    project_help: str = "project file (default: trainspec.yaml in this directory or the nearest parent up to the "
    "repository root)",
) -> None:
    """PATHs, ``--values``, ``--format``, ``--project``/``--no-project``, ``--target``, ``--python-timeout``,
    ``--no-python``, ``--max-file-size``, ``--verbose``: every command that compiles takes these
    (the ``*_help`` arguments only reword a flag's help for a command, never its meaning)."""
    parser.add_argument("paths", nargs="+" if paths_required else "*", metavar="PATH", help=paths_help)
    parser.add_argument(
        "--values",
        metavar="FILE",
        action="append",
        default=[],
        help="values for {{ values.x }} templates (YAML mapping; repeat to layer files)",
    )
    parser.add_argument("--format", choices=formats, default=formats[0], help=format_help)
    project = parser.add_mutually_exclusive_group()
    project.add_argument("--project", metavar="FILE", help=project_help)
    project.add_argument("--no-project", action="store_true", help="ignore any trainspec.yaml")
    if target:
        add_target_option(parser)
    parser.add_argument(
        "--python-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="how long a Python spec module may run (default 10; 0: no limit)",
    )
    parser.add_argument(
        "--no-python",
        action="store_true",
        help="run no Python spec module (each one found is an error, TS123): for changes from untrusted contributors",
    )
    parser.add_argument(
        "--max-file-size",
        type=_file_size,
        metavar="SIZE",
        help="largest YAML file read (default 4MiB, enough for the largest object the "
        "API server stores; e.g. 8MiB, 10MB, 4194304)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also list the documents left alone as not trainspec's (Kubernetes manifests, ...)",
    )


def add_target_option(parser: argparse.ArgumentParser) -> None:
    """``--target trainer=X.Y,kueue=X.Y``: the cluster versions to compile and check for."""
    parser.add_argument(
        "--target",
        type=_target_option,
        metavar="trainer=X.Y,kueue=X.Y",
        help="cluster versions to emit for (default: the project file's spec.target, else "
        f"{_DEFAULT_TARGET}); kueue=none without Kueue",
    )


def _target_option(text: str) -> dict[str, Any]:
    from trainspec.compiler.targets import parse_target_option

    try:
        return parse_target_option(text)
    except ValueError as exc:  # argparse turns this into a usage error (exit 2)
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (>= 0)")
    return value


def _file_size(text: str) -> int:
    from trainspec.dsl.load.strict_yaml import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:  # argparse turns this into a usage error (exit 2)
        raise argparse.ArgumentTypeError(str(exc)) from None


def load_limits(args: argparse.Namespace) -> LoadLimits | None:
    """The loader's caps the arguments ask for (``--max-file-size``), or None for the defaults."""
    size = getattr(args, "max_file_size", None)
    if size is None:
        return None
    from trainspec.dsl.load.strict_yaml import LoadLimits

    return LoadLimits(max_bytes=size)


def project_choice(args: argparse.Namespace) -> Any:
    """``--no-project`` -> None, ``--project FILE`` -> FILE, else discover it (as the library does)."""
    from trainspec.compiler.pipeline import DISCOVER

    if getattr(args, "no_project", False):
        return None
    return getattr(args, "project", None) or DISCOVER


def pipeline_options(args: argparse.Namespace, stop: Stop, **extra: Any) -> Options:
    """The pipeline options a command's arguments ask for; ``extra`` adds or overrides fields
    (``diff`` gives each side its own ``project`` and ``cwd``)."""
    from trainspec.compiler.pipeline import Options

    chosen: dict[str, Any] = {
        "project": project_choice(args),
        "values_files": tuple(getattr(args, "values", []) or ()),
        "target": getattr(args, "target", None),
        "stop": stop,
        "python_timeout": getattr(args, "python_timeout", None),
        "python": "deny" if getattr(args, "no_python", False) else None,
        "limits": load_limits(args),
    }
    return Options(**{**chosen, **extra})


def compile_args(args: argparse.Namespace, stop: Stop, paths: list[str] | None = None, **extra: Any) -> CompileResult:
    """Run the pipeline for a command."""
    from trainspec.compiler.pipeline import run

    return run(args.paths if paths is None else paths, pipeline_options(args, stop, **extra))


def compile_streamed(args: argparse.Namespace, stop: Stop, sink: Sink | None = None, **extra: Any) -> CompileResult:
    """Run the pipeline for a command over a repository of any size: job-only files in batches,
    their outputs handed to ``sink`` (trainspec.compiler.streaming)."""
    from trainspec.compiler.streaming import run_streamed

    return run_streamed(args.paths, pipeline_options(args, stop, **extra), sink)


def report_foreign(result: CompileResult, args: argparse.Namespace, stream: TextIO) -> None:
    """With ``--verbose``: the documents that were read and left alone, and why."""
    if not getattr(args, "verbose", False) or getattr(args, "format", "text") == "json":
        return
    from trainspec.cli.report import location

    for doc in result.foreign:
        what = " ".join(filter(None, (doc.api_version, doc.kind))) or "no apiVersion"
        stream.write(f"{location(doc.file, doc.line, doc.column)}: ignored: not a trainspec document ({what})\n")
    if result.foreign:
        stream.write(f"{len(result.foreign)} document{'s' * (len(result.foreign) != 1)} ignored as not trainspec's\n")
