"""Volume classes of ``trainspec.k8s.core`` (mounts, volume sources, PVCs), for ``models_core``."""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field

__all__ = ["CLAIM_CLASSES", "VOLUME_CLASSES"]

#: Volume mounts, the volume sources trainspec emits and the pod ``Volume`` (in ``CORE`` order).
VOLUME_CLASSES: tuple[Cls, ...] = (
    Cls(
        "VolumeResourceRequirements",
        "PVC size: ``requests: {storage: 100Gi}``.",
        (
            "requests",
            "limits",
        ),
    ),
    Cls(
        "VolumeMount",
        "Mounts a pod volume (by name) into a container.",
        (
            "name",
            "mount_path",
            "read_only",
            "sub_path",
            "sub_path_expr",
        ),
    ),
    Cls(
        "KeyToPath",
        "Projects one Secret/ConfigMap key to a relative file path.",
        (
            "key",
            "path",
            "mode",
        ),
    ),
    Cls(
        "EmptyDirVolumeSource",
        'Scratch space; ``medium="Memory"`` gives a tmpfs (the usual /dev/shm for NCCL loaders).',
        (
            "medium",
            "size_limit",
        ),
    ),
    Cls(
        "PersistentVolumeClaimVolumeSource",
        "Mounts an existing PVC.",
        (
            "claim_name",
            "read_only",
        ),
    ),
    Cls(
        "SecretVolumeSource",
        "Mounts a Secret as files.",
        (
            Field("secret_name", required=True),
            Field("items", ref="KeyToPath"),
            "default_mode",
            "optional",
        ),
    ),
    Cls(
        "ConfigMapVolumeSource",
        "Mounts a ConfigMap as files.",
        (
            Field("name", required=True),
            Field("items", ref="KeyToPath"),
            "default_mode",
            "optional",
        ),
    ),
    Cls(
        "Volume",
        "A pod volume: a name plus exactly one source.",
        (
            "name",
            Field("empty_dir", ref="EmptyDirVolumeSource"),
            Field("persistent_volume_claim", ref="PersistentVolumeClaimVolumeSource"),
            Field("secret", ref="SecretVolumeSource"),
            Field("config_map", ref="ConfigMapVolumeSource"),
        ),
    ),
)

#: PersistentVolumeClaims: the spec, the JobSet-embedded template and the standalone resource.
CLAIM_CLASSES: tuple[Cls, ...] = (
    Cls(
        "PersistentVolumeClaimSpec",
        "What storage a PVC asks for.",
        (
            Field("access_modes", alias="AccessMode"),
            Field("resources", ref="VolumeResourceRequirements"),
            "volume_name",
            "storage_class_name",
            "volume_mode",
        ),
    ),
    Cls(
        "PersistentVolumeClaimTemplate",
        """A PVC without apiVersion/kind, as embedded in JobSet ``volumeClaimPolicies[].templates``.

The metadata must not set a namespace there (CEL rule); JobSet names the claim
``<metadata.name>-<jobset name>``.""",
        (
            Field("metadata", ref="ObjectMeta", required=True),
            Field("spec", ref="PersistentVolumeClaimSpec", required=True),
        ),
    ),
    Cls(
        "PersistentVolumeClaim",
        "A standalone PVC (top-level ``v1`` resource).",
        (
            Field("metadata", ref="ObjectMeta"),
            Field("spec", ref="PersistentVolumeClaimSpec"),
        ),
        resource=('"v1"', "PersistentVolumeClaim"),
    ),
)
