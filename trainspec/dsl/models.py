"""The spec models: ``Runtime`` and ``TrainingJob`` and their parts.

These are the public contract (YAML in camelCase, Python in snake_case). Every field is
documented; the descriptions become the JSON Schema. Unknown fields are errors.

In Python, both kinds can be built flat::

    TrainingJob(name="llama-sft", namespace="team-nlp", runtime="torch-h100", nodes=8,
                resources_per_node=Resources(gpu=8))

and a YAML document has the Kubernetes shape ``{apiVersion, kind, metadata, spec}``.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Mapping
from typing import Any, Literal, Optional, Union

from trainspec.dsl.modeling import Model, field
from trainspec.dsl.types import (
    AbsolutePath, AutoOrQuantity, Count, CpuQuantity, DataSourceUri, fail, Duration, EnvName, Image, LabelKey,
    LabelValue, Name, NamespaceName, ObjectName, ObjectStoreUri, ParamCount, Quantity, ResourceQuantity, StrictBool,
    VolumeSize,
)
from trainspec.dsl.wellknown import INT64_MAX, MAX_USER_ID, MPI_SSH_AUTH_MOUNT_PATH, SEED_MAX

API_VERSION = "trainspec.dev/v1alpha1"
API_GROUP = "trainspec.dev"

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
    namespace: Optional[NamespaceName] = field(
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

    gpu: Optional[Count] = field(
        default=None, ge=0, le=MAX_GPUS_PER_NODE, description="GPUs per node (the runtime's gpuResource)."
    )
    cpu: Optional[CpuQuantity] = field(default=None, description="CPU cores per node, e.g. 96 or 500m.")
    memory: Optional[ResourceQuantity] = field(default=None, description="Memory per node, e.g. 1600Gi.")
    ephemeral_storage: Optional[ResourceQuantity] = field(default=None, description="Local ephemeral storage per node.")
    extra: dict[LabelKey, ResourceQuantity] = field(
        default_factory=dict,
        description="Other extended resources by their Kubernetes name, e.g. {hugepages-2Mi: 4Gi}.",
    )


class Toleration(_Model):
    """A Kubernetes toleration."""

    key: Optional[str] = field(default=None, description="Taint key; empty with operator Exists matches all taints.")
    operator: TolerationOperator = field(default=TolerationOperator.EQUAL, description="Equal or Exists.")
    value: Optional[str] = field(default=None, description="Taint value (with operator Equal).")
    effect: Optional[TaintEffect] = field(default=None, description="NoSchedule, PreferNoSchedule or NoExecute.")
    toleration_seconds: Optional[Count] = field(
        default=None, ge=0, le=INT64_MAX, description="How long a NoExecute taint is tolerated."
    )


class Scheduling(_Model):
    """Where pods may run."""

    node_selector: dict[LabelKey, LabelValue] = field(default_factory=dict, description="Node labels pods require.")
    tolerations: list[Toleration] = field(default_factory=list, description="Taints pods tolerate.")
    scheduler_name: Optional[ObjectName] = field(
        default=None, description="Scheduler to use; defaults follow the gang policy (coscheduling, volcano)."
    )
    priority_class_name: Optional[ObjectName] = field(default=None, description="Pod PriorityClass.")
    volcano_queue: Optional[ObjectName] = field(default=None, description="Volcano queue (gang: volcano only).")
    gang_timeout: Optional[Duration] = field(
        default=None, description="How long coscheduling waits for the whole gang (gang: coscheduling only)."
    )


class Network(_Model):
    """The interconnect profile of a runtime's nodes (NCCL settings, RDMA devices)."""

    env: dict[EnvName, str] = field(default_factory=dict, description="Environment for the trainer container, e.g. NCCL_IB_HCA.")
    resources: dict[LabelKey, ResourceQuantity] = field(
        default_factory=dict,
        description="Extra device resources per node, e.g. {rdma/ib: 8}. An rdma/* resource also adds IPC_LOCK.",
    )

    @property
    def wants_rdma(self) -> bool:
        return any(name.startswith("rdma/") or "rdma" in name for name in self.resources)


class Restarts(_Model):
    """How often the whole job is restarted after a failure (JobSet failurePolicy)."""

    max: Count = field(ge=0, le=MAX_RESTARTS, description="Restarts before the job is marked failed.")


class Accelerator(_Model):
    """What one GPU is, for sizing estimates (explain)."""

    name: str = field(description="GPU model, e.g. H100.")
    memory: VolumeSize = field(description="Memory of one GPU, e.g. 80Gi.")


