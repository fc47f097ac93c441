"""The parts of a ``TrainingJob``'s spec (secrets, topology, data, checkpoint, elastic node range)
and ``TrainingJobSpec`` itself: what one training run needs.

Import these from :mod:`trainspec.dsl.spec.models` (or ``trainspec``), which re-exports them.
"""

from __future__ import annotations

from typing import Annotated

from trainspec.dsl.framework.modeling import Invalid, field
from trainspec.dsl.framework.types import (
    AbsolutePath,
    AutoOrQuantity,
    Count,
    DataSourceUri,
    Duration,
    EnvName,
    Image,
    LabelKey,
    LabelValue,
    ObjectName,
    ObjectStoreUri,
    ParamCount,
    _NameRule,
    fail,
)
from trainspec.dsl.kube_facts import (
    DNS1123_SUBDOMAIN_PATTERN,
    LABEL_VALUE_MAX,
    SECRET_KEY_MAX,
    SECRET_KEY_PATTERN,
    SEED_MAX,
    is_dns1123_subdomain,
    is_secret_key,
)
from trainspec.dsl.spec.observability import JobObservability
from trainspec.dsl.spec.parallelism import Parallelism, TransformerModel
from trainspec.dsl.spec.parts import (
    MAX_KEEP,
    MAX_NODES,
    MAX_PROCS_PER_NODE,
    MAX_RESTARTS,
    AccessMode,
    Annotations,
    Assignment,
    CheckpointWriter,
    DataFormat,
    DType,
    Optimizer,
    RaySettings,
    Resources,
    RunPolicy,
    ShardBalance,
    ShardBy,
    ShardChecksum,
    ShardMode,
    TopologyMode,
    _Model,
)
from trainspec.dsl.spec.tracking import Tracking

#: The name of an object that trainspec also writes as a label value: a Kueue LocalQueue
#: (``kueue.x-k8s.io/queue-name``) or WorkloadPriorityClass (``kueue.x-k8s.io/priority-class``).
#: An object name (DNS-1123 subdomain) and a label value at once, so at most 63 characters.
_LABEL_OBJECT_NAME = _NameRule(
    "ts_name",
    is_dns1123_subdomain,
    "Kueue queue or priority class name (an object name written as a label value)",
    DNS1123_SUBDOMAIN_PATTERN,
    LABEL_VALUE_MAX,
    "team-nlp",
    hint=f"use lower-case letters, digits, '-' and '.', at most {LABEL_VALUE_MAX} characters: "
    "Kueue reads the name from a label, and label values are at most 63 characters",
)
LabelObjectName = Annotated[str, _LABEL_OBJECT_NAME]


def label_object_name_problem(value: str) -> str | None:
    """Why ``value`` cannot be a :data:`LabelObjectName` (for values the project file fills in)."""
    try:
        _LABEL_OBJECT_NAME.__validate__(value)
    except Invalid as exc:
        return exc.msg
    return None


#: A key of a Secret (``secretKeyRef.key``): letters, digits, '-', '_' and '.', at most 253
#: characters, not '.', nor starting with '..' (validation.IsConfigMapKey).
SecretKey = Annotated[
    str,
    _NameRule(
        "ts_name",
        is_secret_key,
        "Secret key",
        SECRET_KEY_PATTERN,
        SECRET_KEY_MAX,
        "token",
        hint=f"a Secret key has letters, digits, '-', '_' and '.' only (at most {SECRET_KEY_MAX}, not '.' and "
        "not starting with '..'): the key as `kubectl create secret generic NAME --from-literal=KEY=...` names it",
    ),
]


class SecretRef(_Model):
    """One key of a Kubernetes Secret."""

    secret: ObjectName = field(description="Secret name, in the job's namespace.")
    key: SecretKey = field(description="Key inside the Secret: letters, digits, '-', '_' and '.'.")


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
    mode: ShardMode | None = field(
        default=None,
        description="index: the stage writes only byte ranges and trainers read the source in place (default for "
        "contiguous); copy: materialised shard files (default, and the only mode, for hashed and round-robin).",
    )
    balance: ShardBalance = field(
        default=ShardBalance.RECORDS,
        description="Index mode: records (shard record counts differ by at most one) or bytes (equal byte ranges, "
        "no full scan).",
    )
    checksum: ShardChecksum = field(
        default=ShardChecksum.NONE,
        description="none, xxh3 or sha256: recorded per source file (index) or per shard (copy) for readers to verify.",
    )

    def _check(self) -> None:
        if self.mode is ShardMode.INDEX and self.assignment is not Assignment.CONTIGUOUS:
            raise fail(
                "ts_shard_mode",
                f"mode: index needs assignment: contiguous (assignment {self.assignment.value} reorders "
                "records, so its shards are not byte ranges)",
            )

    @property
    def shard_mode(self) -> ShardMode:
        """The mode the stage runs in: ``mode`` if given, else index for contiguous and copy otherwise."""
        if self.mode is not None:
            return self.mode
        return ShardMode.INDEX if self.assignment is Assignment.CONTIGUOUS else ShardMode.COPY


