"""The parts of a ``Runtime``'s spec (scheduling, network, restarts, accelerator, data sharding,
MPI) and ``RuntimeSpec`` itself: what the platform team fixes for every job on a runtime.

Import these from :mod:`trainspec.dsl.spec.models` (or ``trainspec``), which re-exports them.
"""

from __future__ import annotations

from typing import Annotated

from trainspec.dsl.framework.modeling import field
from trainspec.dsl.framework.types import (
    AbsolutePath,
    Count,
    Duration,
    EnvName,
    Image,
    LabelKey,
    LabelValue,
    ObjectName,
    Quantity,
    StrictBool,
    VolumeSize,
    _label_key,
    _PlainStr,
    fail,
)
from trainspec.dsl.kube_facts import INT64_MAX, LABEL_KEY_MAX, MAX_USER_ID, MPI_SSH_AUTH_MOUNT_PATH
from trainspec.dsl.spec.observability import RuntimeObservability
from trainspec.dsl.spec.parallelism import Bandwidth
from trainspec.dsl.spec.parts import (
    MAX_NODES,
    MAX_PROCS_PER_NODE,
    MAX_RESTARTS,
    AccessMode,
    Engine,
    ExtendedResourceName,
    Framework,
    Gang,
    RaySettings,
    ResourceList,
    Resources,
    Scope,
    TaintEffect,
    TolerationOperator,
    _Model,
)


def _taint_key(raw: object) -> str:
    # Empty means "every key" (with operator Exists); any other key is a label key.
    return "" if raw == "" else _label_key(raw)


#: A taint key: a label key, or empty.
TaintKey = Annotated[str, _PlainStr(_taint_key, {"type": "string", "maxLength": LABEL_KEY_MAX})]


class Toleration(_Model):
    """A Kubernetes toleration (the API server's rules: pkg/apis/core/validation ValidateTolerations)."""

    key: TaintKey | None = field(
        default=None, description="Taint key (a label key); empty with operator Exists matches all taints."
    )
    operator: TolerationOperator = field(default=TolerationOperator.EQUAL, description="Equal or Exists.")
    value: LabelValue | None = field(default=None, description="Taint value (a label value; operator Equal only).")
    effect: TaintEffect | None = field(default=None, description="NoSchedule, PreferNoSchedule or NoExecute.")
    toleration_seconds: Count | None = field(
        default=None, ge=0, le=INT64_MAX, description="How long a NoExecute taint is tolerated (effect NoExecute only)."
    )

    def _check(self) -> None:
        if not self.key and self.operator is not TolerationOperator.EXISTS:
            raise fail("ts_value", "a toleration without a key needs operator: Exists (it then matches every taint)")
        if self.operator is TolerationOperator.EXISTS and self.value:
            raise fail("ts_value", "a toleration with operator: Exists takes no value (it matches any value)")
        if self.toleration_seconds is not None and self.effect is not TaintEffect.NO_EXECUTE:
            raise fail(
                "ts_value", "tolerationSeconds needs effect: NoExecute (only a NoExecute taint evicts after a while)"
            )


class Scheduling(_Model):
    """Where pods may run."""

    node_selector: dict[LabelKey, LabelValue] = field(default_factory=dict, description="Node labels pods require.")
    tolerations: list[Toleration] = field(default_factory=list, description="Taints pods tolerate.")
    scheduler_name: ObjectName | None = field(
        default=None, description="Scheduler to use; defaults follow the gang policy (coscheduling, volcano)."
    )
    priority_class_name: ObjectName | None = field(default=None, description="Pod PriorityClass.")
    volcano_queue: ObjectName | None = field(default=None, description="Volcano queue (gang: volcano only).")
    gang_timeout: Duration | None = field(
        default=None, description="How long coscheduling waits for the whole gang (gang: coscheduling only)."
    )


