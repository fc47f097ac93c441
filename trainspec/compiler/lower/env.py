"""Environment variables of the in-pod contract, as typed EnvVar lists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from trainspec.dsl.spec.models import SecretRef
from trainspec.k8s import EnvVar, EnvVarSource, SecretKeySelector
from trainspec.k8s.wellknown import (
    CHECKPOINT_DIR_ENV as CHECKPOINT_DIR,
    CHECKPOINT_KEEP_ENV as CHECKPOINT_KEEP,
    DATA_DIR_ENV as DATA_DIR,
    DATA_FORMAT_ENV as DATA_FORMAT,
    NUM_SHARDS_ENV as NUM_SHARDS,
    PVC_ROOT_ENV as PVC_ROOT,
    RUN_ID_ENV as RUN_ID,
    SHARD_ASSIGNMENT_ENV as SHARD_ASSIGNMENT,
    SHARD_BALANCE_ENV as SHARD_BALANCE,
    SHARD_BY_ENV as SHARD_BY,
    SHARD_CHECKSUM_ENV as SHARD_CHECKSUM,
    SHARD_MODE_ENV as SHARD_MODE,
    SHARD_SEED_ENV as SHARD_SEED,
)

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan

__all__ = [
    "CHECKPOINT_DIR",
    "CHECKPOINT_KEEP",
    "DATA_DIR",
    "DATA_FORMAT",
    "NUM_SHARDS",
    "PVC_ROOT",
    "RUN_ID",
    "SHARD_ASSIGNMENT",
    "SHARD_BALANCE",
    "SHARD_BY",
    "SHARD_CHECKSUM",
    "SHARD_MODE",
    "SHARD_SEED",
    "from_secrets",
    "layout",
    "plain",
    "run",
    "tracking",
]


def plain(values: Mapping[str, str]) -> list[EnvVar]:
    """Plain variables, sorted by name so output does not depend on input order."""
    return [EnvVar(name=name, value=value) for name, value in sorted(values.items())]


def from_secrets(refs: Mapping[str, SecretRef]) -> list[EnvVar]:
    return [
        EnvVar(name=name, value_from=EnvVarSource(secret_key_ref=SecretKeySelector(name=ref.secret, key=ref.key)))
        for name, ref in sorted(refs.items())
    ]


def layout(plan: JobPlan) -> dict[str, str]:
    """The parallel layout's TRAINSPEC_* variables (the planner's choice or the spec's pin), if the job has one."""
    spec = plan.resolved.job.spec
    if spec.model is None and spec.parallelism is None:
        return {}  # most jobs: the planner is not even imported
    from trainspec.compiler.parallelism.contract import layout_env

    return layout_env(plan)


def run(plan: JobPlan) -> dict[str, str]:
    """``TRAINSPEC_RUN_ID``: the run id, put in place once the run object is complete (compiler.runs)."""
    from trainspec.compiler.runs import PLACEHOLDER

    return {RUN_ID: PLACEHOLDER}


def tracking(plan: JobPlan) -> dict[str, str]:
    """``spec.tracking``'s variables (the tracker's own and ``TRAINSPEC_TRACKING`` / ``TRAINSPEC_JOB_NAME``).

    A name the job's env or secretEnv sets is left to the job: with tracking in the job itself
    that is TS303 already, so this only decides for a tracking block the project's defaults filled
    in, where the job's explicit value wins.
    """
    spec = plan.resolved.job.spec
    if spec.tracking is None:
        return {}
    return {
        name: value
        for name, value in spec.tracking.env(plan.resolved.name).items()
        if name not in spec.env and name not in spec.secret_env
    }
