"""Core (``v1``) types: containers, pods, volumes, scheduling constraints and PVCs.

Only the fields trainspec emits are modelled. Field order follows the Kubernetes API types,
with ``name`` first in list items; the serialiser keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from trainspec.k8s.base import Model, Resource
from trainspec.k8s.meta import ObjectMeta

__all__ = [
    "AccessMode",
    "Affinity",
    "Capabilities",
    "ConfigMapEnvSource",
    "ConfigMapKeySelector",
    "ConfigMapVolumeSource",
    "Container",
    "ContainerPort",
    "EmptyDirVolumeSource",
    "EnvFromSource",
    "EnvVar",
    "EnvVarSource",
    "KeyToPath",
    "LocalObjectReference",
    "NodeAffinity",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "ObjectFieldSelector",
    "PersistentVolumeClaim",
    "PersistentVolumeClaimSpec",
    "PersistentVolumeClaimTemplate",
    "PersistentVolumeClaimVolumeSource",
    "PodSchedulingGate",
    "PodSecurityContext",
    "PodSpec",
    "PodTemplateSpec",
    "PreferredSchedulingTerm",
    "Probe",
    "Quantity",
    "ResourceFieldSelector",
    "ResourceRequirements",
    "SeccompProfile",
    "SecretEnvSource",
    "SecretKeySelector",
    "SecretVolumeSource",
    "SecurityContext",
    "TCPSocketAction",
    "Toleration",
    "Volume",
    "VolumeMount",
    "VolumeResourceRequirements",
]

#: A resource quantity. An int is emitted as a YAML int (``nvidia.com/gpu: 8``); strings carry
#: suffixed forms (``1600Gi``, ``500m``). Both are what the API server accepts (int-or-string).
Quantity = str | int

AccessMode = Literal["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]
RestartPolicy = Literal["Always", "OnFailure", "Never"]
PullPolicy = Literal["Always", "IfNotPresent", "Never"]


# --- references and env -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class LocalObjectReference(Model):
    """A reference to an object in the same namespace, by name (e.g. an image pull secret)."""

    name: str


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ObjectFieldSelector(Model):
    """Selects a pod field (the node rank is the annotation
    ``batch.kubernetes.io/job-completion-index``)."""

    api_version: str | None = None
    field_path: str


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ResourceFieldSelector(Model):
    """Selects a container resource (limits/requests) to expose as env."""

    container_name: str | None = None
    resource: str
    divisor: Quantity | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ConfigMapKeySelector(Model):
    """One key of a ConfigMap."""

    name: str
    key: str
    optional: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class SecretKeySelector(Model):
    """One key of a Secret."""

    name: str
    key: str
    optional: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class EnvVarSource(Model):
    """Where an env var's value comes from (set exactly one)."""

    field_ref: ObjectFieldSelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None
    config_map_key_ref: ConfigMapKeySelector | None = None
    secret_key_ref: SecretKeySelector | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class EnvVar(Model):
    """An environment variable: a literal ``value`` or a ``value_from`` source."""

    name: str
    value: str | None = None
    value_from: EnvVarSource | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ConfigMapEnvSource(Model):
    """All keys of a ConfigMap as env vars."""

    name: str
    optional: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class SecretEnvSource(Model):
    """All keys of a Secret as env vars."""

    name: str
    optional: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class EnvFromSource(Model):
    """An ``envFrom`` entry (set one of ``config_map_ref`` / ``secret_ref``)."""

    prefix: str | None = None
    config_map_ref: ConfigMapEnvSource | None = None
    secret_ref: SecretEnvSource | None = None


# --- resources ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ResourceRequirements(Model):
    """Container requests and limits (extended resources like GPUs need requests == limits)."""

    requests: dict[str, Quantity] | None = None
    limits: dict[str, Quantity] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class VolumeResourceRequirements(Model):
    """PVC size: ``requests: {storage: 100Gi}``."""

    requests: dict[str, Quantity] | None = None
    limits: dict[str, Quantity] | None = None


# --- volumes ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class VolumeMount(Model):
    """Mounts a pod volume (by name) into a container."""

    name: str
    mount_path: str
    read_only: bool | None = None
    sub_path: str | None = None
    sub_path_expr: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class KeyToPath(Model):
    """Projects one Secret/ConfigMap key to a relative file path."""

    key: str
    path: str
    mode: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class EmptyDirVolumeSource(Model):
    """Scratch space; ``medium="Memory"`` gives a tmpfs (the usual /dev/shm for NCCL loaders)."""

    medium: str | None = None
    size_limit: Quantity | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PersistentVolumeClaimVolumeSource(Model):
    """Mounts an existing PVC."""

    claim_name: str
    read_only: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class SecretVolumeSource(Model):
    """Mounts a Secret as files."""

    secret_name: str
    items: list[KeyToPath] | None = None
    default_mode: int | None = None
    optional: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ConfigMapVolumeSource(Model):
    """Mounts a ConfigMap as files."""

    name: str
    items: list[KeyToPath] | None = None
    default_mode: int | None = None
    optional: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Volume(Model):
    """A pod volume: a name plus exactly one source."""

    name: str
    empty_dir: EmptyDirVolumeSource | None = None
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    secret: SecretVolumeSource | None = None
    config_map: ConfigMapVolumeSource | None = None


