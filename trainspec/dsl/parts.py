"""The vocabulary both spec kinds share: the base of every part, the count bounds, the enums, and
the parts of both a ``Runtime`` and a ``TrainingJob`` (``Metadata``, ``Resources``).

Import these from :mod:`trainspec.dsl.models` (or ``trainspec``), which re-exports them; this
module exists to keep the contract in small files.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from trainspec.dsl.modeling import Model, field
from trainspec.dsl.types import Count, CpuQuantity, LabelKey, LabelValue, Name, NamespaceName, ResourceQuantity

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trainspec.dsl.types import QuantityInput

# Count bounds. Each count becomes an int32 field (numNodes, numProcPerNode, maxRestarts, the
# shard count nodes x procsPerNode, GPUs x nodes): the products of these bounds stay far below
# 2^31-1, which tests/dsl/test_bounds.py keeps true.
MAX_NODES = 10000
MAX_PROCS_PER_NODE = 256
MAX_GPUS_PER_NODE = 64
MAX_RESTARTS = 1000
MAX_KEEP = 1000


class _Model(Model):
    """A spec part: unknown fields are errors, YAML names are the camelCase of the Python ones."""


# -- enums -------------------------------------------------------------------------------------


class Framework(str, enum.Enum):
    """The distributed framework a runtime launches."""

    TORCH = "torch"
    DEEPSPEED = "deepspeed"
    MPI = "mpi"
    JAX = "jax"


class Engine(str, enum.Enum):
    """The engine that runs a job on the cluster (the compile target's lowering dialect)."""

    TRAINER = "trainer"  # Kubeflow Trainer v2: TrainJob on a (Cluster)TrainingRuntime
    RAY = "ray"  # KubeRay RayJob (Ray Train)
    TRAINING_OPERATOR = "training-operator"  # Kubeflow Training Operator v1 PyTorchJob / mpi-operator MPIJob


class Scope(str, enum.Enum):
    CLUSTER = "cluster"
    NAMESPACE = "namespace"


class Gang(str, enum.Enum):
    """How all pods of a job are scheduled together."""

    KUEUE = "kueue"
    COSCHEDULING = "coscheduling"
    VOLCANO = "volcano"
    NONE = "none"


class DataFormat(str, enum.Enum):
    JSONL = "jsonl"
    TEXT = "text"
    PARQUET = "parquet"
    FILES = "files"


class ShardBy(str, enum.Enum):
    RANK = "rank"
    NODE = "node"


class Assignment(str, enum.Enum):
    CONTIGUOUS = "contiguous"
    HASHED = "hashed"
    ROUND_ROBIN = "round-robin"


class ShardMode(str, enum.Enum):
    INDEX = "index"
    COPY = "copy"


class RunPolicy(str, enum.Enum):
    """What a change to a job's run-defining fields does on the cluster (docs/gitops.md)."""

    #: A new run object (``<name>-<run id>``) replaces the old one and resumes from the checkpoints.
    NEW = "new"
    #: The job object keeps its name; the GitOps controller deletes and recreates it on a change.
    REPLACE = "replace"


class ShardBalance(str, enum.Enum):
    RECORDS = "records"
    BYTES = "bytes"


class ShardChecksum(str, enum.Enum):
    NONE = "none"
    XXH3 = "xxh3"
    SHA256 = "sha256"


class AccessMode(str, enum.Enum):
    READ_WRITE_ONCE = "ReadWriteOnce"
    READ_WRITE_MANY = "ReadWriteMany"
    READ_WRITE_ONCE_POD = "ReadWriteOncePod"


class DType(str, enum.Enum):
    FP32 = "fp32"
    TF32 = "tf32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"


class Optimizer(str, enum.Enum):
    ADAM = "adam"
    ADAMW = "adamw"
    SGD = "sgd"
    NONE = "none"


class TopologyMode(str, enum.Enum):
    REQUIRED = "required"
    PREFERRED = "preferred"


class TolerationOperator(str, enum.Enum):
    EXISTS = "Exists"
    EQUAL = "Equal"


class TaintEffect(str, enum.Enum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


# -- shared parts ------------------------------------------------------------------------------


class Metadata(_Model):
    """Kubernetes-style metadata of a spec document."""

    name: Name = field(description="RFC 1035 name of the runtime or job (lower-case, starts with a letter, <= 63).")
    namespace: NamespaceName | None = field(
        default=None,
        description="Namespace of a job or of a namespaced runtime. Jobs default to 'default'.",
    )
    labels: dict[LabelKey, LabelValue] = field(
        default_factory=dict, description="Labels put on the compiled object (TrainJob or runtime)."
    )
    annotations: dict[LabelKey, str] = field(
        default_factory=dict, description="Annotations put on the compiled object (TrainJob or runtime)."
    )


class Resources(_Model):
    """Resources of one node (one trainer pod). Requests and limits are set equal."""

    gpu: Count | None = field(
        default=None, ge=0, le=MAX_GPUS_PER_NODE, description="GPUs per node (the runtime's gpuResource)."
    )
    cpu: CpuQuantity | None = field(default=None, description="CPU cores per node, e.g. 96 or 500m.")
    memory: ResourceQuantity | None = field(default=None, description="Memory per node, e.g. 1600Gi.")
    ephemeral_storage: ResourceQuantity | None = field(default=None, description="Local ephemeral storage per node.")
    extra: dict[LabelKey, ResourceQuantity] = field(
        default_factory=dict,
        description="Other extended resources by their Kubernetes name, e.g. {hugepages-2Mi: 4Gi}.",
    )

    if TYPE_CHECKING:  # quantities as users write them: 8, 0.5, "64Gi", "500m" (validated and parsed at run time)

        def __init__(
            self,
            *,
            gpu: int | None = None,
            cpu: QuantityInput | None = None,
            memory: QuantityInput | None = None,
            ephemeral_storage: QuantityInput | None = None,
            extra: Mapping[str, QuantityInput] = ...,
        ) -> None: ...
