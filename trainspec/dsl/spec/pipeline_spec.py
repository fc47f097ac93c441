"""The ``Pipeline`` kind: named steps forming a DAG (data prep -> train -> evaluate -> register).

A step is one of

* a **job step**: a ``TrainingJob`` written inline (``job:``, the fields of a TrainingJob's
  ``spec``; it is named ``<pipeline>-<step>`` in the pipeline's namespace) or named
  (``jobRef:``, a TrainingJob among the inputs), run on its engine;
* a **container step**: ``container:`` image, command, args, env and resources, for data
  preparation, evaluation or registration.

Steps run after the steps they name in ``after`` and after every step whose output they read.
Run-time references use the ``$(...)`` form Tekton made familiar on Kubernetes, so they never
collide with the compile-time ``{{ values.x }}`` templates a pipeline file may also hold:

* ``$(params.NAME)``: a pipeline parameter (typed, with its default; a run may override it);
* ``$(outputs.NAME)``: inside a step, where it writes its output ``NAME``;
* ``$(steps.STEP.outputs.NAME)``: another step's output (an artifact URI);
* ``$(steps.STEP.status)``: ``Succeeded`` or ``Failed``, for ``when``.

A whole-scalar reference to a parameter takes the parameter's type (``nodes: $(params.nodes)``
is an integer); inside a longer string it is text. The model here checks each field's shape;
how the steps fit together (references, cycles, types) is checked by
:mod:`trainspec.dsl.load.pipeline_steps`, with every problem located.
"""

from __future__ import annotations

import enum
import re
import sys
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from trainspec.dsl.errors import Invalid
from trainspec.dsl.framework.modeling import field
from trainspec.dsl.framework.types import Count, Duration, EnvName, Image, Name, StrictBool
from trainspec.dsl.spec.parts import Metadata, Resources, _Model

API_VERSION: Final = "trainspec.dev/v1alpha1"
#: Most steps one pipeline may have (a KFP pipeline of more is unreadable, and each step is a pod).
MAX_STEPS: Final = 200
#: Most retries of one step (KFP's own cap is far higher; a step retried more is broken).
MAX_RETRIES: Final = 10
#: A ``$(...)`` reference: ``params.x``, ``outputs.x``, ``steps.s.outputs.x``, ``steps.s.status``.
REFERENCE: Final = re.compile(r"\$\(\s*([A-Za-z_][\w.-]*)\s*\)")
#: An output or parameter name: a letter, then letters, digits, ``_`` (a KFP input/output name).
IDENTIFIER: Final = r"^[A-Za-z][A-Za-z0-9_]{0,62}$"


class _Written:
    """A value kept as written and checked later, where its meaning is known: a job step's
    TrainingJob fields (checked as a TrainingJob once parameters are in), a parameter's default
    (checked against the parameter's type)."""

    def __init__(self, kinds: tuple[type, ...], what: str, schema: dict[str, Any]) -> None:
        self.kinds, self.what, self.schema = kinds, what, schema

    def __validate__(self, raw: Any) -> Any:
        if not isinstance(raw, self.kinds):
            raise Invalid("ts_value", f"must be {self.what}")
        return raw

    def __json_schema__(self) -> dict[str, Any]:
        return dict(self.schema)


#: A job step's TrainingJob fields, as written.
JobFields = Annotated[dict[str, Any], _Written((dict,), "a mapping of TrainingJob spec fields", {"type": "object"})]
#: A parameter's default: a string, number or boolean.
ParamValue = Annotated[
    Any,
    _Written((str, int, float, bool), "a string, a number or a boolean", {"type": ["string", "number", "boolean"]}),
]


class ParamType(str, enum.Enum):
    """The type of a pipeline parameter (a KFP pipeline input of the same type)."""

    STRING = "string"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"


