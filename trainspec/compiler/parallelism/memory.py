"""Memory per GPU of a layout: model state (weights, gradients, optimizer) plus activations.

**Model state**, with ``psi`` the parameters a GPU's pipeline stage holds split over TP, and
``d = dp x cp`` the ranks the optimizer shards over (ZeRO paper, Rajbhandari et al. 2020, §5 and
Figure 1; Megatron's distributed optimizer shards over the data- and context-parallel ranks):

* stage 0 (plain data parallel): ``(w + g + K) psi``
* stage 1 (optimizer state sharded; Megatron's distributed optimizer): ``(w + g + K/d) psi``
* stage 2 (+ gradients): ``(w + (g + K)/d) psi``
* stage 3 (+ weights; FSDP full sharding): ``(w + g + K) psi / d``

A stage holds its layers' parameters (``(P - embeddings) / L`` each), and the first stage the
input embedding, the last the output layer (``v x h`` each, when the vocabulary is known).

**Activations** of one layer for one micro-batch, in bytes (Korthikanti et al. 2022, "Reducing
Activation Recomputation in Large Transformer Models", §4, Table 2), in units of ``s b h`` with
sequence ``s`` (divided by CP), micro-batch ``b``, hidden ``h``; for the paper's GPT layer 34 in
all: attention 11 (the QKV input 2, Q and K 4, V 2, the projection's input 2, a dropout mask 1),
the MLP 19 (input 2, the 4h GeLU input 8 and output 8, a dropout mask 1), two layer norms 4; plus
the attention scores ``5 a s / h`` (softmax output, its dropout mask and output). Generalised to
the shapes trained today, as the same accounting gives them:

* grouped-query attention: K and V are ``kv/a`` of Q: attention ``7 + 4 kv/a`` (+ 1 dropout);
* an MLP of intermediate size ``f``: ``2 + 4 f/h`` (GeLU), ``2 + 6 f/h`` gated (SwiGLU keeps
  the gate and up projections and the activation's output);
* dropout (masks of 1 byte per value): on for GPT-style MLPs, off for gated ones (Llama, Mistral,
  Qwen and Gemma train without it); the scores are ``5as/h`` with dropout, ``2as/h`` without.

TP splits them: with **sequence parallelism** (on by default: Megatron, NeMo and torchtitan run TP
so) every term divides by ``t``; without it the norms, the QKV and MLP inputs and the dropout masks
(``10 s b h`` for GPT) are replicated on each TP rank. Recomputation: *selective* drops the
scores (FlashAttention keeps none either); *full* keeps each layer's input only (``2 s b h``, over
``t`` with SP), plus one layer's full activations while it is recomputed.

With PP (1F1B schedule), stage ``i`` holds the activations of up to ``pp - i`` micro-batches in
flight (at most ``m``, the micro-batches per step, when the global batch says): the first stage
its layers x ``min(pp, m)``, as much as all ``L`` layers when ``m >= pp``. The interleaved schedule
with ``v`` virtual stages multiplies the first stage's by ``1 + (pp - 1) / (pp v)`` (Korthikanti
et al. 2022, §4.2.3). The last stage holds one micro-batch plus the output layer's
``4 s b h / t (1 + v / s)`` (the fp32 logits, when the vocabulary ``v`` is known). The peak is the
busiest stage's state + activations.

"Fits" leaves :data:`HEADROOM` of the GPU for the CUDA context, NCCL buffers and fragmentation.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from trainspec.compiler.parallelism.inputs import ACTIVATION_BYTES, Arch, Shape
from trainspec.compiler.parallelism.layouts import Layout

#: Share of a GPU's memory a layout may plan to use (the rest: CUDA context, NCCL, fragmentation).
HEADROOM = Fraction(9, 10)


def _ceil(value: Fraction) -> int:
    return -(-value.numerator // value.denominator)


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes per GPU (the busiest GPU: the pipeline stage with the most state + activations)."""

    weights: int
    gradients: int
    optimizer: int
    activations: int | None  # None: the model block is missing, activations unknown

    @property
    def state(self) -> int:
        """Weights + gradients + optimizer state."""
        return self.weights + self.gradients + self.optimizer

    @property
    def total(self) -> int:
        return self.state + (self.activations or 0)

    def fits(self, gpu_memory: int | None) -> bool | None:
        """Whether the total stays within :data:`HEADROOM` of ``gpu_memory`` (None if unknown)."""
        return None if gpu_memory is None else self.total <= gpu_memory * HEADROOM


def model_state(arch: Arch, tp: int, pp: int, dp: int, zero: int) -> tuple[int, int, int]:
    """(weights, gradients, optimizer) bytes per GPU of an even split, by the ZeRO paper's formulas."""
    return _state(arch, Fraction(arch.parameters, tp * pp), dp, zero)


def _state(arch: Arch, psi: Fraction, shards: int, zero: int) -> tuple[int, int, int]:
    w, g, k = arch.weight_bytes * psi, arch.grad_bytes * psi, arch.k * psi
    if zero >= 1:
        k /= shards
    if zero >= 2:
        g /= shards
    if zero >= 3:
        w /= shards
    return _ceil(w), _ceil(g), _ceil(k)


