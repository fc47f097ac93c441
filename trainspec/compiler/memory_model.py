"""One memory model: what a parameter costs in bytes while training, and in a checkpoint.

The planner's model state, ``explain``'s model-state line and the checkpoint size (``size: auto``)
all read :func:`per_param` and :func:`saved`, so they never disagree.

**Training** (mixed precision, Rajbhandari et al. 2020, "ZeRO", §3 and §5): weights ``w`` and
gradients ``g`` in the training dtype (bf16/fp16: 2 bytes), an fp32 **master** copy of the weights
(4 bytes, when the dtype is narrower than fp32 and there is an optimizer), and the optimizer's
**moments** in fp32 (Adam/AdamW 8: momentum and variance; SGD 4: momentum; none 0). The ZeRO
paper's ``K`` is master + moments: 12 for bf16 with AdamW, so 16 bytes per parameter in all.
``checkpoint.model.optimizerBytesPerParam`` replaces ``K``.

**A resumable checkpoint** holds the optimizer state too, and what else depends on who writes it
(:class:`CheckpointFormat`): per parameter, for bf16 with AdamW,

=============  ==========================================================  =========
format         what is saved                                               bytes
=============  ==========================================================  =========
``dcp``        PyTorch DCP of FSDP/DDP (torchtitan, JAX/Orbax alike): the    12
               parameters as the trainer holds them (fp32 under mixed
               precision: the master copy *is* the parameter) + moments
``deepspeed``  DeepSpeed ZeRO (any stage): the bf16 module weights             14
               (``mp_rank_*_model_states.pt``) + fp32 master weights and
               moments (``*_optim_states.pt``)
``megatron``   Megatron-LM / NeMo: bf16 weights + the (distributed)            14
               optimizer's fp32 main parameters and moments
(unknown)      the largest of the three: never smaller than what is written    14
=============  ==========================================================  =========

With ``optimizerBytesPerParam`` a checkpoint is the weights plus that many bytes per parameter.
"""

from __future__ import annotations

import enum
from fractions import Fraction

from trainspec.dsl.record import Record

#: Bytes of an fp32 master copy of the weights (mixed precision keeps one next to the optimizer).
MASTER_BYTES = Fraction(4)
#: Optimizer moments per parameter, in bytes (fp32 each).
MOMENT_BYTES = {"adam": Fraction(8), "adamw": Fraction(8), "sgd": Fraction(4), "none": Fraction(0)}


class CheckpointFormat(str, enum.Enum):
    """Who writes the checkpoint, hence what it holds (see the module docstring)."""

    DCP = "dcp"
    DEEPSPEED = "deepspeed"
    MEGATRON = "megatron"
    UNKNOWN = "unknown"


#: What each format is called where people read it.
FORMAT_NAMES = {
    CheckpointFormat.DCP: "PyTorch DCP",
    CheckpointFormat.DEEPSPEED: "DeepSpeed",
    CheckpointFormat.MEGATRON: "Megatron",
    CheckpointFormat.UNKNOWN: "any framework",
}


class PerParam(Record):
    """Bytes per parameter of each part of the model state while training."""

    weights: Fraction
    gradients: Fraction
    master: Fraction
    moments: Fraction

    @property
    def optimizer(self) -> Fraction:
        """The ZeRO paper's ``K``: master copy + moments."""
        return self.master + self.moments

    @property
    def total(self) -> Fraction:
        return self.weights + self.gradients + self.optimizer


def per_param(weight_bytes: Fraction, optimizer: str, k: Fraction | None = None) -> PerParam:
    """The training state per parameter for weights of ``weight_bytes`` with ``optimizer`` (``k``
    replaces master + moments; it is counted as moments, the master copy being unknown)."""
    w = Fraction(weight_bytes)
    if k is not None:
        return PerParam(w, w, Fraction(0), Fraction(k))
    moments = MOMENT_BYTES.get(optimizer, MOMENT_BYTES["adamw"])
    master = MASTER_BYTES if w < MASTER_BYTES and moments else Fraction(0)
    return PerParam(w, w, master, moments)


class Saved(Record):
    """Bytes per parameter of one checkpoint: the weights as saved (fp32 for DCP under mixed
    precision), a separate fp32 master copy, and the optimizer's moments."""

    weights: Fraction
    master: Fraction
    moments: Fraction
    format: CheckpointFormat

    @property
    def total(self) -> Fraction:
        return self.weights + self.master + self.moments


def saved(state: PerParam, fmt: CheckpointFormat) -> Saved:
    """What a checkpoint of ``fmt`` holds per parameter of a model training with ``state``."""
    if fmt is CheckpointFormat.DCP and state.master:
        return Saved(state.master, Fraction(0), state.moments, fmt)  # the parameters are the fp32 master
    return Saved(state.weights, state.master, state.moments, fmt)


#: The format of each ``parallelism.framework`` and runtime ``framework`` that says it for sure
#: (a plain ``torch`` runtime may run Megatron or DeepSpeed under torchrun: unknown).
_BY_FRAMEWORK = {
    "torchtitan": CheckpointFormat.DCP,
    "megatron": CheckpointFormat.MEGATRON,
    "nemo": CheckpointFormat.MEGATRON,
    "deepspeed": CheckpointFormat.DEEPSPEED,
    "jax": CheckpointFormat.DCP,
}


def format_for(declared: str | None, parallel_framework: str | None, runtime_framework: str | None) -> CheckpointFormat:
    """The checkpoint format: ``checkpoint.model.format``, else the one ``parallelism.framework``
    or the runtime's framework implies, else :attr:`CheckpointFormat.UNKNOWN` (the largest)."""
    if declared:
        return CheckpointFormat(declared)
    for name in (parallel_framework, runtime_framework):
        if name in _BY_FRAMEWORK:
            return _BY_FRAMEWORK[name]
    return CheckpointFormat.UNKNOWN


__all__ = [
    "FORMAT_NAMES",
    "MASTER_BYTES",
    "MOMENT_BYTES",
    "CheckpointFormat",
    "PerParam",
    "Saved",
    "format_for",
    "per_param",
    "saved",
]
