"""trainspec: validate training specs and compile them into the Kubernetes resources that run distributed training.

The public Python API is re-exported here lazily, so that ``import trainspec.stages`` inside a
training image stays standard-library only and start-up stays fast: ``__all__`` and ``dir()``
list every public name, and a name's module is imported on first use. ::

    import trainspec
    from trainspec import Resources, TrainingJob

    job = TrainingJob(name="sft", runtime="trainspec-torch", nodes=2, resources_per_node=Resources(cpu=4))
    result = trainspec.compile(job, project=None)
    print(result.to_yaml())          # what `trainspec compile -o -` prints
    result.write("deploy/")          # what `trainspec compile -o deploy/` writes

    client = trainspec.Client(namespace="ml-dev")   # the cluster (extra trainspec[kube])
    client.submit(job)               # what `trainspec submit` does
    client.wait("sft")               # Complete or Failed: `trainspec status sft --watch`
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The one version: pyproject.toml reads it from here at build time ([tool.setuptools.dynamic]), so the
# wheel, `trainspec --version` and the KFP launcher's install agree (tests/test_packaging.py).
__version__ = "0.1.0"

_MODELS = "trainspec.dsl.spec.models"
_EXPORTS = {
    # spec models (the Python DSL)
    **dict.fromkeys(
        (
            "TrainingJob",
            "Runtime",
            "Metadata",
            "TrainingJobSpec",
            "RuntimeSpec",
            "Resources",
            "Checkpoint",
            "ModelSize",
            "Data",
            "DataSharding",
            "Network",
            "Restarts",
            "Scheduling",
            "Toleration",
            "Topology",
            "SecretRef",
            "NodeRange",
            "Accelerator",
            "Mpi",
            # their enums
            "Framework",
            "Engine",
            "Scope",
            "Gang",
            "DataFormat",
            "ShardBy",
            "Assignment",
            "AccessMode",
            "DType",
            "CheckpointWriter",
            "Optimizer",
            "TopologyMode",
            "TolerationOperator",
            "TaintEffect",
        ),
        _MODELS,
    ),
    # pipelines (docs/pipelines.md)
    "Pipeline": "trainspec.dsl.spec.pipeline_spec",
    "PipelineSpec": "trainspec.dsl.spec.pipeline_spec",
    "Step": "trainspec.dsl.spec.pipeline_spec",
    "ContainerStep": "trainspec.dsl.spec.pipeline_spec",
    "Parameter": "trainspec.dsl.spec.pipeline_spec",
    "ParamType": "trainspec.dsl.spec.pipeline_spec",
    # the parallelism planner's and the metrics' parts
    "TransformerModel": "trainspec.dsl.spec.parallelism",
    "Parallelism": "trainspec.dsl.spec.parallelism",
    "JobObservability": "trainspec.dsl.spec.observability",
    "RuntimeObservability": "trainspec.dsl.spec.observability",
    # experiment tracking (docs/tracking.md)
    "Tracking": "trainspec.dsl.spec.tracking",
    "MlflowTracking": "trainspec.dsl.spec.tracking",
    "WandbTracking": "trainspec.dsl.spec.tracking",
    # value types
    "Quantity": "trainspec.dsl.framework.types",
    "Duration": "trainspec.dsl.framework.types",
    "ParamCount": "trainspec.dsl.framework.types",
    # errors and diagnostics
    "ValidationError": "trainspec.dsl.errors",
    "TrainspecError": "trainspec.dsl.errors",
    "Diagnostic": "trainspec.dsl.diagnostics",
    "Severity": "trainspec.dsl.diagnostics",
    # library entry points and what they return
    "load": "trainspec.api",
    "validate": "trainspec.api",
    "compile": "trainspec.api",
    "CompileResult": "trainspec.api",
    "OutputRefused": "trainspec.api",
    "OutputReport": "trainspec.compiler.outtree",
    # the cluster client (the kubernetes package is imported when a Client connects, not before)
    "Client": "trainspec.client",
    "ClusterError": "trainspec.client",
}

#: Written out (not computed) so that type checkers read it; a test keeps it equal to the exports.
__all__ = [
    "Accelerator",
    "AccessMode",
    "Assignment",
    "Checkpoint",
    "CheckpointWriter",
    "Client",
    "ClusterError",
    "CompileResult",
    "ContainerStep",
    "DType",
    "Data",
    "DataFormat",
    "DataSharding",
    "Diagnostic",
    "Duration",
    "Engine",
    "Framework",
    "Gang",
    "JobObservability",
    "Metadata",
    "MlflowTracking",
    "ModelSize",
    "Mpi",
    "Network",
    "NodeRange",
    "Optimizer",
    "OutputRefused",
    "OutputReport",
    "Parallelism",
    "ParamCount",
    "ParamType",
    "Parameter",
    "Pipeline",
    "PipelineSpec",
    "Quantity",
    "Resources",
    "Restarts",
    "Runtime",
    "RuntimeObservability",
    "RuntimeSpec",
    "Scheduling",
    "Scope",
    "SecretRef",
    "Severity",
    "ShardBy",
    "Step",
    "TaintEffect",
    "Toleration",
    "TolerationOperator",
    "Topology",
    "TopologyMode",
    "Tracking",
    "TrainingJob",
    "TrainingJobSpec",
    "TrainspecError",
    "TransformerModel",
    "ValidationError",
    "WandbTracking",
    "compile",
    "load",
    "validate",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'trainspec' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names (imported or not yet) and the module's dunders, for ``dir()`` and completion:
    not the typing helpers this module itself imports, nor subpackages loaded along the way."""
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})


if TYPE_CHECKING:  # pragma: no cover
    from trainspec.api import CompileResult, OutputRefused, compile, load, validate
    from trainspec.client import Client, ClusterError
    from trainspec.compiler.outtree import OutputReport
    from trainspec.dsl.diagnostics import Diagnostic, Severity
    from trainspec.dsl.errors import TrainspecError, ValidationError
    from trainspec.dsl.framework.types import Duration, ParamCount, Quantity
    from trainspec.dsl.spec.models import (
        Accelerator,
        AccessMode,
        Assignment,
        Checkpoint,
        CheckpointWriter,
        Data,
        DataFormat,
        DataSharding,
        DType,
        Engine,
        Framework,
        Gang,
        Metadata,
        ModelSize,
        Mpi,
        Network,
        NodeRange,
        Optimizer,
        Resources,
        Restarts,
        Runtime,
        RuntimeSpec,
        Scheduling,
        Scope,
        SecretRef,
        ShardBy,
        TaintEffect,
        Toleration,
        TolerationOperator,
        Topology,
        TopologyMode,
        TrainingJob,
        TrainingJobSpec,
    )
    from trainspec.dsl.spec.observability import JobObservability, RuntimeObservability
    from trainspec.dsl.spec.parallelism import Parallelism, TransformerModel
    from trainspec.dsl.spec.pipeline_spec import ContainerStep, Parameter, ParamType, Pipeline, PipelineSpec, Step
    from trainspec.dsl.spec.tracking import MlflowTracking, Tracking, WandbTracking
