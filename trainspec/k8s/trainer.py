"""Kubeflow Trainer (``trainer.kubeflow.org/v1alpha1``): TrainJob and the training runtimes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from trainspec.k8s.base import Model, Resource
from trainspec.k8s.core import (
    Affinity,
    EnvVar,
    LocalObjectReference,
    PodSchedulingGate,
    PodSecurityContext,
    ResourceRequirements,
    SecurityContext,
    Toleration,
    Volume,
    VolumeMount,
)
from trainspec.k8s.jobset import JobSetSpec
from trainspec.k8s.meta import ObjectMeta
from trainspec.k8s.wellknown import TRAINER_API_VERSION  # re-exported; defined once, with the group

__all__ = [
    "TRAINER_API_VERSION",
    "ClusterTrainingRuntime",
    "ContainerPatch",
    "CoschedulingPodGroupPolicySource",
    "DatasetInitializer",
    "EnvInjectionTarget",
    "FluxMLPolicySource",
    "Initializer",
    "JAXMLPolicySource",
    "JobSetSpecPatch",
    "JobSetTemplatePatch",
    "JobSetTemplateSpec",
    "JobSpecPatch",
    "JobTemplatePatch",
    "MLPolicy",
    "MPIMLPolicySource",
    "MetadataPatch",
    "ModelInitializer",
    "PodGroupPolicy",
    "PodSpecPatch",
    "PodTemplatePatch",
    "ReplicatedJobPatch",
    "RuntimePatch",
    "RuntimeRef",
    "TorchEnvInjection",
    "TorchMLPolicySource",
    "TrainJob",
    "TrainJobSpec",
    "Trainer",
    "TrainingRuntime",
    "TrainingRuntimeSpec",
    "TrainingRuntimeSpecPatch",
    "VolcanoNetworkTopology",
    "VolcanoPodGroupPolicySource",
    "XGBoostMLPolicySource",
]

# --- TrainJob -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class RuntimeRef(Model):
    """The runtime a TrainJob instantiates. Immutable; the runtime must exist before the job."""

    name: str
    api_group: str | None = None
    kind: Literal["ClusterTrainingRuntime", "TrainingRuntime"] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class DatasetInitializer(Model):
    """Feeds the ``dataset-initializer`` container of the rjob with that ancestor label.

    ``storage_uri`` becomes env ``STORAGE_URI``; ``secret_ref`` becomes ``envFrom.secretRef``
    (so the secret's keys must be env names like ``ACCESS_TOKEN``).
    """

    storage_uri: str | None = None
    env: list[EnvVar] | None = None
    secret_ref: LocalObjectReference | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ModelInitializer(Model):
    """Feeds the ``model-initializer`` container of the rjob with that ancestor label."""

    storage_uri: str | None = None
    env: list[EnvVar] | None = None
    secret_ref: LocalObjectReference | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Initializer(Model):
    """Dataset and model initializers. Immutable."""

    dataset: DatasetInitializer | None = None
    model: ModelInitializer | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Trainer(Model):
    """Overrides for container ``node`` of the trainer-ancestor rjob. Immutable.

    ``command``/``args`` replace the runtime's; ``env`` is upserted (framework-reserved names
    such as ``PET_*`` are rejected); ``resources_per_node`` is merged key by key (v2.3+);
    ``num_nodes`` sets the Job's parallelism/completions.
    """

    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    num_nodes: int | None = None
    resources_per_node: ResourceRequirements | None = None
    num_proc_per_node: int | None = None


# Runtime patches: a restricted mirror of the runtime's JobSet template, strategic-merged in
# list order. Every level is optional; list entries are matched by name, and named rjobs and
# containers must exist in the runtime.


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MetadataPatch(Model):
    """Labels/annotations to merge into the patched object (the only metadata allowed)."""

    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ContainerPatch(Model):
    """Patch for an existing container of the rjob.

    Setting ``env`` on ``node``, ``dataset-initializer`` or ``model-initializer`` is rejected:
    use ``Trainer.env`` / the initializer's ``env`` for those.
    """

    name: str
    env: list[EnvVar] | None = None
    volume_mounts: list[VolumeMount] | None = None
    security_context: SecurityContext | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodSpecPatch(Model):
    """Patch for a pod spec.

    Volumes, containers, initContainers, serviceAccountName, imagePullSecrets, securityContext
    and terminationGracePeriodSeconds are immutable once the patch entry exists; the
    scheduling fields (nodeSelector, affinity, tolerations, schedulingGates) stay mutable.
    """

    volumes: list[Volume] | None = None
    init_containers: list[ContainerPatch] | None = None
    containers: list[ContainerPatch] | None = None
    node_selector: dict[str, str] | None = None
    affinity: Affinity | None = None
    tolerations: list[Toleration] | None = None
    scheduling_gates: list[PodSchedulingGate] | None = None
    service_account_name: str | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    security_context: PodSecurityContext | None = None
    termination_grace_period_seconds: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodTemplatePatch(Model):
    """Patch for a Job's pod template (labels here land on the pods)."""

    metadata: MetadataPatch | None = None
    spec: PodSpecPatch | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JobSpecPatch(Model):
    """Patch for a Job spec: only the pod template can be patched."""

    template: PodTemplatePatch | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JobTemplatePatch(Model):
    """Patch for an rjob's Job template (labels here land on the Job, not the pods)."""

    metadata: MetadataPatch | None = None
    spec: JobSpecPatch | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ReplicatedJobPatch(Model):
    """Patch for one rjob, matched by name (which must exist in the runtime)."""

    name: str
    template: JobTemplatePatch | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JobSetSpecPatch(Model):
    """Patch for the JobSet spec: only replicatedJobs can be patched."""

    replicated_jobs: list[ReplicatedJobPatch] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JobSetTemplatePatch(Model):
    """Patch for the runtime's JobSet template (metadata lands on the JobSet)."""

    metadata: MetadataPatch | None = None
    spec: JobSetSpecPatch | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TrainingRuntimeSpecPatch(Model):
    """Patch for the referenced runtime's spec."""

    template: JobSetTemplatePatch | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class RuntimePatch(Model):
    """One ``runtimePatches`` entry, keyed by ``manager`` (a domain-prefixed path).

    The webhook stamps ``time``; it is never emitted by trainspec.
    """

    manager: str
    training_runtime_spec: TrainingRuntimeSpecPatch | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TrainJobSpec(Model):
    """A TrainJob specification. Only ``suspend`` is freely mutable after creation."""

    runtime_ref: RuntimeRef
    initializer: Initializer | None = None
    trainer: Trainer | None = None
    runtime_patches: list[RuntimePatch] | None = None
    suspend: bool | None = None
    active_deadline_seconds: int | None = None
    managed_by: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TrainJob(Resource):
    """A training job (top-level, namespaced). The controller creates one JobSet of the same name.

    Metadata labels/annotations are NOT copied to the JobSet or pods (Kueue reads the queue
    label here); use a runtime patch to label Jobs or pods.
    """

    api_version: ClassVar[str] = TRAINER_API_VERSION
    kind: ClassVar[str] = "TrainJob"

    metadata: ObjectMeta
    spec: TrainJobSpec


