"""Ray Train arguments from the environment the ray target sets, so scripts carry no numbers.

A RayJob compiled by trainspec has ``TRAINSPEC_NUM_NODES``, ``TRAINSPEC_PROCS_PER_NODE``,
``TRAINSPEC_GPUS_PER_NODE``, ``TRAINSPEC_CPUS_PER_NODE`` (when the node's CPUs are known) and,
for an elastic job, ``TRAINSPEC_MIN_NODES`` and ``TRAINSPEC_MAX_RESTARTS`` in every pod. The
driver (the entrypoint, on the head pod) turns them into Ray Train's configuration::

    from ray.train import FailureConfig, RunConfig, ScalingConfig
    from ray.train.torch import TorchTrainer
    from trainspec.stages.ray import failure_config, scaling_config, storage_path

    trainer = TorchTrainer(
        train_loop,
        scaling_config=ScalingConfig(**scaling_config()),
        run_config=RunConfig(storage_path=storage_path(), failure_config=FailureConfig(**failure_config())),
    )

Standard library only; nothing here imports Ray.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from trainspec.dsl.errors import TrainspecError
from trainspec.k8s.wellknown import (
    CHECKPOINT_DIR_ENV,
    CPUS_PER_NODE_ENV,
    GPUS_PER_NODE_ENV,
    MAX_RESTARTS_ENV,
    MIN_NODES_ENV,
    NUM_NODES_ENV,
    PROCS_PER_NODE_ENV,
)

__all__ = ["RayConfigError", "failure_config", "scaling_config", "storage_path"]


class RayConfigError(ValueError, TrainspecError):
    """The pod's environment lacks (or has a malformed) variable of the ray target's contract."""


def _number(env: Mapping[str, str], name: str, *, required: bool = True, minimum: float = 0) -> float | None:
    raw = env.get(name, "").strip()
    if not raw:
        if required:
            raise RayConfigError(f"{name} is not set: is this pod part of a RayJob compiled by trainspec?")
        return None
    try:
        value = float(raw)
    except ValueError:
        raise RayConfigError(f"{name}={raw!r} is not a number") from None
    if not math.isfinite(value) or value < minimum:
        raise RayConfigError(f"{name}={raw!r} must be a finite number >= {minimum:g}")
    return value


def _count(env: Mapping[str, str], name: str, *, required: bool = True) -> int | None:
    value = _number(env, name, required=required, minimum=1)
    if value is None:
        return None
    if value != int(value):
        raise RayConfigError(f"{name}={env[name]!r} must be a whole number")
    return int(value)


def _share(total: float, parts: int) -> float | int:
    """``total / parts``, rounded down to 1/1000 so the shares never sum above what a node has."""
    share = math.floor(total * 1000 / parts) / 1000
    return int(share) if share == int(share) else share


def scaling_config(env: Mapping[str, str] | None = None, *, reserve_cpus_per_node: float = 1.0) -> dict[str, Any]:
    """Keyword arguments of ``ray.train.ScalingConfig`` for this job.

    ``num_workers`` is nodes x processes per node (a ``(min, max)`` pair for an elastic job,
    Ray Train's elastic form); ``use_gpu`` is whether nodes have GPUs; ``resources_per_worker``
    splits one node's GPUs and CPUs evenly over its processes. ``reserve_cpus_per_node`` CPUs
    of each node are left out of the split (when the node has more than that), so Ray Train's
    own actors and Ray Data tasks still fit next to the workers.
    """
    env = os.environ if env is None else env
    nodes = _count(env, NUM_NODES_ENV)
    procs = _count(env, PROCS_PER_NODE_ENV)
    assert nodes is not None and procs is not None  # required ones are never None
    gpus = _number(env, GPUS_PER_NODE_ENV, required=False) or 0
    cpus = _number(env, CPUS_PER_NODE_ENV, required=False)
    low = _count(env, MIN_NODES_ENV, required=False)
    if low is not None and low > nodes:
        raise RayConfigError(f"{MIN_NODES_ENV}={low} is larger than {NUM_NODES_ENV}={nodes}")
    resources: dict[str, float | int] = {}
    if cpus is not None and cpus > 0:
        usable = cpus - reserve_cpus_per_node if cpus > reserve_cpus_per_node else cpus
        resources["CPU"] = _share(usable, procs)
    if gpus > 0:
        resources["GPU"] = _share(gpus, procs)
    out: dict[str, Any] = {
        "num_workers": (low * procs, nodes * procs) if low is not None and low < nodes else nodes * procs,
        "use_gpu": gpus > 0,
    }
    if resources:
        out["resources_per_worker"] = resources
    return out


def failure_config(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Keyword arguments of ``ray.train.FailureConfig``: the elastic job's restart budget, if any."""
    env = os.environ if env is None else env
    raw = env.get(MAX_RESTARTS_ENV, "").strip()
    if not raw:
        return {}
    if not raw.isdigit():
        raise RayConfigError(f"{MAX_RESTARTS_ENV}={raw!r} must be a whole number >= 0")
    return {"max_failures": int(raw)}


def storage_path(env: Mapping[str, str] | None = None) -> str | None:
    """``RunConfig(storage_path=...)``: the checkpoint directory every pod mounts (None: none set)."""
    env = os.environ if env is None else env
    return env.get(CHECKPOINT_DIR_ENV, "").strip() or None
