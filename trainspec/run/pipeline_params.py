"""A local pipeline run's parameters: ``--param NAME=VALUE`` read and checked, then compiled in.

:func:`parse_params` reads each ``--param`` against the pipeline's parameters (an unknown name
or a value not of the parameter's type is a TS708 diagnostic, before anything runs).
:func:`compile_with_params` compiles the pipeline again with those values as its parameters'
defaults: the loader substitutes defaults into the inline job steps (``nodes: $(params.nodes)``
keeps its type), so every job step goes through the whole compiler (rules included) with the
values this run uses, exactly as ``validate`` checks it with the defaults. The pipeline is
handed over as an object (the other inputs as the specs already loaded), so nothing is read
from disk twice and the ``{{ values.x }}`` templates keep the values they were loaded with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trainspec.compiler.pipeline import CompileResult, Options, run as compile_run
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.load.pipeline_steps import PipelineGraph
from trainspec.dsl.record import replace
from trainspec.dsl.spec.pipeline_spec import ParamType

_BOOLS = {"true": True, "false": False}


def parse_params(graph: PipelineGraph, given: Sequence[str]) -> tuple[dict[str, Any], list[Diagnostic]]:
    """``NAME=VALUE`` items read as the parameters' types (a later item for a name wins)."""
    declared = graph.pipeline.spec.parameters
    values: dict[str, Any] = {}
    problems: list[Diagnostic] = []
    for item in given:
        name, eq, text = item.partition("=")
        name = name.strip()
        if not eq or not name:
            problems.append(_problem(f"--param {item!r} is not NAME=VALUE", "write --param epochs=1"))
            continue
        parameter = declared.get(name)
        if parameter is None:
            known = ", ".join(sorted(declared)) or "none"
            problems.append(
                _problem(
                    f"pipeline {graph.pipeline.name} has no parameter {name!r} (--param {item})",
                    f"its parameters: {known}",
                )
            )
            continue
        value = _typed(text, parameter.type)
        if value is None:
            problems.append(
                _problem(
                    f"parameter {name!r} is of type {parameter.type.value}; {text!r} is not (--param {item})",
                    f"give a value of type {parameter.type.value}, e.g. --param {name}={_text(parameter.default)}",
                )
            )
            continue
        values[name] = value
    return values, problems


def parameter_values(graph: PipelineGraph, given: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter's value for the run: the given ones over the defaults, by name."""
    defaults = {name: p.default for name, p in graph.pipeline.spec.parameters.items()}
    return {name: given.get(name, default) for name, default in sorted(defaults.items())}


def compile_with_params(
    result: CompileResult, graph: PipelineGraph, values: Mapping[str, Any], options: Options
) -> CompileResult:
    """``result``'s inputs compiled again, the pipeline's parameters defaulting to ``values``.

    ``options`` are the first compile's; the project and values they named are already in the
    loaded specs, so they are not read again.
    """
    pipeline = graph.pipeline
    parameters = {
        name: p.model_copy(update={"default": values[name]}) if name in values else p
        for name, p in pipeline.spec.parameters.items()
    }
    changed = pipeline.model_copy(update={"spec": pipeline.spec.model_copy(update={"parameters": parameters})})
    others = [s for s in result.specs if not s.within]  # the inline jobs are expanded again from the pipeline
    again = replace(options, project=None, values=None, values_files=())
    return compile_run([*others, LoadedSpec(spec=changed, file=graph.file)], again)


def param_text(value: Any) -> str:
    """A parameter's value as a step's command line receives it (booleans as true/false)."""
    return _text(value)


def _typed(text: str, kind: ParamType) -> Any:
    """``text`` as a value of ``kind``, or None when it is not one."""
    if kind is ParamType.STRING:
        return text
    if kind is ParamType.BOOL:
        return _BOOLS.get(text.strip().lower())
    try:
        return int(text) if kind is ParamType.INT else float(text)
    except ValueError:
        return None


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _problem(message: str, hint: str) -> Diagnostic:
    return Diagnostic(
        code=codes.LOCAL_PIPELINE_PARAM, message=message, file="<command line>", path="--param", hint=hint
    )


__all__ = ["compile_with_params", "param_text", "parameter_values", "parse_params"]
