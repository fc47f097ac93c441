"""Checkpoint arithmetic against hand-computed cases."""

from __future__ import annotations

import pytest

from trainspec.compiler.sizing import GI, checkpoint_size, human_bytes
from trainspec.dsl.spec.models import ModelSize


def size(params: str, dtype: str = "bf16", optimizer: str = "adamw", keep: int = 1, **extra):
    return checkpoint_size(ModelSize(parameters=params, dtype=dtype, optimizer=optimizer, **extra), keep)


def test_the_seed_figure_70b_bf16_adam() -> None:
    s = size("70B", optimizer="adam", keep=3)
    assert s.weights == 140 * 10**9
    assert s.optimizer == 420 * 10**9
    assert s.per_checkpoint == 560 * 10**9
    assert s.total == 1680 * 10**9
    # 1680 GB x 1.2 = 2016 GB = 1877.56 GiB -> 1878Gi
    assert s.volume_gi == 1878
    assert human_bytes(s.per_checkpoint) == "560 GB"


@pytest.mark.parametrize(
    ("params", "dtype", "optimizer", "weights", "optim"),
    [
        ("405B", "bf16", "adamw", 810 * 10**9, 2430 * 10**9),
        ("7B", "fp32", "sgd", 28 * 10**9, 28 * 10**9),
        ("7B", "fp16", "none", 14 * 10**9, 0),
        ("1B", "int4", "none", 500_000_000, 0),
    ],
)
def test_weights_and_optimizer_state(params, dtype, optimizer, weights, optim) -> None:
    s = size(params, dtype, optimizer)
    assert (s.weights, s.optimizer) == (weights, optim)


def test_optimizer_bytes_per_param_overrides_the_factor() -> None:
    s = size("70B", optimizer="adamw", optimizer_bytes_per_param=12)
    assert s.optimizer == 840 * 10**9  # fp32 master weights + two moments


def test_volume_rounds_up_to_whole_gi() -> None:
    s = size("1", dtype="int8", optimizer="none")
    assert s.volume_gi == 1
    exact = size("1", dtype="int8", optimizer="none")
    assert exact.total * 6 / 5 <= exact.volume_gi * GI