class DataSharding(_Model):
    """Lets jobs on this runtime run the data-sharding stage; the shards live on a shared volume."""

    # No built-in default: an image nobody built would leave every sharded job in ImagePullBackOff.
    image: Optional[Image] = field(
        default=None, description="Image of the sharding stage (built from trainspec's Dockerfile); unset: the "
                                  "project file's spec.defaults.stageImage. A sharded job needs one (TS416).")
    size: VolumeSize = field(default_factory=lambda: Quantity.parse("100Gi"), description="Size of the shard volume.")
    storage_class: Optional[ObjectName] = field(default=None, description="StorageClass of the shard volume.")
    access_mode: AccessMode = field(
        default=AccessMode.READ_WRITE_MANY,
        description="Access mode of the shard volume; multi-node jobs need ReadWriteMany.",
    )


class Mpi(_Model):
    """MPI settings (framework deepspeed or mpi)."""

    ssh_auth_mount_path: AbsolutePath = field(default=MPI_SSH_AUTH_MOUNT_PATH, description="Where the SSH keys are mounted.")
    run_launcher_as_node: StrictBool = field(default=True, description="The launcher also trains (counts as a node).")
    run_as_user: Optional[Count] = field(
        default=None, ge=0, le=MAX_USER_ID, description="User id of the MPI containers (sshd needs it)."
    )
    ssh_port: Optional[Count] = field(
        default=None, ge=1, le=65535,
        description="Port the workers' sshd listens on; workers count as Ready (the launcher starts) once it accepts.",
    )
    worker_command: list[str] = field(
        default_factory=lambda: ["/usr/sbin/sshd", "-De"], description="Command of the worker pods (an SSH daemon)."
    )


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

    def __init__(self, **data: Any) -> None:
        caller = sys._getframe(1)
        super().__init__(**_nest(data))
        # Remember the constructor call so diagnostics on Python specs can point at it.
        self.__dict__["_created_at"] = (caller.f_lineno, 1)

    @classmethod
    def _from_mapping(cls, data: Mapping, loc: tuple, errors: list) -> Any:
        return super()._from_mapping(_nest(data), loc, errors)

    __hash__ = None  # type: ignore[assignment]

    @property
    def created_at(self) -> Optional[tuple[int, int]]:
        """(line, column) of the constructor call in a Python spec file, if built from Python."""
        return self.__dict__.get("_created_at")

    @property
    def name(self) -> str:
        return self.metadata.name  # type: ignore[attr-defined]

    @property
    def namespace(self) -> Optional[str]:
        return self.metadata.namespace  # type: ignore[attr-defined]


# -- Runtime -----------------------------------------------------------------------------------


class RuntimeSpec(_Model):
    """What the platform team fixes for every job on this runtime."""

    framework: Framework = field(description="torch, deepspeed, mpi or jax.")
    scope: Scope = field(
        default=Scope.CLUSTER,
        description="cluster: a ClusterTrainingRuntime; namespace: a TrainingRuntime in metadata.namespace.",
    )
    image: Image = field(description="Default trainer image.")
    command: Optional[list[str]] = field(default=None, description="Default trainer command (else the image's).")
    env: dict[EnvName, str] = field(default_factory=dict, description="Environment for every trainer container.")
    nodes: Count = field(default=1, ge=1, le=MAX_NODES, description="Default node count.")
    max_nodes: Optional[Count] = field(
        default=None, ge=1, le=MAX_NODES, description="Largest node count a job may ask for."
    )
    procs_per_node: Optional[Count] = field(
        default=None, ge=1, le=MAX_PROCS_PER_NODE, description="Default processes per node (default: GPUs per node, else 1)."
    )
    resources_per_node: Optional[Resources] = field(default=None, description="Default resources of one node.")
    gpu_resource: LabelKey = field(default="nvidia.com/gpu", description="Kubernetes resource name of one GPU.")
    accelerator: Optional[Accelerator] = field(default=None, description="GPU model and memory, for estimates.")
    shared_memory: Optional[VolumeSize] = field(
        default=None, description="Size of /dev/shm, a memory-backed emptyDir (NCCL and data loaders need it)."
    )
    network: Optional[Network] = field(default=None, description="Interconnect profile.")
    gang: Gang = field(default=Gang.KUEUE, description="kueue (default), coscheduling, volcano or none.")
    restarts: Optional[Restarts] = field(default=None, description="JobSet failure policy.")
    scheduling: Optional[Scheduling] = field(default=None, description="Node selection and tolerations.")
    data_sharding: Optional[DataSharding] = field(
        default=None, description="Allows the data-sharding stage on this runtime."
    )
    mpi: Optional[Mpi] = field(default=None, description="MPI settings (deepspeed and mpi only).")
    engine: Optional[Engine] = field(
        default=None,
        description="The engine this runtime's jobs run on: trainer (Kubeflow Trainer v2, the default), ray "
                    "(KubeRay RayJob) or training-operator (PyTorchJob / MPIJob). --target engine=... overrides it; "
                    "it overrides the project file's spec.target.engine.",
    )
    external: StrictBool = field(
        default=False,
        description="Exists in the cluster already (another team's runtime, or one Kubeflow Trainer installs): "
                    "trainspec uses it for resolution and checks but never emits it.",
    )

    def _check(self) -> None:
        if self.mpi is not None and self.framework not in (Framework.DEEPSPEED, Framework.MPI):
            raise fail("ts_value", f"spec.mpi is only for framework deepspeed or mpi (this runtime is {self.framework.value})")
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise fail("ts_value", f"nodes ({self.nodes}) is larger than maxNodes ({self.max_nodes})")


