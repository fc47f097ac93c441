"""The library entry points: ``trainspec.load``, ``trainspec.validate`` and ``trainspec.compile``.

They run the same pipeline as the command line (:mod:`trainspec.compiler.pipeline`), with
the same project-file discovery, values, target and policy, so ``trainspec.validate(...)``
reports exactly what ``trainspec validate`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainspec.compiler.pipeline import DISCOVER, CompileResult, Options, Stop, run
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.models import Runtime, Spec, TrainingJob
from trainspec.dsl.sources import load_specs

PathLike = str | Path


def load(*paths: PathLike, values: dict[str, Any] | None = None) -> tuple[list[Spec], list[Diagnostic]]:
    """Read spec files (YAML or Python) and return the specs and every diagnostic."""
    loaded, problems = load_specs([str(p) for p in paths], values=values)
    return [item.spec for item in loaded], problems


def validate(*inputs: PathLike | Runtime | TrainingJob, project: Any = DISCOVER,
             values: Mapping[str, Any] | None = None, values_files: tuple[str, ...] = (),
             target: Mapping[str, Any] | str | None = None) -> list[Diagnostic]:
    """Every problem ``compile`` would report, without building anything (``trainspec validate``)."""
    return _run(inputs, Stop.CHECK, project, values, values_files, target).diagnostics


def compile(*inputs: PathLike | Runtime | TrainingJob, project: Any = DISCOVER,
            values: Mapping[str, Any] | None = None, values_files: tuple[str, ...] = (),
            target: Mapping[str, Any] | str | None = None) -> CompileResult:
    """Compile spec files and/or spec objects. ``result.objects()`` are the typed Kubernetes objects.

    ``project``: the project file (``trainspec.yaml``) is discovered from the working directory
    upwards, as the CLI does; pass a path, a ``Project`` object, or None for none. ``target`` is
    ``"trainer=2.1,kueue=0.16"`` or a mapping of versions, like ``--target``.

    Example::

        result = trainspec.compile("specs/", TrainingJob(name="smoke", runtime="trainspec-torch"))
        assert result.ok, result.diagnostics
        print(result.to_yaml())
    """
    return _run(inputs, Stop.LOWER, project, values, values_files, target)


def _run(inputs: tuple[Any, ...], stop: Stop, project: Any, values: Mapping[str, Any] | None,
         values_files: tuple[str, ...], target: Mapping[str, Any] | str | None) -> CompileResult:
    if isinstance(target, str):
        from trainspec.compiler.targets import parse_target_option

        target = parse_target_option(target)
    return run(inputs, Options(project=project, values=values, values_files=tuple(values_files), target=target,
                               stop=stop))
