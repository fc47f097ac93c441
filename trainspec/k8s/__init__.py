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
        "SerializationError", "to_dict", "wire_name",
    ),
    "base": (
        "Model", "Resource",
    ),
    "meta": (
        "ObjectMeta", "OwnerReference",
    ),
    "core": (
        "AccessMode", "Affinity", "Capabilities", "ConfigMapEnvSource", "ConfigMapKeySelector",
        "ConfigMapVolumeSource", "Container", "ContainerPort", "EmptyDirVolumeSource",
        "EnvFromSource", "EnvVar", "EnvVarSource", "KeyToPath", "LocalObjectReference",
        "NodeAffinity", "NodeSelector", "NodeSelectorRequirement", "NodeSelectorTerm",
        "ObjectFieldSelector", "PersistentVolumeClaim", "PersistentVolumeClaimSpec",
        "PersistentVolumeClaimTemplate", "PersistentVolumeClaimVolumeSource", "PodSchedulingGate",
        "PodSecurityContext", "PodSpec", "PodTemplateSpec", "PreferredSchedulingTerm", "Probe",
        "Quantity", "ResourceFieldSelector", "ResourceRequirements", "SeccompProfile",
        "SecretEnvSource", "SecretKeySelector", "SecretVolumeSource", "SecurityContext",
        "TCPSocketAction", "Toleration", "Volume", "VolumeMount", "VolumeResourceRequirements",
    ),
    "batch": (
        "JobSpec", "JobTemplateSpec", "PodFailurePolicy", "PodFailurePolicyOnExitCodesRequirement",
        "PodFailurePolicyOnPodConditionsPattern", "PodFailurePolicyRule",
    ),
    "jobset": (
        "Coordinator", "DependsOn", "FailurePolicy", "FailurePolicyRule", "JobSetSpec", "Network",
        "ReplicatedJob", "StartupPolicy", "SuccessPolicy", "VolumeClaimPolicy",
        "VolumeRetentionPolicy",
    ),
    "trainer": (
        "TRAINER_API_VERSION", "ClusterTrainingRuntime", "ContainerPatch",
        "CoschedulingPodGroupPolicySource", "DatasetInitializer", "EnvInjectionTarget",
        "FluxMLPolicySource", "Initializer", "JAXMLPolicySource", "JobSetSpecPatch",
        "JobSetTemplatePatch", "JobSetTemplateSpec", "JobSpecPatch", "JobTemplatePatch",
        "MLPolicy", "MPIMLPolicySource", "MetadataPatch", "ModelInitializer", "PodGroupPolicy",
        "PodSpecPatch", "PodTemplatePatch", "ReplicatedJobPatch", "RuntimePatch", "RuntimeRef",
        "TorchEnvInjection", "TorchMLPolicySource", "TrainJob", "TrainJobSpec", "Trainer",
        "TrainingRuntime", "TrainingRuntimeSpec", "TrainingRuntimeSpecPatch",
        "VolcanoNetworkTopology", "VolcanoPodGroupPolicySource", "XGBoostMLPolicySource",
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
    from trainspec.k8s.serialize import (
        SerializationError,
        to_dict,
        wire_name,
    )
    from trainspec.k8s.base import (
        Model,
        Resource,
    )
    from trainspec.k8s.meta import (
        ObjectMeta,
        OwnerReference,
    )
    from trainspec.k8s.core import (
        AccessMode,
        Affinity,
        Capabilities,
        ConfigMapEnvSource,
        ConfigMapKeySelector,
        ConfigMapVolumeSource,
        Container,
        ContainerPort,
        EmptyDirVolumeSource,
        EnvFromSource,
        EnvVar,
        EnvVarSource,
        KeyToPath,
        LocalObjectReference,
        NodeAffinity,
        NodeSelector,
        NodeSelectorRequirement,
        NodeSelectorTerm,
        ObjectFieldSelector,
        PersistentVolumeClaim,
        PersistentVolumeClaimSpec,
        PersistentVolumeClaimTemplate,
        PersistentVolumeClaimVolumeSource,
        PodSchedulingGate,
        PodSecurityContext,
        PodSpec,
        PodTemplateSpec,
        PreferredSchedulingTerm,
        Probe,
        Quantity,
        ResourceFieldSelector,
        ResourceRequirements,
        SeccompProfile,
        SecretEnvSource,
        SecretKeySelector,
        SecretVolumeSource,
        SecurityContext,
        TCPSocketAction,
        Toleration,
        Volume,
        VolumeMount,
        VolumeResourceRequirements,
    )
    from trainspec.k8s.batch import (
        JobSpec,
        JobTemplateSpec,
        PodFailurePolicy,
        PodFailurePolicyOnExitCodesRequirement,
        PodFailurePolicyOnPodConditionsPattern,
        PodFailurePolicyRule,
    )
    from trainspec.k8s.jobset import (
        Coordinator,
        DependsOn,
        FailurePolicy,
        FailurePolicyRule,
        JobSetSpec,
        Network,
        ReplicatedJob,
        StartupPolicy,
        SuccessPolicy,
        VolumeClaimPolicy,
        VolumeRetentionPolicy,
    )
    from trainspec.k8s.trainer import (
        TRAINER_API_VERSION,
        ClusterTrainingRuntime,
        ContainerPatch,
        CoschedulingPodGroupPolicySource,
        DatasetInitializer,
        EnvInjectionTarget,
        FluxMLPolicySource,
        Initializer,
        JAXMLPolicySource,
        JobSetSpecPatch,
        JobSetTemplatePatch,
        JobSetTemplateSpec,
        JobSpecPatch,
        JobTemplatePatch,
        MetadataPatch,
        MLPolicy,
        ModelInitializer,
        MPIMLPolicySource,
        PodGroupPolicy,
        PodSpecPatch,
        PodTemplatePatch,
        ReplicatedJobPatch,
        RuntimePatch,
        RuntimeRef,
        TorchEnvInjection,
        TorchMLPolicySource,
        Trainer,
        TrainingRuntime,
        TrainingRuntimeSpec,
        TrainingRuntimeSpecPatch,
        TrainJob,
        TrainJobSpec,
        VolcanoNetworkTopology,
        VolcanoPodGroupPolicySource,
        XGBoostMLPolicySource,
    )
