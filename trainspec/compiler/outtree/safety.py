"""Which ``-o`` directories trainspec refuses: those whose replacement could lose the user's work.

The output tree is replaced as a whole and files trainspec wrote are pruned, so ``-o`` must name
a directory of its own: not empty (the working directory), not ``/``, not the home directory,
not a repository root (it holds ``.git``) or anything inside ``.git``, not the working directory
or one of its parents, and not a directory holding the compile's own inputs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic

_HINT = "compile into a directory of its own, for example -o deploy/"


def unsafe_output(
    output: str, inputs: Iterable[str] = (), *, cwd: str | None = None, home: str | None = None
) -> Diagnostic | None:
    """TS412 (a usage error) when ``output`` must not be written, else None.

    ``inputs`` are the files and directories the compile read (specs, values, project file).
    ``cwd`` and ``home`` default to the process's working and home directories.
    """
    if not output.strip():
        return _refuse(output, "is empty, which would write into the working directory")
    real = os.path.realpath(output)
    if os.path.dirname(real) == real:
        return _refuse(output, "is the root of the filesystem")
    if ".git" in Path(os.path.abspath(output)).parts or ".git" in Path(real).parts:
        return _refuse(output, "is inside a .git directory")
    if os.path.lexists(os.path.join(real, ".git")):
        return _refuse(output, "holds .git: it is a repository's root")
    home = home if home is not None else _home()
    if home is not None:
        reason = _overlap(real, os.path.realpath(home), "your home directory")
        if reason:
            return _refuse(output, reason)
    reason = _overlap(real, os.path.realpath(cwd if cwd is not None else os.getcwd()), "the working directory")
    if reason:
        return _refuse(output, reason)
    for item in inputs:
        if item and item != "-" and not item.startswith("<") and _inside(os.path.realpath(item), real):
            return _refuse(output, f"holds {item}, an input of this compile")
    return None


def _home() -> str | None:
    try:
        return str(Path.home())
    except (RuntimeError, KeyError):  # no HOME and no passwd entry
        return None


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _overlap(real: str, other: str, label: str) -> str | None:
    if real == other:
        return f"is {label}"
    if _inside(other, real):
        return f"contains {label}"
    return None


def _refuse(output: str, why: str) -> Diagnostic:
    return Diagnostic(
        code=codes.UNSAFE_OUTPUT_DIR,
        file="<command line>",
        line=None,
        column=None,
        path="-o",
        message=f"output directory {output!r} {why}; refusing to write there",
        hint=_HINT,
    )
