"""Sizing arithmetic: checkpoint bytes and volume sizes. Pure functions, exact integers.

The rule (documented for users in the README):

* weights  = parameters x bytes per parameter of ``dtype``;
* optimizer state = weights x 3 for adam/adamw, x 1 for sgd, 0 for none, or
  parameters x ``optimizerBytesPerParam`` when given;
* one checkpoint = weights + optimizer state;
* the volume = one checkpoint x ``keep`` + 20% headroom, rounded up to whole Gi.

Seed figure: 70B parameters in bf16 with Adam = 140 GB weights + 420 GB optimizer = 560 GB.
"""

from __future__ import annotations

from fractions import Fraction

from trainspec.dsl.record import Record
from trainspec.dsl.spec.models import DType, ModelSize, Optimizer

GI = 1024**3
#: Bytes per parameter of each weight type.
DTYPE_BYTES: dict[DType, Fraction] = {
    DType.FP32: Fraction(4),
    DType.TF32: Fraction(4),
    DType.BF16: Fraction(2),
    DType.FP16: Fraction(2),
    DType.FP8: Fraction(1),
    DType.INT8: Fraction(1),
    DType.INT4: Fraction(1, 2),
}
#: Optimizer state as a multiple of the weights' bytes.
OPTIMIZER_FACTOR: dict[Optimizer, int] = {Optimizer.ADAM: 3, Optimizer.ADAMW: 3, Optimizer.SGD: 1, Optimizer.NONE: 0}
HEADROOM = Fraction(6, 5)


class CheckpointSize(Record):
    """The parts of one checkpoint, in bytes, and the volume that holds ``keep`` of them."""

    weights: int
    optimizer: int
    keep: int

    @property
    def per_checkpoint(self) -> int:
        return self.weights + self.optimizer

    @property
    def total(self) -> int:
        return self.per_checkpoint * self.keep

    @property
    def volume_gi(self) -> int:
        """Volume size in Gi: keep x per checkpoint + 20%, rounded up."""
        needed = Fraction(self.total) * HEADROOM
        return max(1, -(-needed.numerator // (needed.denominator * GI)))


def weight_bytes(model: ModelSize) -> int:
    return _ceil(model.parameters.count * DTYPE_BYTES[model.dtype])


def optimizer_bytes(model: ModelSize) -> int:
    if model.optimizer_bytes_per_param is not None:
        return _ceil(model.parameters.count * Fraction(str(model.optimizer_bytes_per_param)))
    return weight_bytes(model) * OPTIMIZER_FACTOR[model.optimizer]


def checkpoint_size(model: ModelSize, keep: int) -> CheckpointSize:
    return CheckpointSize(weights=weight_bytes(model), optimizer=optimizer_bytes(model), keep=keep)


def _ceil(value: Fraction | int) -> int:
    value = Fraction(value)
    return -(-value.numerator // value.denominator)


def human_bytes(count: int) -> str:
    """Decimal units, as people say them: ``560 GB``, ``1.5 TB``."""
    for unit, size in (("PB", 10**15), ("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= size:
            value = count / size
            return f"{value:.0f} {unit}" if value == int(value) or value >= 100 else f"{value:.1f} {unit}"
    return f"{count} B"
