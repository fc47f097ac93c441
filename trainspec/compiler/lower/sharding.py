"""The data-sharding stage as seen from a TrainJob: initializer settings and trainer env.

The stage's pod itself lives in the ``-sharded`` runtime variant (see ``lower.runtime``).
"""

from __future__ import annotations

from trainspec.compiler.lower import env as envs
from trainspec.compiler.plan import DATA_DIR, PVC_ROOT, DataPlan
from trainspec.dsl.models import Data
from trainspec.k8s.wellknown import SHARD_SOURCE_VOLUME as SOURCE_VOLUME
from trainspec.k8s import (
    DatasetInitializer, Initializer, PersistentVolumeClaimVolumeSource, Volume, VolumeMount,
)


def initializer(data: Data, plan: DataPlan) -> Initializer:
    settings = {
        envs.DATA_FORMAT: data.format.value,
        envs.NUM_SHARDS: str(plan.num_shards),
        envs.SHARD_BY: data.shard_by.value,
        envs.SHARD_ASSIGNMENT: data.assignment.value,
        envs.SHARD_SEED: str(data.seed),
    }
    return Initializer(dataset=DatasetInitializer(storage_uri=plan.storage_uri, env=envs.plain(settings)))


def trainer_env(plan: DataPlan) -> dict[str, str]:
    return {envs.DATA_DIR: DATA_DIR, envs.NUM_SHARDS: str(plan.num_shards)}


def source_volume(plan: DataPlan) -> tuple[Volume, VolumeMount] | None:
    """A ``pvc://claim/path`` source is mounted read-only into the stage at <PVC_ROOT>/<claim>."""
    if plan.source_claim is None:
        return None
    return (
        Volume(name=SOURCE_VOLUME, persistent_volume_claim=PersistentVolumeClaimVolumeSource(
            claim_name=plan.source_claim, read_only=True)),
        VolumeMount(name=SOURCE_VOLUME, mount_path=f"{PVC_ROOT}/{plan.source_claim}", read_only=True),
    )