class Runtime(_Flat):
    """A training runtime (platform team) -> ClusterTrainingRuntime or TrainingRuntime."""

    api_version: Literal["trainspec.dev/v1alpha1"] = field(default=API_VERSION, description="trainspec.dev/v1alpha1")
    kind: Literal["Runtime"] = field(default="Runtime", description="Runtime")
    metadata: Metadata = field(description="Name (and namespace for scope: namespace).")
    spec: RuntimeSpec = field(description="The runtime.")

    def _check(self) -> None:
        if self.spec.scope is Scope.NAMESPACE and not self.metadata.namespace:
            raise fail("ts_value", "a runtime with scope: namespace needs metadata.namespace")
        if self.spec.scope is Scope.CLUSTER and self.metadata.namespace:
            raise fail("ts_value", "a cluster-scoped runtime has no namespace (remove metadata.namespace or set scope: namespace)")


# -- TrainingJob -------------------------------------------------------------------------------


class SecretRef(_Model):
    """One key of a Kubernetes Secret."""

    secret: ObjectName = field(description="Secret name, in the job's namespace.")
    key: str = field(min_length=1, max_length=253, description="Key inside the Secret.")


class Topology(_Model):
    """Kueue topology-aware scheduling for the trainer pods."""

    mode: TopologyMode = field(default=TopologyMode.REQUIRED, description="required or preferred.")
    level: LabelKey = field(description="Node label of a Topology level, e.g. cloud.google.com/gce-topology-block.")


class Data(_Model):
    """The dataset and how the sharding stage splits it before training."""

    source: DataSourceUri = field(description="s3://, gs://, hf://, pvc://claim/path, or an absolute path.")
    format: DataFormat = field(default=DataFormat.JSONL, description="jsonl, text, parquet or files.")
    shard_by: ShardBy = field(
        default=ShardBy.RANK, description="rank: one shard per process (nodes x procsPerNode); node: one per node."
    )
    assignment: Assignment = field(
        default=Assignment.CONTIGUOUS, description="contiguous (keeps order), hashed or round-robin."
    )
    seed: Count = field(default=0, ge=0, le=SEED_MAX, description="Seed for hashed assignment.")


class ModelSize(_Model):
    """What is checkpointed, to size the checkpoint volume (size: auto)."""

    parameters: ParamCount = field(description="Parameter count, e.g. 70B.")
    dtype: DType = field(default=DType.BF16, description="Type of the saved weights.")
    optimizer: Optimizer = field(
        default=Optimizer.ADAMW, description="adam/adamw keep 3x the weights, sgd 1x, none 0."
    )
    optimizer_bytes_per_param: Optional[float] = field(
        default=None, ge=0, le=64, description="Overrides the optimizer state per parameter, in bytes."
    )


class Checkpoint(_Model):
    """Where checkpoints go: a new volume (size), an existing claim (claimName) or object storage (uri)."""

    path: AbsolutePath = field(default="/checkpoints", description="Mount path in every trainer pod.")
    size: Optional[AutoOrQuantity] = field(
        default=None, description="A quantity, or auto to size from model (per checkpoint x keep + 20%)."
    )
    model: Optional[ModelSize] = field(default=None, description="The model, for size: auto.")
    keep: Count = field(default=3, ge=1, le=MAX_KEEP, description="Checkpoints kept (TRAINSPEC_CHECKPOINT_KEEP).")
    storage_class: Optional[ObjectName] = field(default=None, description="StorageClass of a new volume.")
    access_mode: Optional[AccessMode] = field(
        default=None, description="Access mode of a new volume (default: ReadWriteMany when nodes > 1)."
    )
    claim_name: Optional[ObjectName] = field(default=None, description="Mount this existing PVC instead.")
    claim_access_mode: Optional[AccessMode] = field(
        default=None, description="Access mode of the existing claim, if known (checks multi-node use)."
    )
    uri: Optional[ObjectStoreUri] = field(default=None, description="Object storage instead of a volume.")

    def _check(self) -> None:
        forms = [name for name, on in (
            ("size", self.size is not None), ("claimName", self.claim_name is not None), ("uri", self.uri is not None)
        ) if on]
        if len(forms) > 1:
            raise fail("ts_checkpoint_forms", f"{' and '.join(forms)} are mutually exclusive: choose one checkpoint form")
        if not forms:
            raise fail("ts_checkpoint_forms", "checkpoint needs one of size (a new volume), claimName (an existing PVC) or uri (object storage)")
        volume_only = [n for n, v in (("storageClass", self.storage_class), ("accessMode", self.access_mode)) if v]
        if forms[0] != "size" and volume_only:
            raise fail("ts_checkpoint_forms", f"{', '.join(volume_only)} only apply to a new volume (size), not to {forms[0]}")
        if self.size == "auto" and self.model is None:
            raise fail("ts_checkpoint_auto", "size: auto needs checkpoint.model (parameters, dtype, optimizer)")


