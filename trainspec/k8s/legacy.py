"""The Kubeflow Trainer v2.1 TrainJob, for clusters not yet on 2.2 (see ``compiler.targets``).

What differs from the v2.2+ TrainJob in :mod:`trainspec.k8s.trainer`:

* ``spec.podTemplateOverrides`` (each entry aimed at replicatedJobs by ``targetJobs``) instead
  of ``spec.runtimePatches``;
* ``spec.labels`` / ``spec.annotations``, applied to the derived JobSet and its Jobs;
* no ``spec.activeDeadlineSeconds``;
* ``spec.trainer.numProcPerNode`` is an IntOrString (``auto``, ``cpu``, ``gpu`` or a number).

Not part of the lazily re-exported ``trainspec.k8s`` names: import this module directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from trainspec.k8s.base import Model, Resource
from trainspec.k8s.core import (
    Affinity,
    EnvVar,
    LocalObjectReference,
    PodSchedulingGate,
    ResourceRequirements,
    Toleration,
    Volume,
    VolumeMount,
)
from trainspec.k8s.meta import ObjectMeta
from trainspec.k8s.trainer import TRAINER_API_VERSION, Initializer, MetadataPatch, RuntimeRef

__all__ = [
    "ContainerOverride",
    "PodTemplateOverride",
    "PodTemplateOverrideSpec",
    "PodTemplateOverrideTargetJob",
    "TrainJobSpecV21",
    "TrainJobV21",
    "TrainerV21",
]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodTemplateOverrideTargetJob(Model):
    """A replicatedJob of the runtime that an override applies to (by name)."""

    name: str


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ContainerOverride(Model):
    """Additions to an existing container of the targeted jobs: env and volume mounts."""

    name: str
    env: list[EnvVar] | None = None
    volume_mounts: list[VolumeMount] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodTemplateOverrideSpec(Model):
    """The pod-spec fields a v2.1 override may set."""

    service_account_name: str | None = None
    node_selector: dict[str, str] | None = None
    affinity: Affinity | None = None
    tolerations: list[Toleration] | None = None
    volumes: list[Volume] | None = None
    init_containers: list[ContainerOverride] | None = None
    containers: list[ContainerOverride] | None = None
    scheduling_gates: list[PodSchedulingGate] | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodTemplateOverride(Model):
    """Pod metadata and spec overrides for the replicatedJobs named in ``target_jobs``."""

    target_jobs: list[PodTemplateOverrideTargetJob]
    metadata: MetadataPatch | None = None
    spec: PodTemplateOverrideSpec | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TrainerV21(Model):
    """``spec.trainer`` of v2.1: as in v2.2+, but numProcPerNode may also be auto/cpu/gpu."""

    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    num_nodes: int | None = None
    resources_per_node: ResourceRequirements | None = None
    num_proc_per_node: int | str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TrainJobSpecV21(Model):
    """A v2.1 TrainJob specification (no runtimePatches, no activeDeadlineSeconds)."""

    runtime_ref: RuntimeRef
    initializer: Initializer | None = None
    trainer: TrainerV21 | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    pod_template_overrides: list[PodTemplateOverride] | None = None
    suspend: bool | None = None
    managed_by: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TrainJobV21(Resource):
    """A TrainJob as Kubeflow Trainer v2.1 (and Kueue 0.15-0.16) understand it."""

    api_version: ClassVar[str] = TRAINER_API_VERSION
    kind: ClassVar[str] = "TrainJob"

    metadata: ObjectMeta
    spec: TrainJobSpecV21
