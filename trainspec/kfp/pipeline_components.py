"""A Pipeline's steps as KFP component specs (plain data; kfp loads them in :mod:`pipeline_ir`).

Each step becomes one container component, written in KFP's component-spec form (``inputs``,
``outputs``, ``implementation.container`` with ``inputValue``/``inputPath``/``inputUri``/
``outputPath`` placeholders). A Python component's inputs are its function's signature, fixed
when the module is written; a step's inputs are the parameters and upstream outputs it reads,
known only from the spec, so the spec form is what lets each step take exactly those.

* ``$(params.x)`` -> input ``param_x`` of the parameter's type, fed by the pipeline input ``x``;
* ``$(outputs.x)`` -> ``outputPath`` of the step's output ``x`` (an artifact; a *value output*,
  one a ``when`` compares, is an output parameter instead: the step writes the value to the file);
* ``$(steps.s.outputs.x)`` -> input ``s_x``: ``inputPath`` of s's artifact (a local copy), or the
  value of a value output; a job step gets the artifact's URI (``inputUri``).

Job steps run :mod:`trainspec.kfp.pipeline_job_step` in the launcher image, with the step's spec
documents, the parameters and upstream outputs they read, and outputs ``checkpoint`` and ``status``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trainspec.dsl.spec.pipeline_refs import Ref, parse_ref
from trainspec.dsl.spec.pipeline_spec import REFERENCE, ParamType, Pipeline, Step

#: KFP component-spec types of the parameter types.
KFP_TYPES = {ParamType.STRING: "String", ParamType.INT: "Integer", ParamType.FLOAT: "Float", ParamType.BOOL: "Boolean"}
ARTIFACT = "Artifact"
#: The launcher module a job step runs.
JOB_STEP_MODULE = "trainspec.kfp.pipeline_job_step"


@dataclass
class StepComponent:
    """One step's component spec and what feeds each of its inputs."""

    spec: dict[str, Any]
    #: input name -> ("param", name) | ("output", step, output) | ("constant", value)
    feeds: dict[str, tuple[str, ...]] = field(default_factory=dict)


def param_input(name: str) -> str:
    return f"param_{name}"


def output_input(step: str, output: str) -> str:
    return f"{step.replace('-', '_')}_{output}"


class _Inputs:
    """The inputs a step's strings need, declared once each, in first-use order."""

    def __init__(self, pipeline: Pipeline, value_outputs: Mapping[tuple[str, str], str], job_step: bool) -> None:
        self.pipeline, self.value_outputs, self.job_step = pipeline, value_outputs, job_step
        self.declared: dict[str, dict[str, Any]] = {}
        self.feeds: dict[str, tuple[str, ...]] = {}

    def placeholder(self, ref: Ref) -> dict[str, Any]:
        if ref.kind == "param":
            name = param_input(ref.name)
            kind = KFP_TYPES[self.pipeline.spec.parameters[ref.name].type]
            self._declare(name, kind, ("param", ref.name))
            return {"inputValue": name}
        assert ref.kind == "step-output", ref  # the others are checked before (pipeline_steps, pipeline_ir)
        name = output_input(ref.step, ref.name)
        value = self.value_outputs.get((ref.step, ref.name))
        self._declare(name, value or ARTIFACT, ("output", ref.step, ref.name))
        if value is not None:
            return {"inputValue": name}
        return {"inputUri": name} if self.job_step else {"inputPath": name}

    def _declare(self, name: str, kind: str, feed: tuple[str, ...]) -> None:
        if name not in self.declared:
            self.declared[name] = {"name": name, "type": kind}
            self.feeds[name] = feed


def _pieces(text: str, inputs: _Inputs) -> Any:
    """``text`` as a command-line item: a string, one placeholder, or their ``concat``."""
    parts: list[Any] = []
    at = 0
    for match in REFERENCE.finditer(text):
        ref = parse_ref(match.group(1))
        if ref is None:
            continue
        if match.start() > at:
            parts.append(text[at : match.start()])
        parts.append({"outputPath": ref.name} if ref.kind == "output" else inputs.placeholder(ref))
        at = match.end()
    if at < len(text):
        parts.append(text[at:])
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else {"concat": parts}


def container_component(pipeline: Pipeline, step: Step, value_outputs: Mapping[tuple[str, str], str]) -> StepComponent:
    """The component of a container step."""
    assert step.container is not None
    inputs = _Inputs(pipeline, value_outputs, job_step=False)
    outputs = {name: value_outputs.get((step.name, name), ARTIFACT) for name in step.outputs}
    container: dict[str, Any] = {"image": step.container.image}
    if step.container.command:
        container["command"] = [_pieces(t, inputs) for t in step.container.command]
    if step.container.args:
        container["args"] = [_pieces(t, inputs) for t in step.container.args]
    spec = {
        "name": step.name,
        "inputs": list(inputs.declared.values()),
        "outputs": [{"name": name, "type": kind} for name, kind in outputs.items()],
        "implementation": {"container": container},
    }
    return StepComponent(spec, inputs.feeds)


def job_component(
    pipeline: Pipeline,
    step: Step,
    *,
    job: str,
    image: str,
    specs: str,
    value_outputs: Mapping[tuple[str, str], str],
    launcher_args: list[str],
) -> StepComponent:
    """The component of a job step: the launcher building this run's TrainJob from ``specs``."""
    inputs = _Inputs(pipeline, value_outputs, job_step=True)
    args: list[Any] = ["--specs", {"inputValue": "specs"}, "--job", job, "--run-id", {"inputValue": "run_id"}]
    seen: set[Ref] = set()
    for text in _job_strings(step.job or {}):
        for match in REFERENCE.finditer(text):
            ref = parse_ref(match.group(1))
            if ref is None or ref in seen or ref.kind not in ("param", "step-output"):
                continue
            seen.add(ref)
            flag, key = ("--param", ref.name) if ref.kind == "param" else ("--output", f"{ref.step}.{ref.name}")
            args += [flag, key, inputs.placeholder(ref)]
    args += ["--checkpoint", {"outputPath": "checkpoint"}, "--status", {"outputPath": "status"}, *launcher_args]
    spec = {
        "name": step.name,
        "inputs": [
            {"name": "specs", "type": "String"},
            {"name": "run_id", "type": "String"},
            *inputs.declared.values(),
        ],
        "outputs": [{"name": "checkpoint", "type": ARTIFACT}, {"name": "status", "type": ARTIFACT}],
        "implementation": {
            "container": {"image": image, "command": ["python3", "-m", JOB_STEP_MODULE], "args": args},
        },
    }
    return StepComponent(spec, {"specs": ("constant", specs), **inputs.feeds})


def _job_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _job_strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _job_strings(item)]
    return []


def step_document(pipeline: Pipeline, step: Step) -> dict[str, Any]:
    """The pipeline reduced to one job step, its references left in: what the launcher compiles
    with the run's values (its parameters' defaults are replaced then)."""
    metadata: dict[str, Any] = {"name": pipeline.name}
    if pipeline.namespace:
        metadata["namespace"] = pipeline.namespace
    parameters = {name: {"type": p.type.value, "default": p.default} for name, p in pipeline.spec.parameters.items()}
    return {
        "apiVersion": pipeline.api_version,
        "kind": "Pipeline",
        "metadata": metadata,
        "spec": {"parameters": parameters, "steps": [{"name": step.name, "job": step.job}]},
    }


__all__ = [
    "ARTIFACT",
    "JOB_STEP_MODULE",
    "KFP_TYPES",
    "StepComponent",
    "container_component",
    "job_component",
    "output_input",
    "param_input",
    "step_document",
]