class NodeRange(_Model):
    """An elastic node range: the job runs on any node count from ``min`` to ``max``.

    Only elastic engines can run it (the Training Operator's PyTorchJob ``elasticPolicy``, Ray
    Train); counts, quotas and volumes are sized for ``max``.
    """

    min: Count = field(ge=1, le=MAX_NODES, description="Fewest nodes the job keeps training on.")
    max: Count = field(ge=1, le=MAX_NODES, description="Most nodes; Kueue admits (and reserves quota for) this many.")
    max_restarts: Count = field(
        default=3, ge=0, le=MAX_RESTARTS,
        description="How often torchrun restarts the worker group after a failure or a change of membership "
                    "(elasticPolicy.maxRestarts).",
    )

    def _check(self) -> None:
        if self.min > self.max:
            raise fail("ts_value", f"nodes.min ({self.min}) is larger than nodes.max ({self.max})")


class TrainingJobSpec(_Model):
    """What one training run needs."""

    # A Kubernetes object name, not an RFC 1035 label: Kubeflow Trainer's runtimes have dots (torchtune-llama3.2-1b).
    runtime: ObjectName = field(description="A Runtime among the inputs, a trainspec built-in (trainspec-torch, ...), "
                                            "or a Kubeflow Trainer runtime the cluster has (torch-distributed, ...).")
    image: Optional[Image] = field(default=None, description="Trainer image (default: the runtime's).")
    command: Optional[list[str]] = field(default=None, description="Trainer command, e.g. [torchrun, train.py].")
    args: Optional[list[str]] = field(default=None, description="Trainer arguments.")
    env: dict[EnvName, str] = field(default_factory=dict, description="Plain environment (no credentials).")
    secret_env: dict[EnvName, SecretRef] = field(
        default_factory=dict, description="Environment from Secrets: {HF_TOKEN: {secret: hf, key: token}}."
    )
    nodes: Optional[Union[Count, NodeRange]] = field(
        default=None, ge=1, le=MAX_NODES,
        description="Node count (default: the runtime's), or an elastic range {min, max, maxRestarts} "
                    "(engine training-operator or ray only).",
    )
    procs_per_node: Optional[Count] = field(
        default=None, ge=1, le=MAX_PROCS_PER_NODE, description="Processes per node (default: GPUs per node, else 1)."
    )
    resources_per_node: Optional[Resources] = field(
        default=None, description="Resources of one node, merged over the runtime's."
    )
    queue: Optional[ObjectName] = field(
        default=None, description="Kueue LocalQueue (kueue.x-k8s.io/queue-name); the job is created suspended."
    )
    priority: Optional[ObjectName] = field(
        default=None, description="Kueue WorkloadPriorityClass (kueue.x-k8s.io/priority-class)."
    )
    max_run_time: Optional[Duration] = field(
        default=None, description="Deadline: activeDeadlineSeconds and Kueue max-exec-time, e.g. 72h."
    )
    topology: Optional[Topology] = field(default=None, description="Kueue topology-aware placement of trainer pods.")
    data: Optional[Data] = field(default=None, description="Dataset to shard before training.")
    checkpoint: Optional[Checkpoint] = field(default=None, description="Checkpoint storage.")
    pod_labels: dict[LabelKey, LabelValue] = field(default_factory=dict, description="Labels on every trainer pod.")
    pod_annotations: dict[LabelKey, str] = field(
        default_factory=dict, description="Annotations on every trainer pod."
    )


class TrainingJob(_Flat):
    """A training run (model developer) -> TrainJob, plus its checkpoint PVC."""

    api_version: Literal["trainspec.dev/v1alpha1"] = field(default=API_VERSION, description="trainspec.dev/v1alpha1")
    kind: Literal["TrainingJob"] = field(default="TrainingJob", description="TrainingJob")
    metadata: Metadata = field(description="Name, namespace, labels and annotations of the TrainJob.")
    spec: TrainingJobSpec = field(description="The job.")


#: The spec kinds, by name (``Project``, the project file, lives in ``dsl.project``).
KINDS: dict[str, type[_Model]] = {"Runtime": Runtime, "TrainingJob": TrainingJob}

Spec = Union[Runtime, TrainingJob]