# --- security -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Capabilities(Model):
    """Linux capabilities to add or drop (``drop: [ALL]`` for the restricted profile)."""

    add: list[str] | None = None
    drop: list[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class SeccompProfile(Model):
    """Seccomp profile (``type: RuntimeDefault`` for the restricted profile)."""

    type: Literal["RuntimeDefault", "Localhost", "Unconfined"]
    localhost_profile: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class SecurityContext(Model):
    """Container-level security settings (override the pod-level ones)."""

    capabilities: Capabilities | None = None
    privileged: bool | None = None
    run_as_user: int | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    read_only_root_filesystem: bool | None = None
    allow_privilege_escalation: bool | None = None
    seccomp_profile: SeccompProfile | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodSecurityContext(Model):
    """Pod-level security settings (``fs_group`` makes mounted volumes group-writable)."""

    run_as_user: int | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    supplemental_groups: list[int] | None = None
    fs_group: int | None = None
    fs_group_change_policy: Literal["OnRootMismatch", "Always"] | None = None
    seccomp_profile: SeccompProfile | None = None


# --- scheduling ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Toleration(Model):
    """Lets pods schedule onto nodes with a matching taint."""

    key: str | None = None
    operator: Literal["Exists", "Equal"] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class NodeSelectorRequirement(Model):
    """``key operator values``, e.g. ``nvidia.com/gpu.product In [H100-SXM]``."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class NodeSelectorTerm(Model):
    """Requirements ANDed together (terms in a list are ORed)."""

    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class NodeSelector(Model):
    """The required node-affinity rule: any one of the terms must match."""

    node_selector_terms: list[NodeSelectorTerm]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PreferredSchedulingTerm(Model):
    """A weighted (1-100) soft node preference."""

    weight: int
    preference: NodeSelectorTerm


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class NodeAffinity(Model):
    """Hard and soft node constraints."""

    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = (
        None
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Affinity(Model):
    """Pod affinity rules; only node affinity is modelled (pod (anti-)affinity is not emitted)."""

    node_affinity: NodeAffinity | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodSchedulingGate(Model):
    """A gate that keeps the pod unschedulable until removed (Kueue uses these)."""

    name: str


# --- containers ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ContainerPort(Model):
    """A port the container listens on (informational, but names it for probes/services)."""

    name: str | None = None
    container_port: int
    protocol: Literal["TCP", "UDP", "SCTP"] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TCPSocketAction(Model):
    """Probe by opening a TCP connection to ``port`` (a number or a named port)."""

    port: int | str
    host: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Probe(Model):
    """A readiness/liveness probe; only the TCP handler is modelled."""

    tcp_socket: TCPSocketAction | None = None
    initial_delay_seconds: int | None = None
    period_seconds: int | None = None
    timeout_seconds: int | None = None
    success_threshold: int | None = None
    failure_threshold: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Container(Model):
    """A container of a pod (also used for init containers)."""

    name: str
    image: str | None = None
    image_pull_policy: PullPolicy | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    working_dir: str | None = None
    env: list[EnvVar] | None = None
    env_from: list[EnvFromSource] | None = None
    ports: list[ContainerPort] | None = None
    resources: ResourceRequirements | None = None
    volume_mounts: list[VolumeMount] | None = None
    readiness_probe: Probe | None = None
    security_context: SecurityContext | None = None
    # Only for init containers: "Always" turns one into a native sidecar.
    restart_policy: Literal["Always"] | None = None


# --- pods ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodSpec(Model):
    """A pod specification."""

    init_containers: list[Container] | None = None
    containers: list[Container]
    volumes: list[Volume] | None = None
    restart_policy: RestartPolicy | None = None
    termination_grace_period_seconds: int | None = None
    service_account_name: str | None = None
    automount_service_account_token: bool | None = None
    security_context: PodSecurityContext | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    scheduler_name: str | None = None
    priority_class_name: str | None = None
    node_selector: dict[str, str] | None = None
    affinity: Affinity | None = None
    tolerations: list[Toleration] | None = None
    scheduling_gates: list[PodSchedulingGate] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodTemplateSpec(Model):
    """Pod metadata + spec, as embedded in a Job."""

    metadata: ObjectMeta | None = None
    spec: PodSpec


# --- persistent volume claims -------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PersistentVolumeClaimSpec(Model):
    """What storage a PVC asks for."""

    access_modes: list[AccessMode] | None = None
    resources: VolumeResourceRequirements | None = None
    volume_name: str | None = None
    storage_class_name: str | None = None
    volume_mode: Literal["Filesystem", "Block"] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PersistentVolumeClaimTemplate(Model):
    """A PVC without apiVersion/kind, as embedded in JobSet ``volumeClaimPolicies[].templates``.

    The metadata must not set a namespace there (CEL rule); JobSet names the claim
    ``<metadata.name>-<jobset name>``.
    """

    metadata: ObjectMeta
    spec: PersistentVolumeClaimSpec


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PersistentVolumeClaim(Resource):
    """A standalone PVC (top-level ``v1`` resource)."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "PersistentVolumeClaim"

    metadata: ObjectMeta
    spec: PersistentVolumeClaimSpec
