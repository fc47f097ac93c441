"""The ``trainspec`` command line. Each command imports only what it needs, when it runs."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from types import ModuleType

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
#: The hidden command the shell completion scripts call for job, namespace and context names.
COMPLETE_NAMES = "__complete"

COMMANDS = {
    "validate": ("trainspec.cli.validate", "check specs and report every problem at once"),
    "compile": (
        "trainspec.cli.compile",
        "compile specs into manifests (Trainer TrainJobs, RayJobs, PyTorchJobs/MPIJobs)",
    ),
    "check": ("trainspec.cli.check", "check compiled or given manifests against CRDs, webhooks and the Kueue queues"),
    "schema": ("trainspec.cli.schema", "print the JSON Schema of the spec language"),
    "explain": ("trainspec.cli.explain", "show each job's resolved plan, value origins, memory fit and cost"),
    "diff": ("trainspec.cli.diff", "compare two sets of specs by meaning (jobs, GPUs, images, queues...)"),
    "kfp": ("trainspec.cli.kfp", "compile a spec into a Kubeflow Pipelines pipeline (or print its RBAC)"),
    "completion": ("trainspec.cli.completion", "print a shell completion script (bash, zsh or fish)"),
    "run": ("trainspec.cli.run", "run a job on this machine the way the cluster would (run --local)"),
    "ladder": (
        "trainspec.cli.ladder",
        "climb a job's scaling ladder rung after rung (on the cluster or --local) and print the measured scaling",
    ),
    "submit": ("trainspec.cli.submit", "compile and server-side apply jobs to the current kubeconfig context"),
    "status": ("trainspec.cli.status", "show a TrainJob's phase, Kueue admission, pods and progress"),
    "list": ("trainspec.cli.listing", "list the TrainJobs of a namespace with their phase"),
    "logs": ("trainspec.cli.logs", "print or follow a TrainJob's pod logs, prefixed with node and rank"),
    "cancel": ("trainspec.cli.cancel", "delete a TrainJob (foreground) and keep its checkpoint PVC"),
    "migrate": ("trainspec.cli.migrate", "turn PyTorchJob, MPIJob, RayJob and TrainJob manifests into specs"),
    "gitops": ("trainspec.cli.gitops", "print GitOps add-ons: Argo CD health checks for the job kinds"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # usage errors exit 2, like every command here
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse sizes every formatter to the terminal with shutil (2 ms to import) and
        # add_argument makes one per option (to check its metavar): the same width, found
        # without shutil and once per parser (asking the terminal cost a system call and two
        # caught exceptions per option).
        width = self.__dict__.get("_trainspec_width")
        if width is None:
            width = self._trainspec_width = _terminal_columns() - 2
        # typeshed's formatter_class protocol names prog only; every argparse formatter takes width.
        return self.formatter_class(prog=self.prog, width=width)  # type: ignore[call-arg]


def _terminal_columns() -> int:
    """The width ``shutil.get_terminal_size()`` reports: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__  # None in an embedded interpreter without a console
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def build_parser(only: str | None = None, *, alone: bool = False, listed: bool = False) -> argparse.ArgumentParser:
    """The command-line parser; with ``only``, just that command's options are added.

    Every command is still listed (for ``--help`` and error messages), but importing and
    configuring the others would cost each run a few milliseconds for nothing. With ``alone``
    the other commands are left out altogether: for a command line that starts with ``only``,
    the top-level parser prints no help or error of its own, so nothing would list them. With
    ``listed`` (and no ``only``) every command is listed and none has its options: enough for a
    command line that names no command, which the top-level parser answers alone (its help, the
    version, or an error).
    """
    from trainspec import __version__

    parser = _Parser(
        prog="trainspec",
        description="Validate training specs and compile them into the "
        "Kubernetes resources that run distributed training.",
    )
    parser.add_argument("--version", action="version", version=f"trainspec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, (module, help_text) in COMMANDS.items():
        if alone and name != only:
            continue
        command = sub.add_parser(name, help=help_text, description=help_text)
        if (only is None and not listed) or name == only:
            _import(module).add_arguments(command)
        command.set_defaults(module=module)
    return parser


def _import(module: str) -> ModuleType:
    import importlib

    return importlib.import_module(module)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == [COMPLETE_NAMES]:  # the completion scripts' helper: hidden from help and completion
        return int(_import("trainspec.cli.complete_names").main(words[1:]))
    chosen = next((w for w in words if not w.startswith("-")), None)
    known = chosen if chosen in COMMANDS else None
    # A line whose first plain word is not a command never reaches a command's parser (argparse
    # stops at that word, or at --help/--version before it): no command module is imported for it.
    args = build_parser(known, alone=known is not None and words[0] == known, listed=known is None).parse_args(words)
    try:
        return int(_import(args.module).run(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # an internal defect: say so briefly, exit 2
        if os.environ.get("TRAINSPEC_DEBUG"):
            raise
        print(
            f"trainspec: internal error: {type(exc).__name__}: {exc} "
            "(set TRAINSPEC_DEBUG=1 for the traceback; please report it)",
            file=sys.stderr,
        )
        return EXIT_USAGE


def console() -> NoReturn:
    """The ``trainspec`` program (console script and ``python -m trainspec``): :func:`main`, then exit.

    Before exiting, the heap is frozen out of the garbage collector (``gc.freeze``): the exit
    still runs as usual (atexit handlers, files flushed and closed, modules torn down), but the
    last collection Python runs at exit no longer walks every object the command left (about
    6 ms after a ``validate``, a tenth of its run) only to find the cycles that exit frees anyway.
    """
    code = main()
    import gc

    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    console()
