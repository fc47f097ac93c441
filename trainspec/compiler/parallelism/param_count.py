"""A transformer's parameter count from its shape (``spec.model``), total and active.

The matrices of a decoder-only transformer, per layer with hidden size ``h``, ``a`` query heads of
width ``d`` (``headDim``, else ``h / a``) and ``k`` key/value heads:

* attention: Q ``h x a d``, K and V ``h x k d`` each, the output ``a d x h``; with multi-head latent
  attention (DeepSeek V3) the low-rank projections instead: Q ``h x r_q`` + ``r_q x a (d_nope + d_rope)``
  (or ``h x a (d_nope + d_rope)`` without a query rank), KV ``h x (r_kv + d_rope)`` +
  ``r_kv x a (d_nope + d_v)``, the output ``a d_v x h``, and a norm of each rank;
* MLP of intermediate width ``f``: 3 ``h f`` when gated (SwiGLU, GeGLU: gate, up and down), else 2 ``h f``;
* mixture of experts: ``E`` routed experts and ``S`` shared ones of width ``f_e``, each an MLP, plus the
  router ``h x E``; the first ``denseLayers`` layers have a dense MLP of ``f`` instead;
* two norms of ``h`` (before attention and before the MLP); one more after the last layer;

plus the embedding ``v x h`` and, unless tied, an output layer of the same size. Left out: biases
(Qwen's q/k/v biases, under 0.01%), Gemma 2's two extra norms per layer (0.004%), and whatever a
model adds outside the layers (DeepSeek V3's multi-token-prediction module, 14B, is outside its
stated 671B too). Every preset is within 1% of its published count (tests/explain/test_model_presets.py).

The active count (what one token goes through, for compute) replaces ``E`` by the routed experts
per token. Memory is the total: every expert's weights, gradients and optimizer state are stored.
"""

from __future__ import annotations

from trainspec.dsl.record import Record
from trainspec.dsl.spec.parallelism import TransformerModel

#: How far a written count may be from the shape's before TS460 says so: 5%. What the formula
#: leaves out is below 0.2% on every preset; names round (Qwen2.5-7B is 7.6B: 8% above its name,
#: and a spec saying 7B should hear that); and the planner keeps 10% of a GPU's memory free, so a
#: count off by more than half of that eats the headroom. A wrong shape (GELU for SwiGLU, a missed
#: expert block, a layer count typo) moves the count by far more.
TOLERANCE = 0.05


class ParameterCount(Record):
    """The parameters of a shape: ``total`` (stored, for memory) and ``active`` (per token, for compute)."""

    total: int
    active: int


def computable(model: TransformerModel) -> bool:
    """Whether the shape says enough to count: the vocabulary and the width of every MLP."""
    if model.vocabulary is None or model.layers is None or model.hidden_size is None:
        return False
    dense = model.layers if model.experts is None else (model.dense_layers or 0)
    expert_width = model.moe_ffn_hidden_size or model.ffn_hidden_size
    if dense and model.ffn_hidden_size is None:
        return False
    return model.experts is None or expert_width is not None


def count(model: TransformerModel) -> ParameterCount | None:
    """The shape's parameter count; None when :func:`computable` is false."""
    if not computable(model):
        return None
    h = model.hidden_size or 0
    layers = model.layers or 0
    vocabulary = model.vocabulary or 0
    per_matrix = 3 if model.gated else 2
    attention = _attention(model)
    norms = 2 * h
    experts = model.experts
    dense = layers if experts is None else (model.dense_layers or 0)
    dense_mlp = per_matrix * h * (model.ffn_hidden_size or 0)
    total = active = dense * (attention + norms + dense_mlp)
    if experts is not None:
        expert = per_matrix * h * (model.moe_ffn_hidden_size or model.ffn_hidden_size or 0)
        shared = (model.shared_experts or 0) * expert
        base = attention + norms + h * experts + shared  # the router: one logit per expert
        moe_layers = layers - dense
        total += moe_layers * (base + experts * expert)
        active += moe_layers * (base + (model.experts_per_token or 1) * expert)
    embeddings = vocabulary * h * (1 if model.tied_embeddings else 2) + h  # + the final norm
    return ParameterCount(total + embeddings, active + embeddings)


def _attention(model: TransformerModel) -> int:
    h = model.hidden_size or 0
    heads = model.attention_heads or 1
    mla = model.latent_attention
    if mla is None:
        width = model.head_width
        kv = model.kv_heads or heads
        return 2 * h * heads * width + 2 * h * kv * width
    qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    rank = mla.q_lora_rank
    query = h * heads * qk if rank is None else h * rank + rank + rank * heads * qk
    key_value = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank
    key_value += mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
    return query + key_value + heads * mla.v_head_dim * h


def differs(given: int, computed: int) -> bool:
    """Whether ``given`` is more than :data:`TOLERANCE` away from ``computed`` (relative to the computed)."""
    return abs(given - computed) > TOLERANCE * computed


def billions(value: int) -> str:
    """``70.55B``: two decimals, enough to tell a rounded name (70B) from the count."""
    if value >= 10**9:
        return f"{value / 10**9:.2f}B"
    return f"{value / 10**6:.1f}M"


__all__ = ["TOLERANCE", "ParameterCount", "billions", "computable", "count", "differs"]
