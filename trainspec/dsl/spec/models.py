"""The spec models: ``Runtime`` and ``TrainingJob`` and their parts.

These are the public contract (YAML in camelCase, Python in snake_case). Every field is
documented; the descriptions become the JSON Schema. Unknown fields are errors.

In Python, both kinds can be built flat::

    TrainingJob(name="llama-sft", namespace="team-nlp", runtime="torch-h100", nodes=8,
                resources_per_node=Resources(gpu=8))

and a YAML document has the Kubernetes shape ``{apiVersion, kind, metadata, spec}``.

This module defines the two kinds; their parts live in :mod:`trainspec.dsl.spec.parts` (the enums and
the parts both kinds share), :mod:`trainspec.dsl.spec.runtime_spec` and :mod:`trainspec.dsl.spec.job_spec`,
and are re-exported here: ``from trainspec.dsl.spec.models import X`` is the import to use.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, overload

from trainspec.dsl.framework.modeling import Model, field
from trainspec.dsl.framework.types import (
    AbsolutePath,
    AutoOrQuantity,
    Count,
    CpuQuantity,
    DataSourceUri,
    Duration,
    EnvName,
    Image,
    LabelKey,
    LabelValue,
    Name,
    NamespaceName,
    ObjectName,
    ObjectStoreUri,
    ParamCount,
    Quantity,
    ResourceQuantity,
    StrictBool,
    VolumeSize,
    fail,
)
from trainspec.dsl.kube_facts import INT64_MAX, MAX_USER_ID, MPI_SSH_AUTH_MOUNT_PATH, SEED_MAX
from trainspec.dsl.spec.job_spec import Checkpoint, Data, ModelSize, NodeRange, SecretRef, Topology, TrainingJobSpec
from trainspec.dsl.spec.observability import JobObservability, RuntimeObservability
from trainspec.dsl.spec.parallelism import Bandwidth, Parallelism, TransformerModel
from trainspec.dsl.spec.parts import (
    MAX_GPUS_PER_NODE,
    MAX_KEEP,
    MAX_NODES,
    MAX_PROCS_PER_NODE,
    MAX_RESTARTS,
    AccessMode,
    Assignment,
    CheckpointWriter,
    DataFormat,
    DType,
    Engine,
    Framework,
    Gang,
    Metadata,
    Optimizer,
    RaySettings,
    Resources,
    RunPolicy,
    Scope,
    ShardBalance,
    ShardBy,
    ShardChecksum,
    ShardMode,
    TaintEffect,
    TolerationOperator,
    TopologyMode,
    _Model as _Model,
)
from trainspec.dsl.spec.runtime_spec import (
    Accelerator,
    DataSharding,
    Mpi,
    Network,
    Restarts,
    RuntimeSpec,
    Scheduling,
    Toleration,
)

if TYPE_CHECKING:
    from trainspec.dsl.framework.types import DurationInput, QuantityInput
    from trainspec.dsl.spec.tracking import Tracking  # the job's part, imported from its own module

    _FrameworkName = Literal["torch", "deepspeed", "mpi", "jax"]
    _GangName = Literal["kueue", "coscheduling", "volcano", "none"]
    _EngineName = Literal["trainer", "ray", "training-operator"]

API_VERSION: Final = "trainspec.dev/v1alpha1"
API_GROUP = "trainspec.dev"

#: What this module exports (written out, for type checkers). Beyond the kinds and their parts and
#: enums, the value types and facts their fields use stay importable from here, as they were before
#: the parts moved to their own modules.
__all__ = [
    "API_GROUP",
    "API_VERSION",
    "INT64_MAX",
    "KINDS",
    "MAX_GPUS_PER_NODE",
    "MAX_KEEP",
    "MAX_NODES",
    "MAX_PROCS_PER_NODE",
    "MAX_RESTARTS",
    "MAX_USER_ID",
    "MPI_SSH_AUTH_MOUNT_PATH",
    "SEED_MAX",
    "AbsolutePath",
    "Accelerator",
    "AccessMode",
    "Assignment",
    "AutoOrQuantity",
    "Bandwidth",
    "Checkpoint",
    "CheckpointWriter",
    "Count",
    "CpuQuantity",
    "DType",
    "Data",
    "DataFormat",
    "DataSharding",
    "DataSourceUri",
    "Duration",
    "Engine",
    "EnvName",
    "Framework",
    "Gang",
    "Image",
    "JobObservability",
    "LabelKey",
    "LabelValue",
    "Metadata",
    "Model",
    "ModelSize",
    "Mpi",
    "Name",
    "NamespaceName",
    "Network",
    "NodeRange",
    "ObjectName",
    "ObjectStoreUri",
    "Optimizer",
    "Parallelism",
    "ParamCount",
    "Quantity",
    "ResourceQuantity",
    "Resources",
    "RaySettings",
    "Restarts",
    "Runtime",
    "RuntimeObservability",
    "RuntimeSpec",
    "Scheduling",
    "Scope",
    "SecretRef",
    "ShardBalance",
    "ShardBy",
    "ShardChecksum",
    "RunPolicy",
    "ShardMode",
    "Spec",
    "StrictBool",
    "TaintEffect",
    "Toleration",
    "TolerationOperator",
    "Topology",
    "TopologyMode",
    "TrainingJob",
    "TrainingJobSpec",
    "TransformerModel",
    "VolumeSize",
    "fail",
    "field",
]


def _nest(data: Any) -> Any:
    """Flat fields (``name=..., runtime=...``) into the document shape ``{metadata, spec}``."""
    if not isinstance(data, Mapping) or "spec" in data or "metadata" in data:
        return data
    data = dict(data)
    metadata = {k: data.pop(k) for k in ("name", "namespace", "labels", "annotations") if k in data}
    kind_keys = {k: data.pop(k) for k in ("api_version", "apiVersion", "kind") if k in data}
    return {**kind_keys, "metadata": metadata, "spec": data}


class _Flat(_Model):
    """A kind that Python users may build flat (``name=``, ``runtime=``...).

    Specs are equal by their fields; where a Python spec was constructed does not count.
    """

    if not TYPE_CHECKING:  # each kind declares its typed signatures (flat and nested) to type checkers

        def __init__(self, **data: Any) -> None:
            """Build the spec flat, the fields of ``metadata`` and ``spec`` as keywords::

                TrainingJob(name="llama-sft", namespace="team-nlp", runtime="torch-h100", nodes=8,
                            resources_per_node=Resources(gpu=8), max_run_time="72h")
                Runtime(name="torch-h100", framework="torch", image="nvcr.io/nvidia/pytorch:25.01-py3")

            or in the document shape, ``TrainingJob(metadata=Metadata(...), spec=TrainingJobSpec(...))``.
            Every problem raises one :class:`~trainspec.dsl.errors.ValidationError`; an unknown
            keyword names the closest field (``nods``: did you mean ``nodes``?).
            """
            caller = sys._getframe(1)
            super().__init__(**_nest(data))
            # Remember the constructor call so diagnostics on Python specs can point at it.
            self.__dict__["_created_at"] = (caller.f_lineno, 1)

    @classmethod
    def _from_mapping(cls, data: Mapping[Any, Any], loc: tuple[Any, ...], errors: list[dict[str, Any]]) -> Any:
        return super()._from_mapping(_nest(data), loc, errors)

    @classmethod
    def _flat_fields(cls) -> list[str]:
        """The keyword arguments of the flat form: metadata's fields, the spec's, then apiVersion and kind."""
        parts = cls.model_fields
        return [
            *parts["metadata"].annotation.model_fields,
            *parts["spec"].annotation.model_fields,
            "api_version",
            "kind",
        ]

    @classmethod
    def _signature(cls) -> Any:
        """``help()`` shows the flat form, the one Python users write."""
        import inspect

        parts = cls.model_fields
        if "spec" not in parts:  # _Flat itself
            return super()._signature()
        merged = [
            *parts["metadata"].annotation._signature().parameters.values(),
            *parts["spec"].annotation._signature().parameters.values(),
            *(p for name, p in super()._signature().parameters.items() if name in ("api_version", "kind")),
        ]
        required = [p for p in merged if p.default is inspect.Parameter.empty]
        return inspect.Signature(
            [*required, *(p for p in merged if p.default is not inspect.Parameter.empty)], return_annotation=None
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def created_at(self) -> tuple[int, int] | None:
        """(line, column) of the constructor call in a Python spec file, if built from Python."""
        return self.__dict__.get("_created_at")

    @property
    def name(self) -> str:
        name: str = self.metadata.name  # type: ignore[attr-defined]
        return name

    @property
    def namespace(self) -> str | None:
        namespace: str | None = self.metadata.namespace  # type: ignore[attr-defined]
        return namespace


class Runtime(_Flat):
    """A training runtime (platform team) -> ClusterTrainingRuntime or TrainingRuntime."""

    api_version: Literal["trainspec.dev/v1alpha1"] = field(default=API_VERSION, description="trainspec.dev/v1alpha1")
    kind: Literal["Runtime"] = field(default="Runtime", description="Runtime")
    metadata: Metadata = field(description="Name (and namespace for scope: namespace).")
    spec: RuntimeSpec = field(description="The runtime.")

    if TYPE_CHECKING:  # the flat form (what Python users write) and the document form; a test keeps both in step

        @overload
        def __init__(
            self,
            *,
            name: str,
            namespace: str | None = None,
            labels: Mapping[str, str] = ...,
            annotations: Mapping[str, str] = ...,
            framework: Framework | _FrameworkName,
            scope: Scope | Literal["cluster", "namespace"] = ...,
            image: str,
            command: list[str] | None = None,
            env: Mapping[str, str] = ...,
            nodes: int = ...,
            max_nodes: int | None = None,
            procs_per_node: int | None = None,
            resources_per_node: Resources | None = None,
            gpu_resource: str = ...,
            accelerator: Accelerator | None = None,
            shared_memory: QuantityInput | None = None,
            network: Network | None = None,
            gang: Gang | _GangName = ...,
            restarts: Restarts | None = None,
            scheduling: Scheduling | None = None,
            data_sharding: DataSharding | None = None,
            mpi: Mpi | None = None,
            engine: Engine | _EngineName | None = None,
            external: bool = ...,
            observability: RuntimeObservability | None = None,
            ray: RaySettings | None = None,
            api_version: Literal["trainspec.dev/v1alpha1"] = ...,
            kind: Literal["Runtime"] = ...,
        ) -> None: ...
        @overload
        def __init__(
            self,
            *,
            api_version: Literal["trainspec.dev/v1alpha1"] = ...,
            kind: Literal["Runtime"] = ...,
            metadata: Metadata,
            spec: RuntimeSpec,
        ) -> None: ...
        def __init__(self, **data: Any) -> None: ...

    def _check(self) -> None:
        if self.spec.scope is Scope.NAMESPACE and not self.metadata.namespace:
            raise fail("ts_value", "a runtime with scope: namespace needs metadata.namespace")
        if self.spec.scope is Scope.CLUSTER and self.metadata.namespace:
            raise fail(
                "ts_value",
                "a cluster-scoped runtime has no namespace (remove metadata.namespace or set scope: namespace)",
            )


class TrainingJob(_Flat):
    """A training run (model developer) -> TrainJob, plus its checkpoint PVC."""

    api_version: Literal["trainspec.dev/v1alpha1"] = field(default=API_VERSION, description="trainspec.dev/v1alpha1")
    kind: Literal["TrainingJob"] = field(default="TrainingJob", description="TrainingJob")
    metadata: Metadata = field(description="Name, namespace, labels and annotations of the TrainJob.")
    spec: TrainingJobSpec = field(description="The job.")

    if TYPE_CHECKING:  # the flat form (what Python users write) and the document form; a test keeps both in step

        @overload
        def __init__(
            self,
            *,
            name: str,
            namespace: str | None = None,
            labels: Mapping[str, str] = ...,
            annotations: Mapping[str, str] = ...,
            runtime: str,
            image: str | None = None,
            command: list[str] | None = None,
            args: list[str] | None = None,
            env: Mapping[str, str] = ...,
            secret_env: Mapping[str, SecretRef] = ...,
            not_secret: list[str] = ...,
            nodes: int | NodeRange | None = None,
            procs_per_node: int | None = None,
            resources_per_node: Resources | None = None,
            queue: str | None = None,
            priority: str | None = None,
            max_run_time: DurationInput | None = None,
            topology: Topology | None = None,
            data: Data | None = None,
            checkpoint: Checkpoint | None = None,
            model: TransformerModel | None = None,
            parallelism: Parallelism | None = None,
            runs: RunPolicy | Literal["new", "replace"] = ...,
            rerun: int = 0,
            pod_labels: Mapping[str, str] = ...,
            pod_annotations: Mapping[str, str] = ...,
            observability: JobObservability | None = None,
            tracking: Tracking | None = None,
            ray: RaySettings | None = None,
            api_version: Literal["trainspec.dev/v1alpha1"] = ...,
            kind: Literal["TrainingJob"] = ...,
        ) -> None: ...
        @overload
        def __init__(
            self,
            *,
            api_version: Literal["trainspec.dev/v1alpha1"] = ...,
            kind: Literal["TrainingJob"] = ...,
            metadata: Metadata,
            spec: TrainingJobSpec,
        ) -> None: ...
        def __init__(self, **data: Any) -> None: ...


#: The spec kinds, by name (``Project``, the project file, lives in ``dsl.spec.project``).
KINDS: dict[str, type[_Model]] = {"Runtime": Runtime, "TrainingJob": TrainingJob}

Spec = Runtime | TrainingJob
