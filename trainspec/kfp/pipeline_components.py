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
  value of a value output; a job step gets the artifact's URI (``inputUri``);
* ``$(steps.j.outputs.checkpoint)`` of a job step j in a container step -> the directory its
  claim is mounted at (:mod:`trainspec.kfp.pipeline_claims`), or its object-store URI.

Job steps run :mod:`trainspec.kfp.pipeline_job_step` in the launcher image, with the step's spec
documents, the parameters and upstream outputs they read, and outputs ``checkpoint`` and ``status``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trainspec.dsl.spec.pipeline_refs import Ref, parse_ref
from trainspec.dsl.spec.pipeline_spec import REFERENCE, ParamType, Pipeline, Step
from trainspec.kfp.pipeline_claims import CHECKPOINT_OUTPUT, StepCheckpoint, mount_path

#: KFP component-spec types of the parameter types.
KFP_TYPES = {ParamType.STRING: "String", ParamType.INT: "Integer", ParamType.FLOAT: "Float", ParamType.BOOL: "Boolean"}
ARTIFACT = "Artifact"
#: The launcher module a job step runs.
JOB_STEP_MODULE = "trainspec.kfp.pipeline_job_step"


@dataclass
class StepComponent:
    """One step's component spec and what feeds each of its inputs."""

    spec: dict[str, Any]
    #: input name -> ("param", name) | ("output", step, output) | ("constant", value) | ("claim", step)
    feeds: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The job steps whose checkpoint claims the step mounts (at ``mount_path(step)``).
    mounts: dict[str, StepCheckpoint] = field(default_factory=dict)


def param_input(name: str) -> str:
    return f"param_{name}"


def output_input(step: str, output: str) -> str:
    return f"{step.replace('-', '_')}_{output}"


class _Inputs:
    """The inputs a step's strings need, declared once each, in first-use order."""

    def __init__(
        self,
        pipeline: Pipeline,
        value_outputs: Mapping[tuple[str, str], str],
        job_step: bool,
        checkpoints: Mapping[str, StepCheckpoint] | None = None,
    ) -> None:
        self.pipeline, self.value_outputs, self.job_step = pipeline, value_outputs, job_step
        self.checkpoints = checkpoints or {}
        self.declared: dict[str, dict[str, Any]] = {}
        self.feeds: dict[str, tuple[str, ...]] = {}
        self.mounts: dict[str, StepCheckpoint] = {}

    def placeholder(self, ref: Ref) -> dict[str, Any]:
        if ref.kind == "param":
            name = param_input(ref.name)
            kind = KFP_TYPES[self.pipeline.spec.parameters[ref.name].type]
            self._declare(name, kind, ("param", ref.name))
            return {"inputValue": name}
        assert ref.kind == "step-output", ref  # the others are checked before (pipeline_steps, pipeline_ir)
        where = self.checkpoints.get(ref.step) if ref.name == CHECKPOINT_OUTPUT and not self.job_step else None
        if where is not None and where.mounted:
            self.mounts[ref.step] = where
            return {"constant": mount_path(ref.step)}
        if where is not None and where.uri is not None:
            return {"constant": where.uri}
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
        piece = {"outputPath": ref.name} if ref.kind == "output" else inputs.placeholder(ref)
        parts.append(piece.get("constant", piece))
        at = match.end()
    if at < len(text):
        parts.append(text[at:])
    joined: list[Any] = []
    for part in parts:  # a constant next to text is text
        if joined and isinstance(part, str) and isinstance(joined[-1], str):
            joined[-1] += part
        else:
            joined.append(part)
    if not joined:
        return ""
    return joined[0] if len(joined) == 1 else {"concat": joined}


def container_component(
    pipeline: Pipeline,
    step: Step,
    value_outputs: Mapping[tuple[str, str], str],
    checkpoints: Mapping[str, StepCheckpoint] | None = None,
) -> StepComponent:
    """The component of a container step (``checkpoints``: where each job step keeps its own)."""
    assert step.container is not None
    inputs = _Inputs(pipeline, value_outputs, job_step=False, checkpoints=checkpoints)
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
    return StepComponent(spec, inputs.feeds, inputs.mounts)


def job_component(
    pipeline: Pipeline,
    step: Step,
    *,
    job: str,
    image: str,
    specs: str,
    value_outputs: Mapping[tuple[str, str], str],
    launcher_args: list[str],
    per_run_claim: bool = False,
) -> StepComponent:
    """The component of a job step: the launcher building this run's TrainJob from ``specs``
    (with ``per_run_claim``, its checkpoints on the claim a CreatePVC task made for the run)."""
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
    feeds: dict[str, tuple[str, ...]] = {"specs": ("constant", specs)}
    claim_input: list[dict[str, str]] = []
    if per_run_claim:
        args += ["--checkpoint-claim", {"inputValue": "checkpoint_claim"}]
        claim_input = [{"name": "checkpoint_claim", "type": "String"}]
        feeds["checkpoint_claim"] = ("claim", step.name)
    args += ["--checkpoint", {"outputPath": "checkpoint"}, "--status", {"outputPath": "status"}, *launcher_args]
    spec = {
        "name": step.name,
        "inputs": [
            {"name": "specs", "type": "String"},
            {"name": "run_id", "type": "String"},
            *claim_input,
            *inputs.declared.values(),
        ],
        "outputs": [{"name": "checkpoint", "type": ARTIFACT}, {"name": "status", "type": ARTIFACT}],
        "implementation": {
            "container": {"image": image, "command": ["python3", "-m", JOB_STEP_MODULE], "args": args},
        },
    }
    return StepComponent(spec, {**feeds, **inputs.feeds})


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
