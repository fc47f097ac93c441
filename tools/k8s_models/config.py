"""What the model generator (:mod:`tools.k8s_models.generator`) generates, and from which schemas."""

from __future__ import annotations

from tools.k8s_models.models_batch import BATCH
from tools.k8s_models.models_core import CORE
from tools.k8s_models.models_jobset import JOBSET
from tools.k8s_models.models_kubeflow_v1 import KUBEFLOW_V1
from tools.k8s_models.models_legacy import LEGACY
from tools.k8s_models.models_meta import META
from tools.k8s_models.models_mpi import MPI
from tools.k8s_models.models_ray import RAY
from tools.k8s_models.models_trainer import TRAINER
from tools.k8s_models.vocabulary import Module

__all__ = ["API_ENUMS", "CORE_ENUMS", "CORE_MODULES", "CORE_ORIGINS", "CRD_FILES", "MODULES", "STATIC_EXPORTS"]

#: Source name -> CRD file under ``--crds``; the storage version is read.
CRD_FILES: dict[str, str] = {
    "jobset": "jobset/jobset.x-k8s.io_jobsets.yaml",
    "trainjob": "trainer/trainer.kubeflow.org_trainjobs.yaml",
    "trainingruntime": "trainer/trainer.kubeflow.org_trainingruntimes.yaml",
    "clustertrainingruntime": "trainer/trainer.kubeflow.org_clustertrainingruntimes.yaml",
    "rayjob": "kuberay/ray.io_rayjobs.yaml",
    "pytorchjob": "training-operator/kubeflow.org_pytorchjobs.yaml",
    "jaxjob": "training-operator/kubeflow.org_jaxjobs.yaml",
    "mpijob": "mpi-operator/kubeflow.org_mpijobs.yaml",
}

#: In generation order (a module is written after those it imports, for readability only).
MODULES: tuple[Module, ...] = (META, CORE, BATCH, JOBSET, TRAINER, LEGACY, RAY, KUBEFLOW_V1, MPI)

#: Modules whose classes read ``core.json`` (committed) instead of a CRD.
CORE_MODULES = frozenset({"core"})

_POD_TEMPLATE = "jobset:spec.replicatedJobs[].template.spec.template"
_PVC_TEMPLATE = "jobset:spec.volumeClaimPolicies[].templates[]"

#: Where ``--derive-core`` finds the roots of the core classes (the rest follow their fields):
#: the pod and PVC templates embedded in the JobSet CRD carry the full core schemas.
CORE_ORIGINS: dict[str, str] = {
    "PodTemplateSpec": _POD_TEMPLATE,
    "PersistentVolumeClaimTemplate": _PVC_TEMPLATE,
    "PersistentVolumeClaim": _PVC_TEMPLATE,
}

#: Enums of the Kubernetes API that the embedded core schemas leave out (Go string types with
#: documented values): added to ``core.json`` so the models keep their ``Literal`` types.
CORE_ENUMS: dict[str, tuple[str, ...]] = {
    "Container.imagePullPolicy": ("Always", "IfNotPresent", "Never"),
    # Only for init containers: "Always" turns one into a native sidecar.
    "Container.restartPolicy": ("Always",),
    "PodSpec.restartPolicy": ("Always", "OnFailure", "Never"),
    "ContainerPort.protocol": ("TCP", "UDP", "SCTP"),
    "SeccompProfile.type": ("RuntimeDefault", "Localhost", "Unconfined"),
    "PodSecurityContext.fsGroupChangePolicy": ("OnRootMismatch", "Always"),
    "Toleration.operator": ("Exists", "Equal"),
    "Toleration.effect": ("NoSchedule", "PreferNoSchedule", "NoExecute"),
    "NodeSelectorRequirement.operator": ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"),
    "PersistentVolumeClaimSpec.accessModes": ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"),
    "PersistentVolumeClaimSpec.volumeMode": ("Filesystem", "Block"),
}

#: Enums the operators document (and enforce in code) but their CRDs leave out: ``Class.wire``.
API_ENUMS: dict[str, tuple[str, ...]] = {
    "JobSpec.completionMode": ("NonIndexed", "Indexed"),
    "JobSpec.podReplacementPolicy": ("TerminatingOrFailed", "Failed"),
    "PodFailurePolicyOnExitCodesRequirement.operator": ("In", "NotIn"),
    "PodFailurePolicyOnPodConditionsPattern.status": ("True", "False", "Unknown"),
    "PodFailurePolicyRule.action": ("FailJob", "FailIndex", "Ignore", "Count"),
    "RuntimeRef.kind": ("ClusterTrainingRuntime", "TrainingRuntime"),
    "RunPolicy.cleanPodPolicy": ("None", "Running", "All"),
    "ReplicaSpec.restartPolicy": ("Always", "OnFailure", "Never", "ExitCode"),
    "MPIJobSpec.launcherCreationPolicy": ("AtStartup", "WaitForWorkersReady"),
}

#: Hand-written submodules that ``trainspec.k8s`` re-exports too (first in its table).
STATIC_EXPORTS: dict[str, tuple[str, ...]] = {
    "serialize": ("SerializationError", "to_dict", "wire_name"),
    "base": ("Model", "Resource"),
}
