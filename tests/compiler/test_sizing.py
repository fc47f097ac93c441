"""Checkpoint arithmetic against hand-computed cases."""

from __future__ import annotations

import pytest

from trainspec.compiler.sizing import GI, checkpoint_size, human_bytes
from trainspec.dsl.spec.models import ModelSize


def size(params: str, dtype: str = "bf16", optimizer: str = "adamw", keep: int = 1, **extra):
    return checkpoint_size(ModelSize(parameters=params, dtype=dtype, optimizer=optimizer, **extra), keep)


def test_70b_bf16_adam_as_any_framework_writes_it() -> None:
    # The writer unknown: the largest checkpoint, weights + fp32 master + moments (DeepSpeed, Megatron).
    s = size("70B", optimizer="adam", keep=3)
    assert s.weights == 140 * 10**9  # 2 bytes x 70B
    assert s.master == 280 * 10**9  # 4 bytes x 70B
    assert s.moments == 560 * 10**9  # 8 bytes x 70B
    assert s.per_checkpoint == 980 * 10**9 and s.optimizer == 840 * 10**9
    assert s.total == 2940 * 10**9
    # 2940 GB x 1.2 = 3528 GB = 3285.68 GiB -> 3286Gi
    assert s.volume_gi == 3286
    assert human_bytes(s.per_checkpoint) == "980 GB"


@pytest.mark.parametrize(
    ("fmt", "weights", "master", "moments"),
    [
        ("dcp", 280 * 10**9, 0, 560 * 10**9),  # the fp32 parameters ARE the master copy: 12 bytes/param
        ("deepspeed", 140 * 10**9, 280 * 10**9, 560 * 10**9),  # bf16 module + fp32 optimizer partitions: 14
        ("megatron", 140 * 10**9, 280 * 10**9, 560 * 10**9),  # bf16 weights + distributed optimizer: 14
    ],
)
def test_each_writer_saves_what_it_holds(fmt, weights, master, moments) -> None:
    s = size("70B", format=fmt)
    assert (s.weights, s.master, s.moments) == (weights, master, moments)


@pytest.mark.parametrize(
    ("params", "dtype", "optimizer", "weights", "optim"),
    [
        ("405B", "bf16", "adamw", 810 * 10**9, 4860 * 10**9),  # master 4 + moments 8 = 12 bytes
        ("7B", "fp32", "sgd", 28 * 10**9, 28 * 10**9),  # fp32: no master copy; momentum 4 bytes
        ("7B", "fp16", "none", 14 * 10**9, 0),  # no optimizer, no master copy
        ("1B", "int4", "none", 500_000_000, 0),
    ],
)
def test_weights_and_optimizer_state(params, dtype, optimizer, weights, optim) -> None:
    s = size(params, dtype, optimizer)
    assert (s.weights, s.optimizer) == (weights, optim)


def test_optimizer_bytes_per_param_overrides_master_and_moments() -> None:
    s = size("70B", optimizer="adamw", optimizer_bytes_per_param=6)
    assert (s.weights, s.optimizer) == (140 * 10**9, 420 * 10**9)


def test_volume_rounds_up_to_whole_gi() -> None:
    s = size("1", dtype="int8", optimizer="none")
    assert s.volume_gi == 1
    exact = size("1", dtype="int8", optimizer="none")
    assert exact.total * 6 / 5 <= exact.volume_gi * GI
