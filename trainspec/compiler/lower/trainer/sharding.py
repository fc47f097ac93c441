"""The data-sharding stage as seen from a TrainJob: initializer settings, trainer env and source mounts.

The stage's pod itself lives in the ``-sharded`` runtime variant (see ``lower.runtime``).

In index mode (the default for contiguous assignment) the stage writes only the manifest, whose
ranges name the source's own files, so every trainer pod reads the source as the stage did:

* ``pvc://claim/path``: the claim is mounted read-only in the trainer pods at the path the
  stage sees (``<PVC_ROOT>/<claim>``), so the manifest's absolute paths resolve there too;
* object storage: the trainer pods read with the identity the stage reads with (the pods'
  service account: trainspec puts no credential in any pod), through fsspec in the trainer image;
* a local absolute path: a path every node has (a host or CSI mount the runtime provides), as before.

The manifest itself stays on the shard volume (``TRAINSPEC_DATA_DIR``) in both modes.
"""

from __future__ import annotations

from trainspec.compiler.lower import env as envs
from trainspec.compiler.plan import DATA_DIR, PVC_ROOT, DataPlan
from trainspec.dsl.spec.models import Data, ShardMode
from trainspec.k8s import (
    DatasetInitializer,
    Initializer,
    PersistentVolumeClaimVolumeSource,
    Volume,
    VolumeMount,
)
from trainspec.k8s.wellknown import SHARD_SOURCE_VOLUME as SOURCE_VOLUME


def initializer(data: Data, plan: DataPlan) -> Initializer:
    """The dataset initializer: the source URI and the stage's settings as the env contract names them."""
    settings = {
        envs.DATA_FORMAT: data.format.value,
        envs.NUM_SHARDS: str(plan.num_shards),
        envs.SHARD_BY: data.shard_by.value,
        envs.SHARD_ASSIGNMENT: data.assignment.value,
        envs.SHARD_SEED: str(data.seed),
        envs.SHARD_MODE: plan.mode.value,
        envs.SHARD_BALANCE: data.balance.value,
        envs.SHARD_CHECKSUM: data.checksum.value,
    }
    return Initializer(dataset=DatasetInitializer(storage_uri=plan.storage_uri, env=envs.plain(settings)))


def trainer_env(plan: DataPlan) -> dict[str, str]:
    """What every trainer container gets: where the manifest is and how many shards it must have."""
    return {envs.DATA_DIR: DATA_DIR, envs.NUM_SHARDS: str(plan.num_shards)}


def source_volume(plan: DataPlan) -> tuple[Volume, VolumeMount] | None:
    """A ``pvc://claim/path`` source is mounted read-only into the stage at <PVC_ROOT>/<claim>."""
    if plan.source_claim is None:
        return None
    return (
        Volume(
            name=SOURCE_VOLUME,
            persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=plan.source_claim, read_only=True),
        ),
        VolumeMount(name=SOURCE_VOLUME, mount_path=f"{PVC_ROOT}/{plan.source_claim}", read_only=True),
    )


def trainer_source_volume(plan: DataPlan) -> tuple[Volume, VolumeMount] | None:
    """Index mode over a ``pvc://`` source: the same read-only mount in every trainer pod (None otherwise)."""
    return source_volume(plan) if plan.mode is ShardMode.INDEX else None