# --- runtimes -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class EnvInjectionTarget(Model):
    """Extra containers (not ``node``, 1-8 names) of rjob ``job_name`` that get the PET_* env."""

    job_name: str
    container_names: list[str]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TorchEnvInjection(Model):
    """Where else the torch plugin injects PET_* env (v2.3+)."""

    targets: list[EnvInjectionTarget] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TorchMLPolicySource(Model):
    """PyTorch policy; ``TorchMLPolicySource()`` serialises to ``torch: {}``.

    There is no numProcPerNode here since v2.2: it comes from the TrainJob or is inferred.
    """

    env_injection: TorchEnvInjection | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MPIMLPolicySource(Model):
    """MPI (OpenMPI) policy: rjobs ``launcher`` + ``node``, SSH keys and hostfile injected."""

    num_proc_per_node: int | None = None
    mpi_implementation: Literal["OpenMPI", ""] | None = None
    ssh_auth_mount_path: str | None = None
    run_launcher_as_node: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JAXMLPolicySource(Model):
    """JAX policy: an empty struct, serialises to ``jax: {}``."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class XGBoostMLPolicySource(Model):
    """XGBoost policy: an empty struct, serialises to ``xgboost: {}``."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class FluxMLPolicySource(Model):
    """Flux framework policy."""

    num_proc_per_node: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MLPolicy(Model):
    """Node count plus at most ONE framework source (CEL); none at all means plain ML."""

    num_nodes: int | None = None
    torch: TorchMLPolicySource | None = None
    mpi: MPIMLPolicySource | None = None
    jax: JAXMLPolicySource | None = None
    xgboost: XGBoostMLPolicySource | None = None
    flux: FluxMLPolicySource | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class CoschedulingPodGroupPolicySource(Model):
    """scheduler-plugins gang scheduling; the pod template must also set ``schedulerName``."""

    schedule_timeout_seconds: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class VolcanoNetworkTopology(Model):
    """Volcano network-topology-aware placement."""

    mode: Literal["hard", "soft"] | None = None
    highest_tier_allowed: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class VolcanoPodGroupPolicySource(Model):
    """Volcano gang scheduling; the queue comes from JobSet annotation
    ``scheduling.volcano.sh/queue-name``."""

    network_topology: VolcanoNetworkTopology | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodGroupPolicy(Model):
    """Gang scheduling through a PodGroup; set one source (Kueue users usually set none)."""

    coscheduling: CoschedulingPodGroupPolicySource | None = None
    volcano: VolcanoPodGroupPolicySource | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JobSetTemplateSpec(Model):
    """The runtime's JobSet blueprint (metadata lands on the JobSet)."""

    metadata: ObjectMeta | None = None
    spec: JobSetSpec


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TrainingRuntimeSpec(Model):
    """Shared spec of TrainingRuntime and ClusterTrainingRuntime.

    Always set ``ml_policy`` (even just ``MLPolicy(num_nodes=1)``): the SDK fails to list
    runtimes without one.
    """

    ml_policy: MLPolicy | None = None
    pod_group_policy: PodGroupPolicy | None = None
    template: JobSetTemplateSpec


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ClusterTrainingRuntime(Resource):
    """A cluster-scoped runtime blueprint (metadata carries no namespace)."""

    api_version: ClassVar[str] = TRAINER_API_VERSION
    kind: ClassVar[str] = "ClusterTrainingRuntime"

    metadata: ObjectMeta
    spec: TrainingRuntimeSpec


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TrainingRuntime(Resource):
    """A namespaced runtime blueprint; only TrainJobs of the same namespace can use it."""

    api_version: ClassVar[str] = TRAINER_API_VERSION
    kind: ClassVar[str] = "TrainingRuntime"

    metadata: ObjectMeta
    spec: TrainingRuntimeSpec
