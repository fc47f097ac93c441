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

#: submodule -> the public names it defines (each submodule's ``__all__``).
_MODULES: dict[str, tuple[str, ...]] = {
    "serialize": (
        "SerializationError",
        "to_dict",
        "wire_name",
    ),
    "base": (
        "Model",
        "Resource",
    ),
    "meta": (
        "ObjectMeta",
        "OwnerReference",
    ),
    "core": (
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
    ),
    "batch": (
        "JobSpec",
        "JobTemplateSpec",
        "PodFailurePolicy",
        "PodFailurePolicyOnExitCodesRequirement",
        "PodFailurePolicyOnPodConditionsPattern",
        "PodFailurePolicyRule",
    ),
    "jobset": (
        "Coordinator",
        "DependsOn",
        "FailurePolicy",
        "FailurePolicyRule",
        "JobSetSpec",
        "Network",
        "ReplicatedJob",
        "StartupPolicy",
        "SuccessPolicy",
        "VolumeClaimPolicy",
        "VolumeRetentionPolicy",
    ),
    "trainer": (
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
    ),
}

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
    from trainspec.k8s.base import (
        Model as Model,
    )
    from trainspec.k8s.base import (
        Resource as Resource,
    )
    from trainspec.k8s.batch import (
        JobSpec as JobSpec,
    )
    from trainspec.k8s.batch import (
        JobTemplateSpec as JobTemplateSpec,
    )
    from trainspec.k8s.batch import (
        PodFailurePolicy as PodFailurePolicy,
    )
    from trainspec.k8s.batch import (
        PodFailurePolicyOnExitCodesRequirement as PodFailurePolicyOnExitCodesRequirement,
    )
    from trainspec.k8s.batch import (
        PodFailurePolicyOnPodConditionsPattern as PodFailurePolicyOnPodConditionsPattern,
    )
    from trainspec.k8s.batch import (
        PodFailurePolicyRule as PodFailurePolicyRule,
    )
    from trainspec.k8s.core import (
        AccessMode as AccessMode,
    )
    from trainspec.k8s.core import (
        Affinity as Affinity,
    )
    from trainspec.k8s.core import (
        Capabilities as Capabilities,
    )
    from trainspec.k8s.core import (
        ConfigMapEnvSource as ConfigMapEnvSource,
    )
    from trainspec.k8s.core import (
        ConfigMapKeySelector as ConfigMapKeySelector,
    )
    from trainspec.k8s.core import (
        ConfigMapVolumeSource as ConfigMapVolumeSource,
    )
    from trainspec.k8s.core import (
        Container as Container,
    )
    from trainspec.k8s.core import (
        ContainerPort as ContainerPort,
    )
    from trainspec.k8s.core import (
        EmptyDirVolumeSource as EmptyDirVolumeSource,
    )
    from trainspec.k8s.core import (
        EnvFromSource as EnvFromSource,
    )
    from trainspec.k8s.core import (
        EnvVar as EnvVar,
    )
    from trainspec.k8s.core import (
        EnvVarSource as EnvVarSource,
    )
    from trainspec.k8s.core import (
        KeyToPath as KeyToPath,
    )
    from trainspec.k8s.core import (
        LocalObjectReference as LocalObjectReference,
    )
    from trainspec.k8s.core import (
        NodeAffinity as NodeAffinity,
    )
    from trainspec.k8s.core import (
        NodeSelector as NodeSelector,
    )
    from trainspec.k8s.core import (
        NodeSelectorRequirement as NodeSelectorRequirement,
    )
    from trainspec.k8s.core import (
        NodeSelectorTerm as NodeSelectorTerm,
    )
    from trainspec.k8s.core import (
        ObjectFieldSelector as ObjectFieldSelector,
    )
    from trainspec.k8s.core import (
        PersistentVolumeClaim as PersistentVolumeClaim,
    )
    from trainspec.k8s.core import (
        PersistentVolumeClaimSpec as PersistentVolumeClaimSpec,
    )
    from trainspec.k8s.core import (
        PersistentVolumeClaimTemplate as PersistentVolumeClaimTemplate,
    )
    from trainspec.k8s.core import (
        PersistentVolumeClaimVolumeSource as PersistentVolumeClaimVolumeSource,
    )
    from trainspec.k8s.core import (
        PodSchedulingGate as PodSchedulingGate,
    )
    from trainspec.k8s.core import (
        PodSecurityContext as PodSecurityContext,
    )
    from trainspec.k8s.core import (
        PodSpec as PodSpec,
    )
    from trainspec.k8s.core import (
        PodTemplateSpec as PodTemplateSpec,
    )
    from trainspec.k8s.core import (
        PreferredSchedulingTerm as PreferredSchedulingTerm,
    )
    from trainspec.k8s.core import (
        Probe as Probe,
    )
    from trainspec.k8s.core import (
        Quantity as Quantity,
    )
    from trainspec.k8s.core import (
        ResourceFieldSelector as ResourceFieldSelector,
    )
    from trainspec.k8s.core import (
        ResourceRequirements as ResourceRequirements,
    )
    from trainspec.k8s.core import (
        SeccompProfile as SeccompProfile,
    )
    from trainspec.k8s.core import (
        SecretEnvSource as SecretEnvSource,
    )
    from trainspec.k8s.core import (
        SecretKeySelector as SecretKeySelector,
    )
    from trainspec.k8s.core import (
        SecretVolumeSource as SecretVolumeSource,
    )
    from trainspec.k8s.core import (
        SecurityContext as SecurityContext,
    )
    from trainspec.k8s.core import (
        TCPSocketAction as TCPSocketAction,
    )
    from trainspec.k8s.core import (
        Toleration as Toleration,
    )
    from trainspec.k8s.core import (
        Volume as Volume,
    )
    from trainspec.k8s.core import (
        VolumeMount as VolumeMount,
    )
    from trainspec.k8s.core import (
        VolumeResourceRequirements as VolumeResourceRequirements,
    )
    from trainspec.k8s.jobset import (
        Coordinator as Coordinator,
    )
    from trainspec.k8s.jobset import (
        DependsOn as DependsOn,
    )
    from trainspec.k8s.jobset import (
        FailurePolicy as FailurePolicy,
    )
    from trainspec.k8s.jobset import (
        FailurePolicyRule as FailurePolicyRule,
    )
    from trainspec.k8s.jobset import (
        JobSetSpec as JobSetSpec,
    )
    from trainspec.k8s.jobset import (
        Network as Network,
    )
    from trainspec.k8s.jobset import (
        ReplicatedJob as ReplicatedJob,
    )
    from trainspec.k8s.jobset import (
        StartupPolicy as StartupPolicy,
    )
    from trainspec.k8s.jobset import (
        SuccessPolicy as SuccessPolicy,
    )
    from trainspec.k8s.jobset import (
        VolumeClaimPolicy as VolumeClaimPolicy,
    )
    from trainspec.k8s.jobset import (
        VolumeRetentionPolicy as VolumeRetentionPolicy,
    )
    from trainspec.k8s.meta import (
        ObjectMeta as ObjectMeta,
    )
    from trainspec.k8s.meta import (
        OwnerReference as OwnerReference,
    )
    from trainspec.k8s.serialize import (
        SerializationError as SerializationError,
    )
    from trainspec.k8s.serialize import (
        to_dict as to_dict,
    )
    from trainspec.k8s.serialize import (
        wire_name as wire_name,
    )
    from trainspec.k8s.trainer import (
        TRAINER_API_VERSION as TRAINER_API_VERSION,
    )
    from trainspec.k8s.trainer import (
        ClusterTrainingRuntime as ClusterTrainingRuntime,
    )
    from trainspec.k8s.trainer import (
        ContainerPatch as ContainerPatch,
    )
    from trainspec.k8s.trainer import (
        CoschedulingPodGroupPolicySource as CoschedulingPodGroupPolicySource,
    )
    from trainspec.k8s.trainer import (
        DatasetInitializer as DatasetInitializer,
    )
    from trainspec.k8s.trainer import (
        EnvInjectionTarget as EnvInjectionTarget,
    )
    from trainspec.k8s.trainer import (
        FluxMLPolicySource as FluxMLPolicySource,
    )
    from trainspec.k8s.trainer import (
        Initializer as Initializer,
    )
    from trainspec.k8s.trainer import (
        JAXMLPolicySource as JAXMLPolicySource,
    )
    from trainspec.k8s.trainer import (
        JobSetSpecPatch as JobSetSpecPatch,
    )
    from trainspec.k8s.trainer import (
        JobSetTemplatePatch as JobSetTemplatePatch,
    )
    from trainspec.k8s.trainer import (
        JobSetTemplateSpec as JobSetTemplateSpec,
    )
    from trainspec.k8s.trainer import (
        JobSpecPatch as JobSpecPatch,
    )
    from trainspec.k8s.trainer import (
        JobTemplatePatch as JobTemplatePatch,
    )
    from trainspec.k8s.trainer import (
        MetadataPatch as MetadataPatch,
    )
    from trainspec.k8s.trainer import (
        MLPolicy as MLPolicy,
    )
    from trainspec.k8s.trainer import (
        ModelInitializer as ModelInitializer,
    )
    from trainspec.k8s.trainer import (
        MPIMLPolicySource as MPIMLPolicySource,
    )
    from trainspec.k8s.trainer import (
        PodGroupPolicy as PodGroupPolicy,
    )
    from trainspec.k8s.trainer import (
        PodSpecPatch as PodSpecPatch,
    )
    from trainspec.k8s.trainer import (
        PodTemplatePatch as PodTemplatePatch,
    )
    from trainspec.k8s.trainer import (
        ReplicatedJobPatch as ReplicatedJobPatch,
    )
    from trainspec.k8s.trainer import (
        RuntimePatch as RuntimePatch,
    )
    from trainspec.k8s.trainer import (
        RuntimeRef as RuntimeRef,
    )
    from trainspec.k8s.trainer import (
        TorchEnvInjection as TorchEnvInjection,
    )
    from trainspec.k8s.trainer import (
        TorchMLPolicySource as TorchMLPolicySource,
    )
    from trainspec.k8s.trainer import (
        Trainer as Trainer,
    )
    from trainspec.k8s.trainer import (
        TrainingRuntime as TrainingRuntime,
    )
    from trainspec.k8s.trainer import (
        TrainingRuntimeSpec as TrainingRuntimeSpec,
    )
    from trainspec.k8s.trainer import (
        TrainingRuntimeSpecPatch as TrainingRuntimeSpecPatch,
    )
    from trainspec.k8s.trainer import (
        TrainJob as TrainJob,
    )
    from trainspec.k8s.trainer import (
        TrainJobSpec as TrainJobSpec,
    )
    from trainspec.k8s.trainer import (
        VolcanoNetworkTopology as VolcanoNetworkTopology,
    )
    from trainspec.k8s.trainer import (
        VolcanoPodGroupPolicySource as VolcanoPodGroupPolicySource,
    )
    from trainspec.k8s.trainer import (
        XGBoostMLPolicySource as XGBoostMLPolicySource,
    )
