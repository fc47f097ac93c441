"""The library entry points: ``trainspec.load``, ``trainspec.validate`` and ``trainspec.compile``.

They run the same pipeline as the command line (:mod:`trainspec.compiler.pipeline`), with
the same project-file discovery, values, target and policy, so ``trainspec.validate(...)``
reports exactly what ``trainspec validate`` does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainspec.compiler import pipeline
from trainspec.compiler.pipeline import DISCOVER, Options, Stop, run
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.errors import TrainspecError
from trainspec.dsl.record import fields
from trainspec.dsl.spec.models import Runtime, Spec, TrainingJob
from trainspec.dsl.spec.project import Project

if TYPE_CHECKING:
    from trainspec.compiler.outtree import OutputReport

__all__ = ["CompileResult", "OutputRefused", "compile", "load", "validate"]

PathLike = str | os.PathLike[str]


class OutputRefused(TrainspecError):
    """:meth:`CompileResult.write` wrote nothing: the compile had errors, or the directory was refused
    (TS412 and the other checks of ``trainspec compile -o DIR``). ``diagnostics`` say why."""

    def __init__(self, diagnostics: list[Diagnostic], messages: list[str] | None = None) -> None:
        self.diagnostics = diagnostics
        lines = [*(messages or ()), *(f"{d.code}: {d.message}" for d in diagnostics if d.is_error)]
        super().__init__("\n".join(lines) or "nothing written")


class CompileResult(pipeline.CompileResult, frozen=False):
    """What :func:`compile` returns: diagnostics, plans and typed Kubernetes objects.

    ``result.ok`` (no errors), ``result.diagnostics``, ``result.objects()`` (apply order),
    ``result.to_yaml()`` (the stream ``compile -o -`` prints) and ``result.write(dir)`` (the
    tree ``compile -o DIR`` writes).
    """

    #: The paths this compile read (``write`` refuses a directory holding one of them).
    inputs: tuple[str, ...] = ()

    def write(
        self,
        directory: PathLike,
        *,
        gitops: str | None = None,
        force: bool = False,
        allow_volume_removal: bool = False,
        adopt: bool = False,
    ) -> OutputReport:
        """Write the objects as the output tree at ``directory``, exactly as ``trainspec compile -o
        DIR`` does (same files, same safe replacement of the whole tree, same refusals).

        The files are rendered by the pipeline's emit pass, as ``compile -o DIR`` renders them;
        ``gitops`` (``argocd`` or ``flux``) overrides the project's ``spec.gitops`` like ``--gitops``.
        Raises :class:`OutputRefused` (nothing written) when the compile had errors or the
        directory is refused: the working directory, ``/``, your home, a repository root or
        anything in ``.git``, a directory holding the inputs (TS412), hand-edited managed files
        without ``force`` (TS411), a PersistentVolumeClaim that would vanish without
        ``allow_volume_removal`` (TS410), a directory holding files trainspec did not write and
        none it did without ``adopt`` (TS417, ``--adopt``), an update of what the tree holds now
        that the cluster would refuse (TS440-TS442: day 2). Returns the report (``messages``: what
        changed; ``diagnostics``: warnings such as TS443).
        """
        if not self.ok:
            raise OutputRefused(self.diagnostics, ["the compile found errors: nothing written"])
        from trainspec.compiler.outtree import emit_directory
        from trainspec.compiler.passes.emit_pass import emit
        from trainspec.compiler.passes.products import Lowered

        output = os.fspath(directory)
        lowered = Lowered(outputs=tuple(self.outputs), gitops=gitops or self.gitops)
        files = emit(lowered, Options(output=output, stop=Stop.EMIT)).files_text
        refused = self._update_problems(output, files)
        if any(d.is_error for d in refused):
            raise OutputRefused(refused, [f"{output} was left as it was: the cluster would refuse these updates"])
        project = [self.project_spec.file] if self.project_spec is not None else []
        report = emit_directory(
            output,
            files,
            inputs=[*self.inputs, *(s.file for s in self.specs), *project],
            force=force,
            allow_volume_removal=allow_volume_removal,
            adopt=adopt,
        )
        if report.exit_code != 0:
            raise OutputRefused(report.diagnostics, report.messages)
        report.diagnostics[:0] = refused  # warnings (an expansion the storage class may not allow)
        return report

    def _update_problems(self, output: str, files: Mapping[str, str]) -> list[Diagnostic]:
        """Day 2, as ``compile -o DIR`` runs it: the tree there now is what the cluster has, and an
        update the API server would refuse (a shrinking claim, an immutable field) stops the write."""
        from trainspec.check.day2 import previous_tree, update_diagnostics
        from trainspec.check.manifests import compiled_manifests

        previous = previous_tree(output, files)
        return update_diagnostics(self, previous, compiled_manifests(self)) if previous else []


def load(
    *paths: PathLike,
    values: Mapping[str, Any] | None = None,
    project: Any = DISCOVER,
    values_files: tuple[str, ...] = (),
    python: str | None = None,
) -> tuple[list[Spec], list[Diagnostic]]:
    """Read spec files (YAML or Python) and return the specs, as written, and every diagnostic.

    This is the pipeline's load pass alone (what ``validate`` reads before it checks anything):
    the same directory walk, values and Python policy; ``project`` (discovered as for
    :func:`compile`) only decides whether Python spec modules run (its ``spec.python``) and is
    not among the specs returned unless one of ``paths`` names it.
    """
    options = Options(project=project, values=values, values_files=tuple(values_files), stop=Stop.LOAD, python=python)
    done = run([os.fspath(p) for p in paths], options)
    used = _project_file(project)
    if used in {os.path.realpath(p) for p in paths}:
        used = None  # named as an input: one of the specs asked for
    return [item.spec for item in done.specs if not _is_project_file(item, used)], done.diagnostics


def _project_file(project: Any) -> str | None:
    """The real path of the project file the load pass reads besides the paths (None: none)."""
    if project is DISCOVER:
        from trainspec.dsl.spec.project import find_project_file

        found = find_project_file(os.curdir)
        return os.path.realpath(found) if found else None
    return os.path.realpath(project) if isinstance(project, (str, os.PathLike)) else None


def _is_project_file(item: Any, used: str | None) -> bool:
    return used is not None and isinstance(item.spec, Project) and os.path.realpath(item.file) == used


def validate(
    *inputs: PathLike | Runtime | TrainingJob,
    project: Any = DISCOVER,
    values: Mapping[str, Any] | None = None,
    values_files: tuple[str, ...] = (),
    target: Mapping[str, Any] | str | None = None,
    python: str | None = None,
) -> list[Diagnostic]:
    """Every problem ``compile`` would report, without building anything (``trainspec validate``).

    ``inputs``: spec files or directories (YAML or Python) and/or spec objects; the other
    arguments are those of :func:`compile`.
    """
    return _run(inputs, Stop.VALIDATE, project, values, values_files, target, python).diagnostics


def compile(
    *inputs: PathLike | Runtime | TrainingJob,
    project: Any = DISCOVER,
    values: Mapping[str, Any] | None = None,
    values_files: tuple[str, ...] = (),
    target: Mapping[str, Any] | str | None = None,
    python: str | None = None,
) -> CompileResult:
    """Compile spec files and/or spec objects. ``result.objects()`` are the typed Kubernetes objects.

    ``project``: the project file (``trainspec.yaml``) is discovered from the working directory
    upwards, as the CLI does; pass a path, a ``Project`` object, or None for none. ``target`` is
    ``"trainer=2.1,kueue=0.16"`` or a mapping of versions, like ``--target``. ``python``:
    ``"deny"`` never runs a Python spec module found among the paths (``--no-python``), ``"warn"``
    skips them with a warning, ``"allow"`` runs each in a supervised child process; None: the
    project's ``spec.python`` decides. Spec objects given here are never run in another process.

    Example::

        result = trainspec.compile("specs/", TrainingJob(name="smoke", runtime="trainspec-torch"))
        assert result.ok, result.diagnostics
        print(result.to_yaml())     # what `trainspec compile specs/ -o -` prints
        result.write("deploy/")     # what `trainspec compile specs/ -o deploy/` writes
    """
    return _run(inputs, Stop.LOWER, project, values, values_files, target, python)


def _run(
    inputs: tuple[Any, ...],
    stop: Stop,
    project: Any,
    values: Mapping[str, Any] | None,
    values_files: tuple[str, ...],
    target: Mapping[str, Any] | str | None,
    python: str | None = None,
) -> CompileResult:
    if isinstance(target, str):
        from trainspec.compiler.targets import parse_target_option

        target = parse_target_option(target)
    # `compile(jobs)` with a list of specs (or paths) means what `compile(*jobs)` means.
    inputs = tuple(item for given in inputs for item in (given if isinstance(given, (list, tuple)) else (given,)))
    done = run(
        inputs,
        Options(
            project=project, values=values, values_files=tuple(values_files), target=target, stop=stop, python=python
        ),
    )
    paths = tuple(os.fspath(i) for i in inputs if isinstance(i, (str, os.PathLike)))
    state = {f.name: getattr(done, f.name) for f in fields(done)}
    return CompileResult(**state, inputs=(*paths, *values_files))
