"""Typed Kubernetes resource models that the compiler builds, and their one serialiser.

Models are frozen, slotted, keyword-only standard-library dataclasses (no pydantic: start-up
time matters and the compiler constructs them itself). Fields are snake_case; ``to_dict``
emits camelCase wire names, omits ``None`` and keeps explicit empties (``[]``, ``{}``, a
no-field struct such as ``TorchMLPolicySource()``).

Names are re-exported lazily: ``import trainspec.k8s`` costs almost nothing, and a submodule
is loaded on first use of one of its names. Defining the ~90 dataclasses is the expensive
part (CPython 3.11 compiles each generated method separately), so commands that never
compile never pay for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# submodule -> the public names it defines (each submodule's ``__all__``): generated with the
# models by ``python -m trainspec.k8s.generate`` (a tiny module of string tuples, cheap to import).
from trainspec.k8s._exports import MODULES as _MODULES

_EXPORTS: dict[str, str] = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover
    # ``X as X`` marks an explicit re-export for type checkers.
    from trainspec.k8s.base import (  # noqa: F401
        Model as Model, Resource as Resource,
    )
    from trainspec.k8s.batch import (  # noqa: F401
        JobSpec as JobSpec, JobTemplateSpec as JobTemplateSpec, PodFailurePolicy as PodFailurePolicy,
        PodFailurePolicyOnExitCodesRequirement as PodFailurePolicyOnExitCodesRequirement,
        PodFailurePolicyOnPodConditionsPattern as PodFailurePolicyOnPodConditionsPattern,
        PodFailurePolicyRule as PodFailurePolicyRule,
    )
    from trainspec.k8s.core import (  # noqa: F401
        AccessMode as AccessMode, Affinity as Affinity, Capabilities as Capabilities,
        ConfigMapEnvSource as ConfigMapEnvSource, ConfigMapKeySelector as ConfigMapKeySelector,
        ConfigMapVolumeSource as ConfigMapVolumeSource, Container as Container,
        ContainerPort as ContainerPort, EmptyDirVolumeSource as EmptyDirVolumeSource,
        EnvFromSource as EnvFromSource, EnvVar as EnvVar, EnvVarSource as EnvVarSource,
        KeyToPath as KeyToPath, LocalObjectReference as LocalObjectReference, NodeAffinity as NodeAffinity,
        NodeSelector as NodeSelector, NodeSelectorRequirement as NodeSelectorRequirement,
        NodeSelectorTerm as NodeSelectorTerm, ObjectFieldSelector as ObjectFieldSelector,
        PersistentVolumeClaim as PersistentVolumeClaim,
        PersistentVolumeClaimSpec as PersistentVolumeClaimSpec,
        PersistentVolumeClaimTemplate as PersistentVolumeClaimTemplate,
        PersistentVolumeClaimVolumeSource as PersistentVolumeClaimVolumeSource,
        PodSchedulingGate as PodSchedulingGate, PodSecurityContext as PodSecurityContext, PodSpec as PodSpec,
        PodTemplateSpec as PodTemplateSpec, PreferredSchedulingTerm as PreferredSchedulingTerm,
        Probe as Probe, Quantity as Quantity, ResourceFieldSelector as ResourceFieldSelector,
        ResourceRequirements as ResourceRequirements, SeccompProfile as SeccompProfile,
        SecretEnvSource as SecretEnvSource, SecretKeySelector as SecretKeySelector,
        SecretVolumeSource as SecretVolumeSource, SecurityContext as SecurityContext,
        TCPSocketAction as TCPSocketAction, Toleration as Toleration, Volume as Volume,
        VolumeMount as VolumeMount, VolumeResourceRequirements as VolumeResourceRequirements,
    )
    from trainspec.k8s.jobset import (  # noqa: F401
        Coordinator as Coordinator, DependsOn as DependsOn, FailurePolicy as FailurePolicy,
        FailurePolicyRule as FailurePolicyRule, JobSetSpec as JobSetSpec, Network as Network,
        ReplicatedJob as ReplicatedJob, StartupPolicy as StartupPolicy, SuccessPolicy as SuccessPolicy,
        VolumeClaimPolicy as VolumeClaimPolicy, VolumeRetentionPolicy as VolumeRetentionPolicy,
    )
    from trainspec.k8s.meta import (  # noqa: F401
        ObjectMeta as ObjectMeta, OwnerReference as OwnerReference,
    )
    from trainspec.k8s.ray import (  # noqa: F401
        RAY_API_VERSION as RAY_API_VERSION, HeadGroupSpec as HeadGroupSpec,
        RayClusterSpec as RayClusterSpec, RayJob as RayJob,
        RayJobSpec as RayJobSpec, WorkerGroupSpec as WorkerGroupSpec,
    )
    from trainspec.k8s.serialize import (  # noqa: F401
        SerializationError as SerializationError, to_dict as to_dict, wire_name as wire_name,
    )
    from trainspec.k8s.trainer import (  # noqa: F401
        ClusterTrainingRuntime as ClusterTrainingRuntime, ContainerPatch as ContainerPatch,
        CoschedulingPodGroupPolicySource as CoschedulingPodGroupPolicySource,
        DatasetInitializer as DatasetInitializer, EnvInjectionTarget as EnvInjectionTarget,
        FluxMLPolicySource as FluxMLPolicySource, Initializer as Initializer,
        JAXMLPolicySource as JAXMLPolicySource, JobSetSpecPatch as JobSetSpecPatch,
        JobSetTemplatePatch as JobSetTemplatePatch, JobSetTemplateSpec as JobSetTemplateSpec,
        JobSpecPatch as JobSpecPatch, JobTemplatePatch as JobTemplatePatch, MLPolicy as MLPolicy,
        MPIMLPolicySource as MPIMLPolicySource, MetadataPatch as MetadataPatch,
        ModelInitializer as ModelInitializer, PodGroupPolicy as PodGroupPolicy, PodSpecPatch as PodSpecPatch,
        PodTemplatePatch as PodTemplatePatch, ReplicatedJobPatch as ReplicatedJobPatch,
        RuntimePatch as RuntimePatch, RuntimeRef as RuntimeRef, TRAINER_API_VERSION as TRAINER_API_VERSION,
        TorchEnvInjection as TorchEnvInjection, TorchMLPolicySource as TorchMLPolicySource,
        TrainJob as TrainJob, TrainJobSpec as TrainJobSpec, Trainer as Trainer,
        TrainingRuntime as TrainingRuntime, TrainingRuntimeSpec as TrainingRuntimeSpec,
        TrainingRuntimeSpecPatch as TrainingRuntimeSpecPatch,
        VolcanoNetworkTopology as VolcanoNetworkTopology,
        VolcanoPodGroupPolicySource as VolcanoPodGroupPolicySource,
        XGBoostMLPolicySource as XGBoostMLPolicySource,
    )