class ModelSize(_Model):
    """What is checkpointed, to size the checkpoint volume (size: auto)."""

    parameters: ParamCount = field(description="Parameter count, e.g. 70B.")
    dtype: DType = field(default=DType.BF16, description="Type of the saved weights.")
    optimizer: Optimizer = field(
        default=Optimizer.ADAMW,
        description="adam/adamw keep two fp32 moments (8 bytes/param), sgd one (4), none 0; with weights narrower "
        "than fp32 also an fp32 master copy (4).",
    )
    optimizer_bytes_per_param: float | None = field(
        default=None,
        ge=0,
        le=64,
        description="Overrides the optimizer state per parameter (master copy + moments), in bytes.",
    )
    format: CheckpointWriter | None = field(
        default=None,
        description="Who writes the checkpoints: dcp (PyTorch FSDP/DDP, torchtitan: fp32 weights + moments), "
        "deepspeed or megatron (weights + fp32 master + moments). Default: what parallelism.framework or the "
        "runtime's framework says, else the largest of them.",
    )


class Checkpoint(_Model):
    """Where checkpoints go: a new volume (size), an existing claim (claimName) or object storage (uri)."""

    path: AbsolutePath = field(default="/checkpoints", description="Mount path in every trainer pod.")
    size: AutoOrQuantity | None = field(
        default=None, description="A quantity, or auto to size from model (per checkpoint x keep + 20%)."
    )
    model: ModelSize | None = field(default=None, description="The model, for size: auto.")
    keep: Count = field(default=3, ge=1, le=MAX_KEEP, description="Checkpoints kept (TRAINSPEC_CHECKPOINT_KEEP).")
    storage_class: ObjectName | None = field(default=None, description="StorageClass of a new volume.")
    access_mode: AccessMode | None = field(
        default=None, description="Access mode of a new volume (default: ReadWriteMany when nodes > 1)."
    )
    claim_name: ObjectName | None = field(default=None, description="Mount this existing PVC instead.")
    claim_access_mode: AccessMode | None = field(
        default=None, description="Access mode of the existing claim, if known (checks multi-node use)."
    )
    uri: ObjectStoreUri | None = field(default=None, description="Object storage instead of a volume.")
    protect: bool = field(
        default=True,
        description="Keep a new volume's claim out of GitOps pruning and deletion (Argo CD Prune=false,Delete=false; "
        "Flux prune: disabled), so the checkpoints outlive every edit of the tree.",
    )

    def _check(self) -> None:
        forms = [
            name
            for name, on in (
                ("size", self.size is not None),
                ("claimName", self.claim_name is not None),
                ("uri", self.uri is not None),
            )
            if on
        ]
        if len(forms) > 1:
            raise fail(
                "ts_checkpoint_forms", f"{' and '.join(forms)} are mutually exclusive: choose one checkpoint form"
            )
        if not forms:
            raise fail(
                "ts_checkpoint_forms",
                "checkpoint needs one of size (a new volume), claimName (an existing PVC) or uri (object storage)",
            )
        volume_only = [n for n, v in (("storageClass", self.storage_class), ("accessMode", self.access_mode)) if v]
        if forms[0] != "size" and volume_only:
            raise fail(
                "ts_checkpoint_forms", f"{', '.join(volume_only)} only apply to a new volume (size), not to {forms[0]}"
            )
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
        default=3,
        ge=0,
        le=MAX_RESTARTS,
        description="How often torchrun restarts the worker group after a failure or a change of membership "
        "(elasticPolicy.maxRestarts).",
    )

    def _check(self) -> None:
        if self.min > self.max:
            raise fail("ts_value", f"nodes.min ({self.min}) is larger than nodes.max ({self.max})")


