"""Whether Python spec modules run: ``--no-python``, the library's ``python=``, the project's ``spec.python``.

A Python spec is code. It runs only when the run allows it: the option (``--no-python`` is
``deny``; the library's ``Options(python=...)``) wins; without one, the strictest ``spec.python``
of the project in use and of any Project document among the inputs decides, ``allow`` when none
says otherwise. A project file that cannot be read decides ``deny``: a broken project file must
not be the way to get code run where the project says no. A module that does not run is a TS123
diagnostic at its file: a warning under ``warn``, an error under ``deny``; its specs are not read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.load.discovery import unsafe_name
from trainspec.dsl.load.loaded import DEFAULT_PYTHON_TIMEOUT, LoadedSpec, display_name
from trainspec.dsl.spec.project import Project, PythonPolicy

Loaded = tuple[list[LoadedSpec], list[Diagnostic]]

_STRICTNESS = {PythonPolicy.ALLOW: 0, PythonPolicy.WARN: 1, PythonPolicy.DENY: 2}


def load_modules(
    paths: list[Path],
    *,
    python: Any = None,
    project: Any = None,
    project_file: str | None = None,
    read: list[tuple[Path, Loaded]] | None = None,
    timeout: float | None = DEFAULT_PYTHON_TIMEOUT,
) -> list[Loaded]:
    """Specs and diagnostics of each Python spec module in ``paths``, in order, run only if allowed.

    ``read``: the other files of the run and what they gave (their Project documents count);
    the other arguments: see :func:`decide`.
    """
    from trainspec.dsl.load.python.module import load_python_many, not_run

    policy, reason = decide(python, project, project_file, read or [])
    out: list[Loaded] = [([], [])] * len(paths)
    pending: list[int] = []
    for index, path in enumerate(paths):
        refused = unsafe_name(str(path))
        if refused is not None:
            out[index] = ([], [refused])
        elif policy is PythonPolicy.ALLOW:
            pending.append(index)
        else:
            severity = Severity.WARNING if policy is PythonPolicy.WARN else Severity.ERROR
            out[index] = ([], [not_run(display_name(path), severity, reason)])
    ran = load_python_many([(paths[i], display_name(paths[i])) for i in pending], timeout=timeout)
    for index, result in zip(pending, ran, strict=True):
        out[index] = result
    return out


def decide(
    python: Any, project: Any, project_file: str | None, read: list[tuple[Path, Loaded]]
) -> tuple[PythonPolicy, str]:
    """The policy of a run and the reason given when modules do not run.

    ``python``: the option (``allow``, ``warn``, ``deny`` or a :class:`PythonPolicy`; None: the
    project decides); ``project``: a Project object given in code; ``project_file``: the project
    file in use, among ``read``.
    """
    if python is not None:
        policy = PythonPolicy(python)
        if policy is PythonPolicy.DENY:
            return policy, "Python is not allowed in this run (--no-python)"
        return policy, f"this run sets python: {policy.value}"
    if project_file is not None and _unreadable(project_file, read):
        return PythonPolicy.DENY, "the project file, which says whether Python specs run, has errors"
    projects = [project] if isinstance(project, Project) else []
    projects += [s.spec for _, (specs, _) in read for s in specs if isinstance(s.spec, Project)]
    policy = max((p.spec.python for p in projects), key=_STRICTNESS.__getitem__, default=PythonPolicy.ALLOW)
    return policy, f"the project sets spec.python: {policy.value}"


def _unreadable(project_file: str, read: list[tuple[Path, Loaded]]) -> bool:
    """Whether the project file was read with an error or without a Project in it."""
    wanted = os.path.realpath(project_file)
    for path, (specs, problems) in read:
        if os.path.realpath(path) == wanted:
            return any(d.is_error for d in problems) or not any(isinstance(s.spec, Project) for s in specs)
    return False