class Parameter(_Model):
    """A pipeline parameter: a run-time input with a type and a default."""

    type: ParamType = field(default=ParamType.STRING, description="string, int, float or bool.")
    default: ParamValue | None = field(
        default=None,
        description="The value when a run does not set it; what the pipeline is checked with before merge "
        "(required: every step is compiled with it).",
    )
    description: str | None = field(default=None, description="What the parameter means (shown in KFP).")


class ContainerStep(_Model):
    """A step that runs one container: data preparation, evaluation, registration."""

    image: Image = field(description="Container image, e.g. python:3.12-slim.")
    command: list[str] = field(default_factory=list, description="Entrypoint (default: the image's).")
    args: list[str] = field(default_factory=list, description="Arguments; may hold $(params.x) and $(outputs.x).")
    env: dict[EnvName, str] = field(default_factory=dict, description="Environment variables (no secrets).")
    resources: Resources | None = field(default=None, description="CPU, memory and GPUs of the step's pod.")


class Step(_Model):
    """One step of a pipeline: a job, or a container."""

    name: Name = field(description="Step name, unique in the pipeline (RFC 1035 label).")
    after: list[Name] = field(default_factory=list, description="Steps that must finish first.")
    job: JobFields | None = field(
        default=None,
        description="An inline TrainingJob: the fields of a TrainingJob's spec (runtime, nodes, data, ...); "
        "named <pipeline>-<step>, in the pipeline's namespace.",
    )
    job_ref: Name | None = field(default=None, description="The name of a TrainingJob among the inputs.")
    container: ContainerStep | None = field(default=None, description="A container step.")
    outputs: list[str] = field(
        default_factory=list,
        description="Names of the outputs the step writes (artifacts later steps read as "
        "$(steps.<step>.outputs.<name>)). A job step's outputs are its checkpoint and output URIs.",
    )
    retries: Count = field(default=0, ge=0, le=MAX_RETRIES, description="How often a failed step is retried.")
    timeout: Duration | None = field(default=None, description="Fail the step after this long, e.g. 72h.")
    cache: StrictBool = field(default=False, description="Reuse a previous run's result for the same inputs (KFP).")
    when: str | None = field(
        default=None,
        description="Run only if this holds, e.g. '$(steps.evaluate.outputs.accuracy) >= 0.8' or "
        "'$(steps.train.status) == Succeeded'; otherwise the step and its dependants are skipped.",
    )


class PipelineSpec(_Model):
    """The steps and parameters of a pipeline."""

    parameters: dict[str, Parameter] = field(default_factory=dict, description="Run-time parameters, by name.")
    steps: list[Step] = field(
        min_length=1,
        max_length=MAX_STEPS,
        description="The steps (at least one, at most 200); order is free: after and data flow decide it.",
    )


class Pipeline(_Model):
    """A training pipeline -> a Kubeflow Pipelines pipeline (or a local run)."""

    api_version: Literal["trainspec.dev/v1alpha1"] = field(default=API_VERSION, description="trainspec.dev/v1alpha1")
    kind: Literal["Pipeline"] = field(default="Pipeline", description="Pipeline")
    metadata: Metadata = field(description="Name and namespace of the pipeline (its jobs run in that namespace).")
    spec: PipelineSpec = field(description="The pipeline.")

    if not TYPE_CHECKING:  # type checkers read the fields' own signature

        def __init__(self, **data: Any) -> None:
            caller = sys._getframe(1)
            super().__init__(**data)
            # Remember the constructor call so diagnostics on Python specs can point at it.
            self.__dict__["_created_at"] = (caller.f_lineno, 1)

    @property
    def name(self) -> str:
        name: str = self.metadata.name
        return name

    @property
    def namespace(self) -> str | None:
        namespace: str | None = self.metadata.namespace
        return namespace


__all__ = [
    "IDENTIFIER",
    "MAX_RETRIES",
    "MAX_STEPS",
    "REFERENCE",
    "ContainerStep",
    "ParamType",
    "Parameter",
    "Pipeline",
    "PipelineSpec",
    "Step",
]
