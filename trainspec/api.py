"""The library entry points: ``trainspec.load``, ``trainspec.validate`` and ``trainspec.compile``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trainspec.compiler.pipeline import CompileResult, compile_paths, compile_specs
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.models import Runtime, Spec, TrainingJob
from trainspec.dsl.sources import LoadedSpec, load_specs

PathLike = str | Path


def _as_loaded(specs: Iterable[Spec]) -> list[LoadedSpec]:
    return [LoadedSpec(spec=s, file="<python>") for s in specs]


def load(*paths: PathLike, values: dict[str, Any] | None = None) -> tuple[list[Spec], list[Diagnostic]]:
    """Read spec files (YAML or Python) and return the specs and every diagnostic."""
    loaded, problems = load_specs([str(p) for p in paths], values=values)
    return [item.spec for item in loaded], problems


def validate(*inputs: PathLike | Runtime | TrainingJob, values: dict[str, Any] | None = None) -> list[Diagnostic]:
    """Every problem ``compile`` would report, without producing anything."""
    return compile(*inputs, values=values).diagnostics


def compile(*inputs: PathLike | Runtime | TrainingJob, values: dict[str, Any] | None = None) -> CompileResult:
    """Compile spec files and/or spec objects. ``result.objects()`` are the typed Kubernetes objects.

    Example::

        result = trainspec.compile("specs/", TrainingJob(name="smoke", runtime="torch-distributed"))
        assert result.ok, result.diagnostics
        for obj in result.objects():
            ...
    """
    paths = [str(i) for i in inputs if isinstance(i, (str, Path))]
    objects = [i for i in inputs if isinstance(i, (Runtime, TrainingJob))]
    if paths:
        return compile_paths(paths, values=values, extra_specs=_as_loaded(objects))
    return compile_specs(_as_loaded(objects))
