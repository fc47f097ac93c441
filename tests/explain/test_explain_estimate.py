"""The arithmetic of explain against hand-computed figures (design notes' sizing facts included)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from trainspec.compiler.sizing import checkpoint_size, human_bytes
from trainspec.dsl.spec.models import ModelSize
from trainspec.explain.estimate import (
    TrainingState,
    as_price,
    cost,
    format_number,
    gpu_hours,
    memory_fit,
    training_state,
)
from trainspec.explain.rows import money

GB = 10**9


def model(parameters: str, dtype: str = "bf16", optimizer: str = "adam", **extra) -> ModelSize:
    return ModelSize(parameters=parameters, dtype=dtype, optimizer=optimizer, **extra)


def test_70b_bf16_adam_is_16_bytes_per_parameter_in_gpu_memory() -> None:
    # Mixed precision (ZeRO paper): bf16 weights 2 + bf16 gradients 2 + fp32 master, momentum and
    # variance 12 = 16 bytes per parameter, what the parallelism planner uses too.
    state = training_state(model("70B"))
    assert (state.weights, state.gradients, state.optimizer) == (140 * GB, 140 * GB, 840 * GB)
    assert state.total == 1120 * GB
    assert state.master == 280 * GB  # of the optimizer's 840 GB: the fp32 master copy (the rest, moments)
    # What is saved holds the same optimizer state (one memory model): + bf16 weights = 980 GB.
    saved = checkpoint_size(model("70B"), keep=3)
    assert (saved.weights, saved.master, saved.moments) == (140 * GB, 280 * GB, 560 * GB)
    assert saved.optimizer == state.optimizer and saved.per_checkpoint == 980 * GB
    fit = memory_fit(state, gpus=64, gpus_per_node=8, gpu_memory=80 * GB)
    assert fit.replicated_per_gpu == 1120 * GB and fit.fits_replicated is False
    assert fit.sharded_per_gpu == 17_500_000_000  # ZeRO-3: (2 + 2 + 12) x 70B / 64
    assert fit.fits_sharded is True
    assert human_bytes(fit.sharded_per_gpu) == "17.5 GB"


def test_405b_bf16_does_not_fit_one_node_nor_64_gpus_even_fully_sharded() -> None:
    state = training_state(model("405B"))
    assert state.weights == 810 * GB
    fit = memory_fit(state, gpus=64, gpus_per_node=8, gpu_memory=80 * GB)
    # A DGX H100 node: 8 x 80 GB = 640 GB, less than the 810 GB of weights alone.
    assert fit.node_memory == 640 * GB
    assert fit.weights_fit_node is False
    # 16 bytes x 405e9 = 6480 GB, over 64 GPUs 101.25 GB: more than a GPU has, before activations.
    assert state.total == 6480 * GB
    assert fit.sharded_per_gpu == 101_250_000_000
    assert human_bytes(fit.sharded_per_gpu) == "101 GB"
    assert fit.fits_sharded is False
    # The weights' share alone is 810 GB / 64 = 12.7 GB.
    assert human_bytes(state.weights // 64) == "12.7 GB"


def test_sgd_keeps_one_copy_of_the_weights_as_optimizer_state() -> None:
    state = training_state(model("7B", dtype="fp32", optimizer="sgd"))
    assert (state.weights, state.gradients, state.optimizer) == (28 * GB, 28 * GB, 28 * GB)
    assert state.total == 84 * GB


def test_no_optimizer_means_weights_and_gradients_only() -> None:
    state = training_state(model("13B", dtype="fp16", optimizer="none"))
    assert state.optimizer == 0
    assert state.total == 2 * 26 * GB


def test_optimizer_bytes_per_param_overrides_the_factor() -> None:
    # Mixed-precision Adam with fp32 master weights and two fp32 moments: 12 bytes per parameter.
    state = training_state(model("70B", optimizer="adamw", optimizer_bytes_per_param=12))
    assert state.optimizer == 840 * GB
    assert state.total == 140 * GB + 140 * GB + 840 * GB


def test_int4_weights_take_half_a_byte_per_parameter() -> None:
    assert training_state(model("8B", dtype="int4", optimizer="none")).weights == 4 * GB


def test_sharding_divides_by_the_gpus_and_rounds_up() -> None:
    state = TrainingState(weights=4004, gradients=4004, optimizer=12012)  # total 20020
    assert memory_fit(state, gpus=1, gpus_per_node=1, gpu_memory=None).sharded_per_gpu == 20020
    assert memory_fit(state, gpus=4, gpus_per_node=4, gpu_memory=None).sharded_per_gpu == 5005
    assert memory_fit(state, gpus=3, gpus_per_node=1, gpu_memory=None).sharded_per_gpu == 6674  # 6673.3 up


def test_fit_is_unknown_without_gpu_memory() -> None:
    fit = memory_fit(training_state(model("1B")), gpus=8, gpus_per_node=8, gpu_memory=None)
    assert fit.fits_replicated is None and fit.fits_sharded is None
    assert fit.node_memory is None and fit.weights_fit_node is None


def test_fit_boundary_is_inclusive() -> None:
    state = TrainingState(weights=40, gradients=40, optimizer=0)
    assert memory_fit(state, gpus=1, gpus_per_node=1, gpu_memory=80).fits_replicated is True
    assert memory_fit(state, gpus=1, gpus_per_node=1, gpu_memory=79).fits_replicated is False


@pytest.mark.parametrize(
    ("gpus", "seconds", "hours"),
    [
        (64, 72 * 3600, Fraction(4608)),
        (3, 30 * 60, Fraction(3, 2)),
        (8, 90 * 60, Fraction(12)),
        (1, 45, Fraction(1, 80)),
    ],
)
def test_gpu_hours_are_gpus_times_run_time_in_hours(gpus: int, seconds: int, hours: Fraction) -> None:
    assert gpu_hours(gpus, seconds) == hours


def test_cost_is_exact_and_rounded_only_for_display() -> None:
    total = cost(Fraction(4608), as_price(2.49))
    assert total == Fraction(1147392, 100)
    assert money(total, "USD") == "11,473.92 USD"
    assert money(cost(Fraction(3, 2), as_price("0.333")), "EUR") == "0.50 EUR"  # 0.4995 -> 0.50
    assert money(cost(Fraction(0), as_price(5)), "USD") == "0.00 USD"


def test_format_number() -> None:
    assert format_number(Fraction(4608)) == "4608"
    assert format_number(Fraction(3, 2)) == "1.5"
    assert format_number(Fraction(1, 3)) == "0.33"
    assert format_number(as_price(2.49)) == "2.49"
