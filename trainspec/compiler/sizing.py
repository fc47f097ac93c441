"""Sizing arithmetic: checkpoint bytes and volume sizes. Pure functions, exact integers.

One checkpoint is what the memory model (:mod:`trainspec.compiler.memory_model`) says its writer
saves: the weights as saved, a separate fp32 master copy where the format keeps one, and the
optimizer's moments (``optimizerBytesPerParam`` replaces master + moments). The volume holds
``keep`` of them + 20% headroom, rounded up to whole Gi.

Figures for 70B parameters in bf16 with AdamW: a DeepSpeed or Megatron checkpoint (and one whose
writer is not known) is 140 GB weights + 280 GB fp32 master + 560 GB moments = 980 GB; a PyTorch
DCP checkpoint of FSDP is 280 GB fp32 weights + 560 GB moments = 840 GB. Both hold exactly the
optimizer state the planner and ``explain`` count (840 GB): a resumable checkpoint must.
"""

from __future__ import annotations

from fractions import Fraction

from trainspec.compiler.memory_model import CheckpointFormat, per_param, saved
from trainspec.dsl.record import Record
from trainspec.dsl.spec.models import DType, ModelSize

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
HEADROOM = Fraction(6, 5)


class CheckpointSize(Record):
    """The parts of one checkpoint, in bytes, and the volume that holds ``keep`` of them."""

    weights: int
    #: A separate fp32 master copy of the weights (0 where the saved weights are that copy).
    master: int
    #: The optimizer's moments (or, with optimizerBytesPerParam, all the optimizer state).
    moments: int
    keep: int
    format: CheckpointFormat = CheckpointFormat.UNKNOWN
    #: The saved weights' bytes per parameter (4 for DCP under mixed precision: fp32).
    weight_bytes: Fraction = Fraction(2)

    @property
    def optimizer(self) -> int:
        """The optimizer state saved: master copy + moments."""
        return self.master + self.moments

    @property
    def per_checkpoint(self) -> int:
        return self.weights + self.master + self.moments

    @property
    def total(self) -> int:
        return self.per_checkpoint * self.keep

    @property
    def volume_gi(self) -> int:
        """Volume size in Gi: keep x per checkpoint + 20%, rounded up."""
        needed = Fraction(self.total) * HEADROOM
        return max(1, -(-needed.numerator // (needed.denominator * GI)))


def checkpoint_size(model: ModelSize, keep: int, fmt: CheckpointFormat | str | None = None) -> CheckpointSize:
    """One checkpoint of ``model`` as ``fmt`` writes it (default: ``model.format``, else the
    largest any framework writes), and the volume for ``keep`` of them."""
    chosen = CheckpointFormat(fmt or model.format or CheckpointFormat.UNKNOWN)
    k = Fraction(str(model.optimizer_bytes_per_param)) if model.optimizer_bytes_per_param is not None else None
    each = saved(per_param(DTYPE_BYTES[model.dtype], model.optimizer.value, k), chosen)
    count = model.parameters.count
    return CheckpointSize(
        weights=_ceil(count * each.weights),
        master=_ceil(count * each.master),
        moments=_ceil(count * each.moments),
        keep=keep,
        format=chosen,
        weight_bytes=each.weights,
    )


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
