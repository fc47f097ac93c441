"""Parallel layouts TP x PP x DP (x ZeRO stage, recomputation) and which of them are valid.

A layout is valid for a world of ``N`` ranks on nodes of ``G`` GPUs when (Narayanan et al. 2021,
Megatron-LM): ``tp x pp x dp = N``; TP divides the attention heads (and the KV heads: each TP rank
holds whole heads); PP divides the layers (equal stages); TP stays inside a node (``tp`` divides
``G``): a TP all-reduce per layer over the network instead of NVLink is never worth it. ZeRO
stages above 0 need ``dp > 1`` (with one replica there is nothing to shard over), and ZeRO-2 is
not combined with PP (:func:`stages_for`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from trainspec.compiler.parallelism.inputs import Cluster, Pin, Shape

#: Recomputation modes, cheapest in compute first.
RECOMPUTE = ("none", "selective", "full")
ZERO_STAGES = (0, 1, 2, 3)
#: ZeRO stages each framework runs (docs/parallelism.md): Megatron and NeMo shard the optimizer
#: (the distributed optimizer) or use FSDP; torchtitan has DDP or FSDP2; DeepSpeed has all four,
#: but its pipeline engine only up to stage 1.
FRAMEWORK_STAGES = {"megatron": (0, 1, 3), "nemo": (0, 1, 3), "torchtitan": (0, 3), "deepspeed": (0, 1, 2, 3)}


def stages_for(framework: str | None, pp: int) -> tuple[int, ...]:
    """The ZeRO stages ``framework`` runs with ``pp`` pipeline stages (all four when none is named)."""
    stages = FRAMEWORK_STAGES.get(framework or "", ZERO_STAGES)
    if pp > 1:
        # ZeRO-2 reduce-scatters the gradients of every micro-batch, which a pipeline accumulates:
        # DeepSpeed's pipeline engine refuses stages 2 and 3, Megatron has no stage 2; torchtitan
        # runs FSDP2 (stage 3) with PP.
        stages = tuple(s for s in stages if s != 2 and not (framework == "deepspeed" and s == 3))
    return stages


@dataclass(frozen=True, order=True)
class Layout:
    """One way to split a job: degrees, ZeRO stage (3 = FSDP full sharding) and recomputation."""

    tp: int
    pp: int
    dp: int
    zero: int = 0
    recompute: str = "none"

    @property
    def model_parallel(self) -> int:
        """``tp x pp``: the GPUs one replica of the model is split over."""
        return self.tp * self.pp

    def describe(self) -> str:
        """``TP 8 x PP 2 x DP 4, ZeRO-1, selective recompute``."""
        zero = f"ZeRO-{self.zero}" if self.zero else "no ZeRO"
        return f"TP {self.tp} x PP {self.pp} x DP {self.dp}, {zero}, {self.recompute} recompute"


def divisors(n: int) -> list[int]:
    """The divisors of ``n`` in increasing order (O(sqrt n))."""
    small, large = [], []
    i = 1
    while i * i <= n:
        if n % i == 0:
            small.append(i)
            if i != n // i:
                large.append(n // i)
        i += 1
    return small + large[::-1]


def structural_problems(tp: int, pp: int, dp: int | None, shape: Shape | None, cluster: Cluster) -> list[str]:
    """Why degrees ``tp``, ``pp``, ``dp`` cannot split this model on this cluster ([] when they can).

    Each text names the rule: ``heads``, ``layers``, ``world`` or ``node`` come first (the callers
    pick a diagnostic code by that word).
    """
    out = []
    if shape is not None and shape.heads % tp:
        out.append(f"heads: TP {tp} does not divide the {shape.heads} attention heads")
    elif shape is not None and shape.kv_heads % tp:
        out.append(f"heads: TP {tp} does not divide the {shape.kv_heads} KV heads (grouped-query attention)")
    if shape is not None and shape.layers % pp:
        out.append(f"layers: PP {pp} does not divide the {shape.layers} layers")
    product = tp * pp * (dp if dp is not None else 1)
    if (dp is not None and product != cluster.world) or (dp is None and cluster.world % product):
        shown = f"TP {tp} x PP {pp}" + (f" x DP {dp}" if dp is not None else "")
        out.append(
            f"world: {shown} = {product} does not match the world size {cluster.world}"
            if dp is not None
            else f"world: {shown} = {product} does not divide the world size {cluster.world}"
        )
    if tp > cluster.gpus_per_node or cluster.gpus_per_node % tp:
        out.append(
            f"node: TP {tp} does not fit inside a node of {cluster.gpus_per_node} GPUs: its all-reduce per "
            "layer would cross the network"
        )
    return out


def valid_layouts(shape: Shape | None, cluster: Cluster, pin: Pin | None = None) -> Iterator[Layout]:
    """Every valid layout that agrees with ``pin``, in a fixed order (tp, pp, zero, recompute)."""
    pin = pin or Pin()
    world = cluster.world
    for tp in divisors(world):
        if pin.tp is not None and tp != pin.tp:
            continue
        for pp in divisors(world // tp):
            if pin.pp is not None and pp != pin.pp:
                continue
            dp = world // (tp * pp)
            if pin.dp is not None and dp != pin.dp:
                continue
            if structural_problems(tp, pp, dp, shape, cluster):
                continue
            # One replica has nothing to shard over: every stage is stage 0 (a pinned stage included).
            stages = stages_for(pin.framework, pp) if dp > 1 else (0,)
            for zero in stages:
                if pin.zero is not None and dp > 1 and zero != pin.zero:
                    continue
                for recompute in RECOMPUTE:
                    if pin.recompute is not None and recompute != pin.recompute:
                        continue
                    yield Layout(tp, pp, dp, zero, recompute)
