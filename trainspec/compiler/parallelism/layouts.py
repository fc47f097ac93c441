"""Parallel layouts TP x CP x PP x DP (x ZeRO stage, recomputation) and which of them are valid.

A layout is valid for a world of ``N`` ranks on nodes of ``G`` GPUs when (Narayanan et al. 2021,
Megatron-LM; Megatron Core for CP and uneven stages): ``tp x cp x pp x dp = N``; TP divides the
attention heads (and the KV heads: each TP rank holds whole heads); CP divides the sequence (each
CP rank holds a contiguous share of every sequence); the pipeline stages hold whole layers:
``pp`` divides the layers, or, with uneven first and last stages (Megatron's
``--decoder-first/last-pipeline-num-layers``, the split Llama 3 405B trained with), the layers
left after them divide over the ``pp - 2`` middle stages; with ``v`` virtual stages (the
interleaved schedule) each stage's layers divide into ``v`` chunks; TP stays inside a node (``tp``
divides ``G``): a TP all-reduce per layer over the network instead of NVLink is never worth it.
ZeRO stages above 0 need more than one replica to shard over, and ZeRO-2 is not combined with PP
(:func:`stages_for`).

The planner searches TP, PP (an even split, else the balanced uneven split: the first and last
stages one layer short, as if the embedding and the output layer were layers), DP, the ZeRO stage
and recomputation; CP, virtual stages, a custom uneven split and turning sequence parallelism off
are taken from the pin only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

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
    """One way to split a job: degrees, ZeRO stage (3 = FSDP full sharding) and recomputation.

    ``first``/``last``: the layers of the first and last pipeline stages when they differ from the
    others (0: an even split); ``virtual``: model chunks per pipeline rank (interleaved 1F1B);
    ``sp``: sequence parallelism with TP (the norms' and dropouts' activations split over TP too).
    """

    tp: int
    pp: int
    dp: int
    zero: int = 0
    recompute: str = "none"
    cp: int = 1
    first: int = 0
    last: int = 0
    virtual: int = 1
    sp: bool = True

    @property
    def model_parallel(self) -> int:
        """``tp x cp x pp``: the GPUs one replica of the model (and of a sequence) is split over."""
        return self.tp * self.cp * self.pp

    @property
    def uneven(self) -> bool:
        return bool(self.first or self.last)

    def stage_layers(self, layers: int) -> tuple[int, int, int]:
        """(first, middle, last) stage layer counts for a model of ``layers`` layers."""
        if not self.uneven or self.pp == 1:
            each = layers // self.pp
            return each, each, each
        middle = (layers - self.first - self.last) // (self.pp - 2) if self.pp > 2 else 0
        return self.first, middle, self.last

    def describe(self) -> str:
        """``TP 8 x PP 2 x DP 4, ZeRO-1, selective recompute`` (CP, stages, virtual and SP when set)."""
        zero = f"ZeRO-{self.zero}" if self.zero else "no ZeRO"
        cp = f" x CP {self.cp}" if self.cp > 1 else ""
        extras = []
        if self.uneven:
            extras.append(f"stages {self.first}/../{self.last} layers")
        if self.virtual > 1:
            extras.append(f"{self.virtual} virtual stages")
        if self.tp > 1 and not self.sp:
            extras.append("no sequence parallelism")
        more = "".join(f", {e}" for e in extras)
        return f"TP {self.tp}{cp} x PP {self.pp} x DP {self.dp}, {zero}, {self.recompute} recompute{more}"


def layer_split_problem(layers: int, pp: int, first: int, last: int, virtual: int = 1) -> str | None:
    """Why ``pp`` stages (uneven: ``first``/``last`` layers) cannot hold ``layers`` (None: they can)."""
    each: tuple[int, ...]
    if not (first or last) or pp == 1:
        if layers % pp:
            return f"PP {pp} does not divide the {layers} layers"
        each = (layers // pp,)
    elif pp == 2:
        if first + last != layers or not first or not last:
            return f"the first and last stages ({first} + {last} layers) must hold all {layers} layers with PP 2"
        each = (first, last)
    else:
        rest = layers - first - last
        if not first or not last or rest < pp - 2 or rest % (pp - 2):
            return (
                f"with {first} and {last} layers on the first and last stages, the other {rest} layers do "
                f"not divide over the {pp - 2} middle stages"
            )
        each = (first, rest // (pp - 2), last)
    if virtual > 1 and any(n % virtual for n in each):
        return f"{virtual} virtual stages do not divide the stages' layers ({', '.join(map(str, sorted(set(each))))})"
    return None


def balanced_split(layers: int, pp: int) -> tuple[int, int] | None:
    """(first, last) for ``pp`` stages: (0, 0) when ``pp`` divides ``layers``; else the first and
    last stages one layer short, when that divides (the embedding and the output layer weigh as a
    layer each: Llama 3 405B's 126 layers on 16 stages, BLOOM's 70 on 12); else None."""
    if layers % pp == 0:
        return 0, 0
    if pp > 2 and (layers + 2) % pp == 0 and (layers + 2) // pp > 1:
        each = (layers + 2) // pp - 1
        return each, each
    return None


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


def structural_problems(
    tp: int, pp: int, dp: int | None, shape: Shape | None, cluster: Cluster, layout: Layout | None = None
) -> list[str]:
    """Why degrees ``tp``, ``pp``, ``dp`` (and ``layout``'s CP, stages, virtual stages) cannot split
    this model on this cluster ([] when they can).

    Each text names the rule: ``heads``, ``layers``, ``sequence``, ``world`` or ``node`` come first
    (the callers pick a diagnostic code by that word).
    """
    out = []
    cp = layout.cp if layout is not None else 1
    if shape is not None and shape.heads % tp:
        out.append(f"heads: TP {tp} does not divide the {shape.heads} attention heads")
    elif shape is not None and shape.kv_heads % tp:
        out.append(f"heads: TP {tp} does not divide the {shape.kv_heads} KV heads (grouped-query attention)")
    if shape is not None:
        first, last, virtual = (layout.first, layout.last, layout.virtual) if layout is not None else (0, 0, 1)
        problem = layer_split_problem(shape.layers, pp, first, last, virtual)
        if problem is not None:
            out.append(f"layers: {problem}")
        if shape.sequence % cp:
            out.append(f"sequence: CP {cp} does not divide the sequence of {shape.sequence} tokens")
    product = tp * cp * pp * (dp if dp is not None else 1)
    if (dp is not None and product != cluster.world) or (dp is None and cluster.world % product):
        shown = (
            f"TP {tp}" + (f" x CP {cp}" if cp > 1 else "") + f" x PP {pp}" + (f" x DP {dp}" if dp is not None else "")
        )
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
    cp = pin.cp or 1
    if cluster.world % cp:
        return
    world = cluster.world // cp
    sp = pin.sp if pin.sp is not None else True
    for tp in divisors(world):
        if pin.tp is not None and tp != pin.tp:
            continue
        for pp in divisors(world // tp):
            if pin.pp is not None and pp != pin.pp:
                continue
            dp = world // (tp * pp)
            if pin.dp is not None and dp != pin.dp:
                continue
            split = _split(shape, pp, pin)
            if split is None:
                continue
            base = Layout(tp, pp, dp, cp=cp, first=split[0], last=split[1], virtual=pin.virtual or 1, sp=sp)
            if structural_problems(tp, pp, dp, shape, cluster, base):
                continue
            # One replica has nothing to shard over: every stage is stage 0 (a pinned stage included).
            stages = stages_for(pin.framework, pp) if dp * cp > 1 else (0,)
            for zero in stages:
                if pin.zero is not None and dp * cp > 1 and zero != pin.zero:
                    continue
                for recompute in RECOMPUTE:
                    if pin.recompute is not None and recompute != pin.recompute:
                        continue
                    yield replace(base, zero=zero, recompute=recompute)


def _split(shape: Shape | None, pp: int, pin: Pin) -> tuple[int, int] | None:
    """The pinned (first, last) stage layers, else the balanced split (None: no split works)."""
    if pin.first or pin.last:
        return pin.first or 0, pin.last or 0
    if shape is None or pin.pp is not None:
        # A pinned pp splits evenly unless the pin says how: the framework must be told the same
        # split (TS422 names the fields), so it is never guessed for a pin.
        return 0, 0
    return balanced_split(shape.layers, pp)