def _terms(shape: Shape) -> tuple[Fraction, Fraction, Fraction]:
    """A layer's activations in ``s b h`` units: (split over TP always, replicated without SP,
    the attention scores' ``as/h`` coefficient)."""
    h = shape.hidden
    ffn = Fraction(shape.ffn_hidden if shape.ffn_hidden else 4 * h, h)
    dropout = 0 if shape.gated_mlp else 1
    kv = Fraction(shape.kv_heads, shape.heads)
    # Q 2, K and V 2 kv/a each, the projection's input 2 | the MLP's inner values.
    split = 2 + 4 * kv + 2 + (6 if shape.gated_mlp else 4) * ffn
    # Two norms' inputs 4, the QKV and MLP inputs 2 each, the two dropout masks.
    replicated = 4 + 2 + 2 + 2 * dropout
    return split, Fraction(replicated), Fraction(5 if dropout else 2)


def layer_activations(shape: Shape, tp: int, recompute: str, *, sp: bool = True, cp: int = 1) -> int:
    """Bytes one layer keeps for one micro-batch (Korthikanti et al. 2022, Table 2, generalised)."""
    s = Fraction(shape.sequence, cp)
    sbh = s * shape.micro_batch * shape.hidden * Fraction(ACTIVATION_BYTES, 2)  # the constants count 2-byte values
    if recompute == "full":
        return _ceil(2 * sbh / (tp if sp else 1))
    split, replicated, scores = _terms(shape)
    kept = replicated / tp if sp else replicated
    kept += split / tp
    if recompute != "selective":
        kept += scores * shape.heads * shape.sequence / shape.hidden / tp
    return _ceil(sbh * kept)


def output_layer(shape: Shape, tp: int, cp: int = 1) -> int:
    """The last stage's output layer and loss: ``4 s b h / t (1 + v / s)`` (0 without a vocabulary)."""
    if shape.vocabulary is None:
        return 0
    s = Fraction(shape.sequence, cp)
    sb = s * shape.micro_batch
    return _ceil(Fraction(4, tp) * sb * shape.hidden * (1 + shape.vocabulary / s))


def micro_batches(shape: Shape, dp: int) -> int | None:
    """Micro-batches per optimizer step of one replica (global batch / (micro-batch x dp)), if known."""
    if shape.global_batch is None:
        return None
    return max(shape.global_batch // (shape.micro_batch * dp), 1)


@dataclass(frozen=True)
class _Stage:
    layers: int
    in_flight: Fraction
    embedding: bool = False
    output: bool = False


def _stages(shape: Shape, layout: Layout) -> list[_Stage]:
    """The first, the busiest middle and the last pipeline stage (one stage without PP)."""
    first, middle, last = layout.stage_layers(shape.layers)
    m = micro_batches(shape, layout.dp)
    pp = layout.pp
    if pp == 1:
        return [_Stage(first, Fraction(1), embedding=True, output=True)]
    interleave = 1 + Fraction(pp - 1, pp * layout.virtual) if layout.virtual > 1 else Fraction(1)
    head = _Stage(first, min(pp, m or pp) * interleave, embedding=True)
    stages = [head, _Stage(last, Fraction(1), output=True)]
    if pp > 2:
        stages.append(_Stage(middle, Fraction(min(pp - 1, m or pp))))
    return stages


def activations(shape: Shape, layout: Layout) -> int:
    """Peak activation bytes per GPU over the pipeline stages (ignoring their model state)."""
    return max(_stage_activations(shape, layout, stage) for stage in _stages(shape, layout))


def _stage_activations(shape: Shape, layout: Layout, stage: _Stage) -> int:
    t, cp, sp = layout.tp, layout.cp, layout.sp
    kept = layer_activations(shape, t, layout.recompute, sp=sp, cp=cp)
    working = layer_activations(shape, t, "none", sp=sp, cp=cp) if layout.recompute == "full" else 0
    out = _ceil(stage.layers * stage.in_flight * kept) + working
    return out + (output_layer(shape, t, cp) if stage.output else 0)


def estimate(arch: Arch, layout: Layout) -> MemoryEstimate:
    """The per-GPU memory of ``layout`` (activations only when the model's shape is known)."""
    shards = layout.dp * layout.cp
    shape = arch.shape
    if shape is None:
        weights, grads, optimizer = _state(arch, Fraction(arch.parameters, layout.tp * layout.pp), shards, layout.zero)
        return MemoryEstimate(weights, grads, optimizer, None)
    embedding = shape.vocabulary * shape.hidden if shape.vocabulary is not None else 0
    per_layer = Fraction(max(arch.parameters - 2 * embedding, 0), shape.layers)
    best: MemoryEstimate | None = None
    for stage in _stages(shape, layout):
        params = stage.layers * per_layer + embedding * (stage.embedding + stage.output)
        weights, grads, optimizer = _state(arch, params / layout.tp, shards, layout.zero)
        found = MemoryEstimate(weights, grads, optimizer, _stage_activations(shape, layout, stage))
        if best is None or found.total > best.total:
            best = found
    assert best is not None
    return best


__all__ = [
    "HEADROOM",
    "MemoryEstimate",
    "activations",
    "estimate",
    "layer_activations",
    "micro_batches",
    "model_state",
    "output_layer",
]
