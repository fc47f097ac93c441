"""What the planner reads, as plain records: the model's arithmetic facts and the cluster's.

Bytes per parameter come from the one memory model (:mod:`trainspec.compiler.memory_model`):
weights ``w`` and gradients ``g`` in the training dtype, and ``K`` bytes of optimizer state (an
fp32 master copy plus the moments): bf16 + AdamW is 2 + 2 + 12 = 16 bytes/param.
``checkpoint.model.optimizerBytesPerParam`` replaces ``K`` when given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from trainspec.compiler.memory_model import PerParam, per_param

#: Bytes of one activation value (bf16/fp16); the formulas of Korthikanti et al. assume 2.
ACTIVATION_BYTES = 2


@dataclass(frozen=True)
class Shape:
    """The transformer's shape: what the activation formulas and the TP/PP rules need."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    sequence: int
    micro_batch: int
    global_batch: int | None = None
    vocabulary: int | None = None
    #: The MLP's intermediate size (``model.ffnHiddenSize``; None: 4 x hidden, GPT's) and whether
    #: it is gated (SwiGLU/GeGLU: ``model.gatedMlp``; three matrices, no dropout).
    ffn_hidden: int | None = None
    gated_mlp: bool = False
    #: One attention head's width where it is not hidden / heads (``model.headDim``; Gemma 2).
    head_dim: int | None = None
    #: A mixture of experts (``model.experts`` ...; None: dense): routed experts per MoE layer, those
    #: each token goes through, the always-on shared ones, one expert's intermediate size, and the
    #: leading dense layers. Memory counts every expert (the parameter count is the total).
    experts: int | None = None
    experts_per_token: int | None = None
    shared_experts: int = 0
    moe_ffn_hidden: int | None = None
    dense_layers: int = 0


@dataclass(frozen=True)
class Arch:
    """A model's parameter count and bytes per parameter (``K`` is the ZeRO paper's optimizer term)."""

    parameters: int
    weight_bytes: Fraction
    grad_bytes: Fraction
    k: Fraction
    dtype: str = "bf16"
    optimizer: str = "adamw"
    shape: Shape | None = None
    #: Of ``k``, the fp32 master copy (the rest is the optimizer's moments).
    master: Fraction = Fraction(0)

    @property
    def bytes_per_param(self) -> Fraction:
        """``w + g + K``: 16 for bf16 with Adam."""
        return self.weight_bytes + self.grad_bytes + self.k

    @property
    def state(self) -> PerParam:
        """The bytes per parameter as the memory model's record."""
        return PerParam(self.weight_bytes, self.grad_bytes, self.master, self.k - self.master)


def arch_for(
    parameters: int,
    weight_bytes: Fraction,
    optimizer: str,
    *,
    k: Fraction | None = None,
    dtype: str = "bf16",
    shape: Shape | None = None,
) -> Arch:
    """An :class:`Arch` with its bytes per parameter from the memory model (``k`` replaces ``K``)."""
    state = per_param(Fraction(weight_bytes), optimizer, k)
    return Arch(
        parameters, state.weights, state.gradients, state.optimizer, dtype, optimizer, shape, master=state.master
    )


@dataclass(frozen=True)
class Cluster:
    """Where the job runs: ranks, GPUs per node, one GPU's memory and the two links' bandwidths.

    Bandwidths are bytes per second in one direction: NVLink per GPU (half the data sheet's
    both-directions figure), the network per node (ports x port bandwidth).
    """

    world: int
    gpus_per_node: int
    gpu_memory: int | None
    nvlink: Fraction | None = None
    network: Fraction | None = None
    network_name: str = "the network"

    @property
    def nodes(self) -> int:
        return -(-self.world // max(self.gpus_per_node, 1))


@dataclass(frozen=True)
class Pin:
    """What the spec pins (None: the planner chooses)."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    zero: int | None = None
    recompute: str | None = None
    fsdp: bool = False
    framework: str | None = None
    cp: int | None = None
    #: Layers of the first and last pipeline stages (None: an even split).
    first: int | None = None
    last: int | None = None
    virtual: int | None = None
    #: Sequence parallelism with TP (None: on, as Megatron, NeMo and torchtitan run TP).
    sp: bool | None = None

    @property
    def empty(self) -> bool:
        return (
            all(
                v is None
                for v in (
                    self.tp,
                    self.pp,
                    self.dp,
                    self.zero,
                    self.recompute,
                    self.cp,
                    self.first,
                    self.last,
                    self.virtual,
                )
            )
            and self.sp is None
        )


@dataclass(frozen=True)
class PlannerInputs:
    """Everything one job gives the planner."""

    arch: Arch
    cluster: Cluster
    pin: Pin = field(default_factory=Pin)
