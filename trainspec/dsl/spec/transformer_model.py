"""The job's ``model`` block: the transformer a job trains, for the parallelism planner.

Enough for the activation formulas of Korthikanti et al. 2022, the validity rules of tensor and
pipeline parallelism, and the parameter count (docs/parallelism.md, "Fewer numbers to type"):
layers, widths, heads, the MLP, the embeddings, experts and latent attention. ``preset`` fills
the shape from a published model (:mod:`trainspec.dsl.spec.model_presets`). Imported through
:mod:`trainspec.dsl.spec.parallelism` (and ``trainspec``) like the rest of the planner's blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainspec.dsl.errors import error_dict
from trainspec.dsl.framework.fields import to_camel
from trainspec.dsl.framework.modeling import Model, field
from trainspec.dsl.framework.types import Count, ParamCount, StrictBool, fail
from trainspec.dsl.spec.model_presets import PresetName, preset_shape

#: Bounds of the architecture numbers: far above any model trained today, far below int overflow
#: in the activation products (s x b x h x a stays below 2^63).
MAX_LAYERS = 10_000
MAX_HIDDEN = 1_000_000
MAX_HEADS = 10_000
MAX_SEQUENCE = 10_000_000
MAX_MICRO_BATCH = 100_000
MAX_GLOBAL_BATCH = 100_000_000
MAX_VOCABULARY = 100_000_000
#: Experts per MoE layer: DeepSeek V3 has 256; research models a few thousand.
MAX_EXPERTS = 100_000


class LatentAttention(Model):
    """Multi-head latent attention (DeepSeek V2/V3): queries and keys/values through low-rank projections.

    Names as in the model's ``config.json``. Only the parameter count reads it; the activation and
    tensor-parallel figures treat the attention as multi-head attention over ``attentionHeads``.
    """

    q_lora_rank: Count | None = field(
        default=None, ge=1, le=MAX_HIDDEN, description="Rank of the query projection (DeepSeek V3: 1536); none: full."
    )
    kv_lora_rank: Count = field(ge=1, le=MAX_HIDDEN, description="Rank of the key/value projection (DeepSeek V3: 512).")
    qk_nope_head_dim: Count = field(
        ge=1, le=MAX_HIDDEN, description="Per-head query/key width without rotary embedding (DeepSeek V3: 128)."
    )
    qk_rope_head_dim: Count = field(
        ge=1, le=MAX_HIDDEN, description="Per-head query/key width with rotary embedding (DeepSeek V3: 64)."
    )
    v_head_dim: Count = field(ge=1, le=MAX_HIDDEN, description="Per-head value width (DeepSeek V3: 128).")


#: The shape fields a model needs, from the spec or its preset (sequenceLength is always the spec's).
_SHAPE_REQUIRED = ("layers", "hidden_size", "attention_heads")
#: The fields that only mean something with experts.
_MOE_ONLY = ("experts_per_token", "shared_experts", "moe_ffn_hidden_size", "dense_layers")


class TransformerModel(Model):
    """The transformer a job trains, for the parallelism planner (``explain``) and its checks.

    ``preset`` fills every shape field the spec leaves out from a published model
    (:data:`~trainspec.dsl.spec.model_presets.PRESETS`) as if the spec had written it: the fields
    hold those values (and ``model_fields_set`` names them), so a dumped model validates back to
    itself. ``parameters`` left out is computed from the shape (``ffnHiddenSize`` and
    ``vocabulary`` needed; docs/parallelism.md).
    """

    preset: PresetName | None = field(
        default=None,
        description="A published model shape (llama3-70b, mixtral-8x7b, qwen2.5-72b, deepseek-v3, ...) that fills "
        "every shape field not written here; any field written here overrides it.",
    )
    parameters: ParamCount | None = field(
        default=None,
        description="Parameter count, e.g. 70B. Default: checkpoint.model.parameters, else computed from the shape "
        "(ffnHiddenSize and vocabulary needed); a count given here or there is checked against the shape's.",
    )
    layers: Count | None = field(
        default=None,
        ge=1,
        le=MAX_LAYERS,
        description="Transformer layers (Llama 3 70B: 80); required without a preset.",
    )
    hidden_size: Count | None = field(
        default=None,
        ge=1,
        le=MAX_HIDDEN,
        description="Hidden size h (Llama 3 70B: 8192); required without a preset.",
    )
    attention_heads: Count | None = field(
        default=None,
        ge=1,
        le=MAX_HEADS,
        description="Attention (query) heads a (Llama 3 70B: 64); required without a preset.",
    )
    kv_heads: Count | None = field(
        default=None,
        ge=1,
        le=MAX_HEADS,
        description="Key/value heads for grouped-query attention (Llama 3: 8); tensor parallel must divide them "
        "too. Default: attentionHeads.",
    )
    head_dim: Count | None = field(
        default=None,
        ge=1,
        le=MAX_HIDDEN,
        description="Width of one attention head where it is not hiddenSize / attentionHeads (Gemma 2 9B: 256).",
    )
    ffn_hidden_size: Count | None = field(
        default=None,
        ge=1,
        le=MAX_HIDDEN * 64,
        description="Width of the MLP's intermediate layer (Hugging Face intermediate_size; Llama 3 70B: 28672), "
        "for the parameter count.",
    )
    gated_mlp: StrictBool | None = field(
        default=None,
        description="The MLP is gated (SwiGLU, GeGLU: three matrices) rather than two (GELU). Default: true when "
        "ffnHiddenSize is given (every preset's MLP is gated); without it, GPT's 4h GELU MLP is assumed.",
    )
    tied_embeddings: StrictBool | None = field(
        default=None,
        description="The output layer shares the input embedding's weights (Gemma 2: true). Default: false.",
    )
    vocabulary: Count | None = field(
        default=None,
        ge=1,
        le=MAX_VOCABULARY,
        description="Vocabulary size v (Llama 3: 128256): the embeddings in the parameter count, and the output "
        "layer's logits (4sbv/t bytes on the last pipeline stage).",
    )
    experts: Count | None = field(
        default=None,
        ge=1,
        le=MAX_EXPERTS,
        description="Mixture of experts: routed experts per MoE layer (Mixtral: 8, DeepSeek V3: 256). Every expert "
        "is stored, so the memory figures use the total count.",
    )
    experts_per_token: Count | None = field(
        default=None,
        ge=1,
        le=MAX_EXPERTS,
        description="Routed experts each token goes through (Mixtral: 2): the active parameters. Default: 1.",
    )
    shared_experts: Count | None = field(
        default=None,
        ge=0,
        le=MAX_EXPERTS,
        description="Experts every token goes through besides the routed ones (DeepSeek V3: 1). Default: 0.",
    )
    moe_ffn_hidden_size: Count | None = field(
        default=None,
        ge=1,
        le=MAX_HIDDEN * 64,
        description="Intermediate width of one expert (DeepSeek V3: 2048). Default: ffnHiddenSize.",
    )
    dense_layers: Count | None = field(
        default=None,
        ge=0,
        le=MAX_LAYERS,
        description="Leading layers with a dense MLP of ffnHiddenSize instead of experts (DeepSeek V3: 3). Default: 0.",
    )
    latent_attention: LatentAttention | None = field(
        default=None,
        description="Multi-head latent attention (DeepSeek V3), for the parameter count.",
    )
    sequence_length: Count = field(
        ge=1,
        le=MAX_SEQUENCE,
        description="Tokens per training sequence s, e.g. 8192 (never taken from a preset: a model's context "
        "window is not the length a run trains at).",
    )
    micro_batch: Count = field(default=1, ge=1, le=MAX_MICRO_BATCH, description="Sequences per micro-batch b per GPU.")
    global_batch: Count | None = field(
        default=None,
        ge=1,
        le=MAX_GLOBAL_BATCH,
        description="Sequences per optimizer step (all replicas): gives the micro-batches per step, hence the "
        "pipeline bubble and per-step traffic. Default: unknown (traffic per micro-batch).",
    )

    if not TYPE_CHECKING:  # a framework hook: type checkers see the synthesized constructor

        def _fill(self, data: Mapping[Any, Any], loc: tuple[Any, ...], errors: list[dict[str, Any]]) -> bool:
            # The preset's values enter as if written, before the fields are validated: a missing
            # field is then reported as missing, a written one overrides the preset's.
            # A field written as null counts as not written (the preset fills it, or it is missing).
            shape = preset_shape(data.get("preset"))
            if shape is not None:
                merged = dict(data)
                for name, value in shape.items():
                    if merged.get(to_camel(name)) is None and merged.get(name) is None:
                        merged.pop(name, None)
                        merged[to_camel(name)] = value
                data = merged
            missing = False
            if shape is not None or data.get("preset") is None:  # an unknown preset is its own error
                for name in _SHAPE_REQUIRED:
                    if data.get(to_camel(name)) is None and data.get(name) is None:
                        errors.append(error_dict("required", (*loc, to_camel(name)), "Field required", data))
                        missing = True
            return super()._fill(data, loc, errors) and not missing

    @property
    def gated(self) -> bool:
        """Whether the MLP is gated: ``gatedMlp``, else whether the spec describes its MLP at all."""
        if self.gated_mlp is not None:
            return self.gated_mlp
        return self.ffn_hidden_size is not None or self.moe_ffn_hidden_size is not None

    @property
    def head_width(self) -> int:
        """One attention head's width: ``headDim``, else hiddenSize / attentionHeads."""
        return self.head_dim or (self.hidden_size or 0) // max(self.attention_heads or 1, 1)

    def _check(self) -> None:
        heads = self.attention_heads or 1
        kv = self.kv_heads
        if kv is not None and heads % kv:
            raise fail("ts_value", f"kvHeads ({kv}) must divide attentionHeads ({heads})")
        if self.head_dim is None and (self.hidden_size or 0) % heads:
            raise fail(
                "ts_value",
                f"attentionHeads ({heads}) must divide hiddenSize ({self.hidden_size}), or give headDim",
            )
        if self.experts is None:
            given = [to_camel(name) for name in _MOE_ONLY if getattr(self, name) is not None]
            if given:
                raise fail("ts_value", f"{', '.join(given)} only apply to a mixture of experts: add experts")
            return
        if self.experts_per_token is not None and self.experts_per_token > self.experts:
            raise fail(
                "ts_value",
                f"expertsPerToken ({self.experts_per_token}) is more than the {self.experts} experts",
            )
        if self.dense_layers is not None and self.dense_layers >= (self.layers or 0):
            raise fail(
                "ts_value", f"denseLayers ({self.dense_layers}) leaves none of the {self.layers} layers to experts"
            )


__all__ = ["LatentAttention", "TransformerModel"]
