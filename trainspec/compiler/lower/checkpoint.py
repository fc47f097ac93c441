"""Checkpoint storage: the standalone PVC, its mount in trainer pods, and the env contract.

The PVC is not owned by the TrainJob, so it survives the job's deletion, and it keeps the job's
name (not the run's), so a new run of the job resumes from the last checkpoint.
"""

from __future__ import annotations

from trainspec.compiler.lower import env as envs, labels as L
from trainspec.compiler.plan import CheckpointKind, CheckpointPlan
from trainspec.k8s import (
    ObjectMeta,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource,
    Volume,
    VolumeMount,
    VolumeResourceRequirements,
)
from trainspec.k8s.wellknown import (
    CHECKPOINT_VOLUME as VOLUME,
    FLUX_PRUNE_ANNOTATION,
    SYNC_OPTIONS_ANNOTATION,
)

#: A checkpoint claim outlives every edit of the GitOps tree: Argo CD neither prunes it nor deletes
#: it with the application, Flux never garbage-collects it. Both are written whatever the
#: controller, so a repo can move from one to the other (checkpoint.protect: false opts out).
KEEP_ANNOTATIONS = ((SYNC_OPTIONS_ANNOTATION, "Prune=false,Delete=false"), (FLUX_PRUNE_ANNOTATION, "disabled"))


def claim(plan: CheckpointPlan, job_name: str, namespace: str) -> PersistentVolumeClaim | None:
    if plan.kind is not CheckpointKind.VOLUME:
        return None
    assert plan.access_mode is not None and plan.size is not None, "a new volume's plan has both (plan._checkpoint)"
    return PersistentVolumeClaim(
        metadata=ObjectMeta(
            name=plan.claim_name,
            namespace=namespace,
            labels={L.MANAGED_BY: L.MANAGER, L.JOB_LABEL: job_name},
            annotations=dict(KEEP_ANNOTATIONS) if plan.protect else None,
        ),
        spec=PersistentVolumeClaimSpec(
            access_modes=[plan.access_mode.value],
            storage_class_name=plan.storage_class,
            resources=VolumeResourceRequirements(requests={"storage": plan.size.to_k8s()}),
        ),
    )


def volume(plan: CheckpointPlan) -> Volume | None:
    if plan.kind is CheckpointKind.URI:
        return None
    assert plan.claim_name is not None, "a claim's or a new volume's plan names the claim (plan._checkpoint)"
    return Volume(name=VOLUME, persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=plan.claim_name))


def mount(plan: CheckpointPlan) -> VolumeMount | None:
    if plan.kind is CheckpointKind.URI:
        return None
    return VolumeMount(name=VOLUME, mount_path=plan.path)


def env(plan: CheckpointPlan) -> dict[str, str]:
    return {envs.CHECKPOINT_DIR: plan.path, envs.CHECKPOINT_KEEP: str(plan.keep)}