class TrainingJobSpec(_Model):
    """What one training run needs."""

    # A Kubernetes object name, not an RFC 1035 label: Kubeflow Trainer's runtimes have dots (torchtune-llama3.2-1b).
    runtime: ObjectName = field(
        description="A Runtime among the inputs, a trainspec built-in (trainspec-torch, ...), "
        "or a Kubeflow Trainer runtime the cluster has (torch-distributed, ...)."
    )
    image: Image | None = field(default=None, description="Trainer image (default: the runtime's).")
    command: list[str] | None = field(default=None, description="Trainer command, e.g. [torchrun, train.py].")
    args: list[str] | None = field(default=None, description="Trainer arguments.")
    env: dict[EnvName, str] = field(
        default_factory=dict,
        description="Plain environment (no credentials: a name that says secret, such as *_TOKEN or *PASSWORD*, needs "
        "secretEnv, or a listing in notSecret).",
    )
    secret_env: dict[EnvName, SecretRef] = field(
        default_factory=dict, description="Environment from Secrets: {HF_TOKEN: {secret: hf, key: token}}."
    )
    not_secret: list[EnvName] = field(
        default_factory=list,
        description="Names in env whose values are not secrets although their names say so (SORT_KEY, "
        "TOKEN_BUDGET): the name rule lets them pass; a value shaped like a credential is still an error.",
    )
    nodes: Count | NodeRange | None = field(
        default=None,
        ge=1,
        le=MAX_NODES,
        description="Node count (default: the runtime's), or an elastic range {min, max, maxRestarts} "
        "(engine training-operator or ray only).",
    )
    procs_per_node: Count | None = field(
        default=None, ge=1, le=MAX_PROCS_PER_NODE, description="Processes per node (default: GPUs per node, else 1)."
    )
    resources_per_node: Resources | None = field(
        default=None, description="Resources of one node, merged over the runtime's."
    )
    queue: LabelObjectName | None = field(
        default=None,
        description="Kueue LocalQueue (kueue.x-k8s.io/queue-name, so at most 63 characters); Kueue holds the job "
        "until it admits it.",
    )
    priority: LabelObjectName | None = field(
        default=None,
        description="Kueue WorkloadPriorityClass (kueue.x-k8s.io/priority-class, so at most 63 characters).",
    )
    max_run_time: Duration | None = field(
        default=None, description="Deadline: activeDeadlineSeconds and Kueue max-exec-time, e.g. 72h."
    )
    topology: Topology | None = field(default=None, description="Kueue topology-aware placement of trainer pods.")
    data: Data | None = field(default=None, description="Dataset to shard before training.")
    checkpoint: Checkpoint | None = field(default=None, description="Checkpoint storage.")
    model: TransformerModel | None = field(
        default=None,
        description="The transformer trained (layers, hiddenSize, attentionHeads, sequenceLength, ...), for the "
        "parallelism planner of explain (docs/parallelism.md).",
    )
    parallelism: Parallelism | None = field(
        default=None,
        description="A pinned parallel layout (tp, pp, dp, zeroStage/fsdp, recompute), checked by the planner and "
        "passed to the training code as TRAINSPEC_TP_SIZE, TRAINSPEC_PP_SIZE, ...",
    )
    runs: RunPolicy = field(
        default=RunPolicy.NEW,
        description="What a change of the job's shape (nodes, image, command, args, env, resources, deadline, "
        "runtime, queue) does: new (a new run <name>-<run id> replaces the old one and resumes from the newest "
        "checkpoint) or replace (the job keeps its name; the GitOps controller deletes and recreates it).",
    )
    rerun: Count = field(
        default=0,
        ge=0,
        le=1_000_000,
        description="Bump to start a new run of an unchanged job (part of the run id).",
    )
    pod_labels: dict[LabelKey, LabelValue] = field(default_factory=dict, description="Labels on every trainer pod.")
    pod_annotations: Annotations = field(default_factory=dict, description="Annotations on every trainer pod.")
    observability: JobObservability | None = field(
        default=None, description="Team label, PodMonitor and Grafana dashboard of this job (over the runtime's)."
    )
    tracking: Tracking | None = field(
        default=None,
        description="The experiment tracker rank 0 logs to: {mlflow: {uri, experiment}} or {wandb: {project, "
        "entity}}, compiled to the variables the library reads on every rank; credentials only through secretEnv "
        "(docs/tracking.md).",
    )
    ray: RaySettings | None = field(
        default=None, description="Ray cluster shape on the ray engine, merged over the runtime's key by key."
    )
