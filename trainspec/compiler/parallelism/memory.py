"""Memory per GPU of a layout: model state (weights, gradients, optimizer) plus activations.

Model state, with ``psi = P / (tp x pp)`` parameters per GPU (the layers and embeddings split
evenly over TP and PP) and ``d = dp`` (ZeRO paper, Rajbhandari et al. 2020, §5 and Figure 1):

* stage 0 (plain data parallel): ``(w + g + K) psi``
* stage 1 (optimizer state sharded; Megatron's distributed optimizer): ``(w + g + K/d) psi``
* stage 2 (+ gradients): ``(w + (g + K)/d) psi``
* stage 3 (+ weights; FSDP full sharding): ``(w + g + K) psi / d``

Activations of one layer for one micro-batch, in bytes (Korthikanti et al. 2022, "Reducing
Activation Recomputation in Large Transformer Models", Table 2), with sequence ``s``, micro-batch
``b``, hidden ``h``, heads ``a``, TP ``t`` (with sequence parallelism, so every term divides by t):

* no recomputation: ``s b h (34 + 5 a s / h) / t``
* selective (the attention scores are recomputed, the ``5as/h`` term goes): ``34 s b h / t``
* full (each layer keeps its input only): ``2 s b h``, plus one layer's full activations while
  that layer is recomputed in the backward pass.

With PP (1F1B schedule), stage ``i`` holds the activations of up to ``pp - i`` micro-batches in
flight, so the first stage holds ``L/pp`` layers x ``min(pp, m)`` micro-batches (``m`` the
micro-batches per step, when the global batch says) - as much as ``L`` layers when ``m >= pp``.
The last stage holds one micro-batch plus the output layer's ``4 s b h / t (1 + v / s)`` (the fp32
logits, when the vocabulary ``v`` is known). The peak is the larger of the two.

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
    """Bytes per GPU (the busiest GPU: the first or last pipeline stage)."""

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
    """(weights, gradients, optimizer) bytes per GPU, by the ZeRO paper's formulas."""
    psi = Fraction(arch.parameters, tp * pp)
    w, g, k = arch.weight_bytes * psi, arch.grad_bytes * psi, arch.k * psi
    if zero >= 1:
        k /= dp
    if zero >= 2:
        g /= dp
    if zero >= 3:
        w /= dp
    return _ceil(w), _ceil(g), _ceil(k)


def layer_activations(shape: Shape, tp: int, recompute: str) -> int:
    """Bytes one layer keeps for one micro-batch (Korthikanti et al. 2022, Table 2)."""
    sbh = shape.sequence * shape.micro_batch * shape.hidden
    unit = Fraction(ACTIVATION_BYTES, 2)  # the paper's constants count 2-byte values
    if recompute == "full":
        return _ceil(2 * sbh * unit)
    if recompute == "selective":
        return _ceil(34 * sbh * unit / tp)
    return _ceil(sbh * (34 + Fraction(5 * shape.heads * shape.sequence, shape.hidden)) * unit / tp)


def output_layer(shape: Shape, tp: int) -> int:
    """The last stage's output layer and loss: ``4 s b h / t (1 + v / s)`` (0 without a vocabulary)."""
    if shape.vocabulary is None:
        return 0
    sb = shape.sequence * shape.micro_batch
    return _ceil(Fraction(4 * sb * shape.hidden, tp) * (1 + Fraction(shape.vocabulary, shape.sequence)))


def micro_batches(shape: Shape, dp: int) -> int | None:
    """Micro-batches per optimizer step of one replica (global batch / (micro-batch x dp)), if known."""
    if shape.global_batch is None:
        return None
    return max(shape.global_batch // (shape.micro_batch * dp), 1)


def activations(shape: Shape, layout: Layout) -> int:
    """Peak activation bytes per GPU: the first stage's in-flight micro-batches or the last stage's output."""
    per_stage = shape.layers // layout.pp
    kept = layer_activations(shape, layout.tp, layout.recompute)
    working = layer_activations(shape, layout.tp, "none") if layout.recompute == "full" else 0
    m = micro_batches(shape, layout.dp)
    in_flight = layout.pp if m is None else min(layout.pp, m)
    first = per_stage * in_flight * kept + working
    last = per_stage * kept + working + output_layer(shape, layout.tp)
    return max(first, last)


def estimate(arch: Arch, layout: Layout) -> MemoryEstimate:
    """The per-GPU memory of ``layout`` (activations only when the model's shape is known)."""
    weights, grads, optimizer = model_state(arch, layout.tp, layout.pp, layout.dp, layout.zero)
    acts = activations(arch.shape, layout) if arch.shape is not None else None
    return MemoryEstimate(weights, grads, optimizer, acts)
