"""What the planner reads, as plain records: the model's arithmetic facts and the cluster's.

Bytes per parameter (mixed-precision training, ZeRO paper §3 / §5): weights ``w`` and gradients
``g`` in the training dtype (bf16/fp16: 2 bytes each), and ``K`` bytes of optimizer state: an fp32
master copy (4, when the weights are narrower than fp32) plus the optimizer's moments (Adam/AdamW
8: momentum and variance in fp32; SGD 4; none 0). bf16 + AdamW is 2 + 2 + 12 = 16 bytes/param.
``checkpoint.model.optimizerBytesPerParam`` replaces ``K`` when given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

#: Bytes of an fp32 master copy of the weights (mixed precision keeps one next to the optimizer).
MASTER_BYTES = 4
#: Optimizer moments per parameter, in bytes (fp32 each).
MOMENT_BYTES = {"adam": 8, "adamw": 8, "sgd": 4, "none": 0}
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

    @property
    def bytes_per_param(self) -> Fraction:
        """``w + g + K``: 16 for bf16 with Adam."""
        return self.weight_bytes + self.grad_bytes + self.k


def arch_for(
    parameters: int,
    weight_bytes: Fraction,
    optimizer: str,
    *,
    k: Fraction | None = None,
    dtype: str = "bf16",
    shape: Shape | None = None,
) -> Arch:
    """An :class:`Arch` with ``K`` from the rule above (or the given ``k``)."""
    if k is None:
        moments = MOMENT_BYTES.get(optimizer, 8)
        master = MASTER_BYTES if weight_bytes < MASTER_BYTES and moments else 0
        k = Fraction(master + moments)
    return Arch(parameters, Fraction(weight_bytes), Fraction(weight_bytes), Fraction(k), dtype, optimizer, shape)


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

    @property
    def empty(self) -> bool:
        return all(v is None for v in (self.tp, self.pp, self.dp, self.zero, self.recompute))


@dataclass(frozen=True)
class PlannerInputs:
    """Everything one job gives the planner."""

    arch: Arch
    cluster: Cluster
    pin: Pin = field(default_factory=Pin)
