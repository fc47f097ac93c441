"""Environment variables of the in-pod contract, as typed EnvVar lists."""

from __future__ import annotations

from collections.abc import Mapping

from trainspec.dsl.models import SecretRef
from trainspec.k8s import EnvVar, EnvVarSource, SecretKeySelector

CHECKPOINT_DIR = "TRAINSPEC_CHECKPOINT_DIR"
CHECKPOINT_KEEP = "TRAINSPEC_CHECKPOINT_KEEP"
DATA_DIR = "TRAINSPEC_DATA_DIR"
NUM_SHARDS = "TRAINSPEC_NUM_SHARDS"
DATA_FORMAT = "TRAINSPEC_DATA_FORMAT"
SHARD_BY = "TRAINSPEC_SHARD_BY"
SHARD_ASSIGNMENT = "TRAINSPEC_SHARD_ASSIGNMENT"
SHARD_SEED = "TRAINSPEC_SHARD_SEED"
PVC_ROOT = "TRAINSPEC_PVC_ROOT"


def plain(values: Mapping[str, str]) -> list[EnvVar]:
    """Plain variables, sorted by name so output does not depend on input order."""
    return [EnvVar(name=name, value=value) for name, value in sorted(values.items())]


def from_secrets(refs: Mapping[str, SecretRef]) -> list[EnvVar]:
    return [
        EnvVar(name=name, value_from=EnvVarSource(secret_key_ref=SecretKeySelector(name=ref.secret, key=ref.key)))
        for name, ref in sorted(refs.items())
    ]