class Network(_Model):
    """The interconnect profile of a runtime's nodes (NCCL settings, RDMA devices)."""

    env: dict[EnvName, str] = field(
        default_factory=dict, description="Environment for the trainer container, e.g. NCCL_IB_HCA."
    )
    resources: ResourceList = field(
        default_factory=dict,
        description="Extra device resources per node, e.g. {rdma/ib: 8} (whole amounts). An rdma/* resource also "
        "adds IPC_LOCK.",
    )
    ports: Count | None = field(
        default=None,
        ge=1,
        le=64,
        description="Network ports (NICs) per node that carry training traffic, for the parallelism planner "
        "(default: the count of an rdma/* resource, else 1).",
    )
    port_bandwidth: Bandwidth | None = field(
        default=None,
        description="Bandwidth of one port in one direction, e.g. 400Gb/s (InfiniBand NDR), for the parallelism "
        "planner's traffic times across nodes.",
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
    nvlink_bandwidth: Bandwidth | None = field(
        default=None,
        description="NVLink bandwidth of one GPU as its data sheet gives it, both directions together (H100 SXM: "
        "900GB/s), for the parallelism planner's traffic times inside a node.",
    )


class DataSharding(_Model):
    """Lets jobs on this runtime run the data-sharding stage; the shards live on a shared volume."""

    # No built-in default: an image nobody built would leave every sharded job in ImagePullBackOff.
    image: Image | None = field(
        default=None,
        description="Image of the sharding stage (built from trainspec's Dockerfile); unset: the "
        "project file's spec.defaults.stageImage. A sharded job needs one (TS416).",
    )
    size: VolumeSize = field(default_factory=lambda: Quantity.parse("100Gi"), description="Size of the shard volume.")
    storage_class: ObjectName | None = field(default=None, description="StorageClass of the shard volume.")
    access_mode: AccessMode = field(
        default=AccessMode.READ_WRITE_MANY,
        description="Access mode of the shard volume; multi-node jobs need ReadWriteMany.",
    )


class Mpi(_Model):
    """MPI settings (framework deepspeed or mpi)."""

    ssh_auth_mount_path: AbsolutePath = field(
        default=MPI_SSH_AUTH_MOUNT_PATH, description="Where the SSH keys are mounted."
    )
    run_launcher_as_node: StrictBool = field(default=True, description="The launcher also trains (counts as a node).")
    run_as_user: Count | None = field(
        default=None, ge=0, le=MAX_USER_ID, description="User id of the MPI containers (sshd needs it)."
    )
    ssh_port: Count | None = field(
        default=None,
        ge=1,
        le=65535,
        description="Port the workers' sshd listens on; workers count as Ready (the launcher starts) once it accepts.",
    )
    worker_command: list[str] = field(
        default_factory=lambda: ["/usr/sbin/sshd", "-De"], description="Command of the worker pods (an SSH daemon)."
    )


class RuntimeSpec(_Model):
    """What the platform team fixes for every job on this runtime."""

    framework: Framework = field(description="torch, deepspeed, mpi or jax.")
    scope: Scope = field(
        default=Scope.CLUSTER,
        description="cluster: a ClusterTrainingRuntime; namespace: a TrainingRuntime in metadata.namespace.",
    )
    image: Image = field(description="Default trainer image.")
    command: list[str] | None = field(default=None, description="Default trainer command (else the image's).")
    env: dict[EnvName, str] = field(default_factory=dict, description="Environment for every trainer container.")
    nodes: Count = field(default=1, ge=1, le=MAX_NODES, description="Default node count.")
    max_nodes: Count | None = field(
        default=None, ge=1, le=MAX_NODES, description="Largest node count a job may ask for."
    )
    procs_per_node: Count | None = field(
        default=None,
        ge=1,
        le=MAX_PROCS_PER_NODE,
        description="Default processes per node (default: GPUs per node, else 1).",
    )
    resources_per_node: Resources | None = field(default=None, description="Default resources of one node.")
    gpu_resource: ExtendedResourceName = field(
        default="nvidia.com/gpu",
        description="Kubernetes resource name of one GPU (an extended resource, <domain>/<name>).",
    )
    accelerator: Accelerator | None = field(default=None, description="GPU model and memory, for estimates.")
    shared_memory: VolumeSize | None = field(
        default=None, description="Size of /dev/shm, a memory-backed emptyDir (NCCL and data loaders need it)."
    )
    network: Network | None = field(default=None, description="Interconnect profile.")
    gang: Gang = field(default=Gang.KUEUE, description="kueue (default), coscheduling, volcano or none.")
    restarts: Restarts | None = field(default=None, description="JobSet failure policy.")
    scheduling: Scheduling | None = field(default=None, description="Node selection and tolerations.")
    data_sharding: DataSharding | None = field(
        default=None, description="Allows the data-sharding stage on this runtime."
    )
    mpi: Mpi | None = field(default=None, description="MPI settings (deepspeed and mpi only).")
    engine: Engine | None = field(
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
    observability: RuntimeObservability | None = field(
        default=None, description="Metrics port, PodMonitor, Grafana dashboard and team label defaults of its jobs."
    )
    ray: RaySettings | None = field(
        default=None, description="Ray cluster shape of its jobs on the ray engine, e.g. the head pod's size."
    )

    def _check(self) -> None:
        if self.mpi is not None and self.framework not in (Framework.DEEPSPEED, Framework.MPI):
            raise fail(
                "ts_value", f"spec.mpi is only for framework deepspeed or mpi (this runtime is {self.framework.value})"
            )
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise fail("ts_value", f"nodes ({self.nodes}) is larger than maxNodes ({self.max_nodes})")
