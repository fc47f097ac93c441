"""What each parallel axis sends, over which link, per micro-batch or per step.

Ranks are laid out as Megatron-LM lays them out by default: TP fastest, then CP, then DP, then PP
(``rank = pp_index x (tp x cp x dp) + dp_index x (tp x cp) + cp_index x tp + tp_index``). So a TP
group is inside one node, a CP or DP group crosses nodes when the ranks before it outgrow a node,
and the pipeline crosses nodes when the world is larger than a node. Volumes are bytes each GPU
sends (a ring collective over ``n`` ranks sends ``(n-1)/n`` of the buffer per reduce-scatter or
all-gather; an all-reduce is both), with ``s`` the sequence a CP rank holds (``s / cp``):

* **TP**: per layer and micro-batch, 2 all-reduce-equivalents forward and 2 backward (with sequence
  parallelism: all-gathers and reduce-scatters of the same volume) of ``s b h`` 2-byte values:
  ``8 (t-1)/t x 2 s b h`` bytes per layer (Narayanan et al. 2021, §3.2), for the busiest stage's layers.
* **CP**: ring attention passes each rank's keys and values around the ring, ``cp - 1`` hops
  forward and, with their gradients, twice that backward: ``3 (cp-1) x 2 x 2 s b h (kv/a) / t``
  bytes per layer and micro-batch (Megatron Core's context parallelism).
* **PP**: per micro-batch and stage boundary, the activations forward and their gradients
  backward, ``2 x 2 s b h / t`` bytes (each TP rank sends its 1/t: the scatter-gather optimisation).
* **DP**: per step, the gradients over the ``dp x cp`` ranks holding the same weights:
  ``2 (d-1)/d x g psi`` (all-reduce; ZeRO-1/2's reduce-scatter plus all-gather of the weights is
  the same volume), ``3 (d-1)/d x w psi`` with ZeRO-3/FSDP (weights gathered in forward and
  backward, gradients reduce-scattered: the ZeRO paper's 1.5x, §7).

Times are volume / one direction's bandwidth: NVLink per GPU, the network per node shared by
its GPUs. They are lower bounds (no latency, no overlap with compute).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from trainspec.compiler.parallelism.inputs import ACTIVATION_BYTES, Arch, Cluster
from trainspec.compiler.parallelism.layouts import Layout
from trainspec.compiler.parallelism.memory import micro_batches

NVLINK = "NVLink"


@dataclass(frozen=True)
class Traffic:
    """One axis's traffic: the collective, the link, bytes per GPU and the unit they are counted in."""

    axis: str  # TP, CP, PP, DP (or "DP x CP")
    size: int
    collective: str
    link: str  # NVLink, or the network's name
    bytes_per_gpu: int
    per: str  # "micro-batch" or "step"
    seconds: Fraction | None

    @property
    def across_nodes(self) -> bool:
        return self.link != NVLINK


def _ceil(value: Fraction) -> int:
    return -(-value.numerator // value.denominator)


def _link(cluster: Cluster, inside: bool) -> tuple[str, Fraction | None]:
    if inside:
        return NVLINK, cluster.nvlink
    per_gpu = cluster.network / cluster.gpus_per_node if cluster.network is not None else None
    return cluster.network_name, per_gpu


def _traffic(
    axis: str, size: int, collective: str, cluster: Cluster, inside: bool, volume: Fraction, per: str
) -> Traffic:
    link, bandwidth = _link(cluster, inside)
    sent = _ceil(volume)
    return Traffic(axis, size, collective, link, sent, per, Fraction(sent) / bandwidth if bandwidth else None)


def traffic(arch: Arch, cluster: Cluster, layout: Layout) -> list[Traffic]:
    """The traffic of every axis with degree > 1, in the order TP, CP, PP, DP."""
    t, p, d, c = layout.tp, layout.pp, layout.dp, layout.cp
    out: list[Traffic] = []
    shape = arch.shape
    m = micro_batches(shape, d) if shape is not None else None
    scale, per = (m, "step") if m is not None else (1, "micro-batch")
    if shape is not None:
        buffer = Fraction(shape.sequence, c) * shape.micro_batch * shape.hidden * ACTIVATION_BYTES
        layers = max(layout.stage_layers(shape.layers))
        if t > 1:
            volume = Fraction(8 * (t - 1), t) * buffer * layers * scale
            out.append(_traffic("TP", t, "all-reduce x4 per layer", cluster, True, volume, per))
        if c > 1:
            kv = Fraction(shape.kv_heads, shape.heads)
            volume = 3 * (c - 1) * 2 * buffer * kv / t * layers * scale
            inside = t * c <= cluster.gpus_per_node
            out.append(_traffic("CP", c, "ring exchange of K/V per layer", cluster, inside, volume, per))
        if p > 1:
            volume = Fraction(2, t) * buffer * scale
            out.append(
                _traffic(
                    "PP", p, "point-to-point activations", cluster, cluster.world <= cluster.gpus_per_node, volume, per
                )
            )
    group = d * c
    if group > 1:
        psi = Fraction(arch.parameters, t * p)
        if layout.zero >= 3:
            volume, collective = (
                3 * Fraction(group - 1, group) * psi * arch.weight_bytes,
                "all-gather x2 + reduce-scatter",
            )
        elif layout.zero >= 1:
            volume, collective = 2 * Fraction(group - 1, group) * psi * arch.grad_bytes, "reduce-scatter + all-gather"
        else:
            volume, collective = 2 * Fraction(group - 1, group) * psi * arch.grad_bytes, "all-reduce"
        axis = "DP" if c == 1 else "DP x CP"  # CP ranks hold the same weights: their gradients are summed too
        out.append(_traffic(axis, group, collective, cluster, t * group <= cluster.gpus_per_node, volume, "step"))
    return out
