"""Generator configuration of ``trainspec.k8s.legacy``: the Kubeflow Trainer v2.1 TrainJob."""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["LEGACY"]

LEGACY = Module(
    name="legacy",
    doc="""The Kubeflow Trainer v2.1 TrainJob, for clusters not yet on 2.2 (see ``compiler.targets``).

What differs from the v2.2+ TrainJob in :mod:`trainspec.k8s.trainer`:

* ``spec.podTemplateOverrides`` (each entry aimed at replicatedJobs by ``targetJobs``) instead
  of ``spec.runtimePatches``;
* ``spec.labels`` / ``spec.annotations``, applied to the derived JobSet and its Jobs;
* no ``spec.activeDeadlineSeconds``;
* ``spec.trainer.numProcPerNode`` is an IntOrString (``auto``, ``cpu``, ``gpu`` or a number).

Not part of the lazily re-exported ``trainspec.k8s`` names: import this module directly.""",
    classes=(
        Cls(
            "PodTemplateOverrideTargetJob",
            "A replicatedJob of the runtime that an override applies to (by name).",
            ("name",),
            path="manual:PodTemplateOverrideTargetJob",
        ),
        Cls(
            "ContainerOverride",
            "Additions to an existing container of the targeted jobs: env and volume mounts.",
            (
                "name",
                Field("env", ref="EnvVar"),
                Field("volume_mounts", ref="VolumeMount"),
            ),
            path="manual:ContainerOverride",
        ),
        Cls(
            "PodTemplateOverrideSpec",
            "The pod-spec fields a v2.1 override may set.",
            (
                "service_account_name",
                "node_selector",
                Field("affinity", ref="Affinity"),
                Field("tolerations", ref="Toleration"),
                Field("volumes", ref="Volume"),
                Field("init_containers", ref="ContainerOverride"),
                Field("containers", ref="ContainerOverride"),
                Field("scheduling_gates", ref="PodSchedulingGate"),
                Field("image_pull_secrets", ref="LocalObjectReference"),
            ),
            path="manual:PodTemplateOverrideSpec",
        ),
        Cls(
            "PodTemplateOverride",
            "Pod metadata and spec overrides for the replicatedJobs named in ``target_jobs``.",
            (
                Field("target_jobs", ref="PodTemplateOverrideTargetJob"),
                Field("metadata", ref="MetadataPatch"),
                Field("spec", ref="PodTemplateOverrideSpec"),
            ),
            path="manual:PodTemplateOverride",
        ),
        Cls(
            "TrainerV21",
            "``spec.trainer`` of v2.1: as in v2.2+, but numProcPerNode may also be auto/cpu/gpu.",
            (
                "image",
                "command",
                "args",
                Field("env", ref="EnvVar"),
                "num_nodes",
                Field("resources_per_node", ref="ResourceRequirements"),
                Field("num_proc_per_node", type="int | str"),
            ),
            path="trainjob:spec.trainer",
        ),
        Cls(
            "TrainJobSpecV21",
            "A v2.1 TrainJob specification (no runtimePatches, no activeDeadlineSeconds).",
            (
                Field("runtime_ref", ref="RuntimeRef"),
                Field("initializer", ref="Initializer"),
                Field("trainer", ref="TrainerV21"),
                "labels",
                "annotations",
                Field("pod_template_overrides", ref="PodTemplateOverride"),
                "suspend",
                "managed_by",
            ),
            path="manual:TrainJobSpecV21",
        ),
        Cls(
            "TrainJobV21",
            "A TrainJob as Kubeflow Trainer v2.1 (and Kueue 0.15-0.16) understand it.",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="TrainJobSpecV21"),
            ),
            resource=("TRAINER_API_VERSION", "TrainJob"),
            path="manual:TrainJobV21",
        ),
    ),
    lazy=False,
)
