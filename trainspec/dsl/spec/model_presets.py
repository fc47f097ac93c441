"""Published shapes of common open models: ``model: {preset: llama3-70b, sequenceLength: 8192}``.

Each entry holds the architecture numbers of one released model as its ``config.json`` on
Hugging Face and its paper give them, keyed by the Python names of
:class:`~trainspec.dsl.spec.parallelism.TransformerModel`'s fields. A spec's own fields override
a preset's one by one. ``sequenceLength`` is never taken from a preset: the context window a model
supports (``context`` here, shown in hints and docs) is not the length a run trains at, and the
activation memory grows with it.

``published`` is the parameter count its authors state; ``tests/explain/test_model_presets.py``
checks that the count computed from each shape is within 1% of it (and ``active``, a mixture of
experts' parameters per token, within 2%).

Kept to data: the names are read when the spec's JSON Schema is built (an ``enum`` that editors
complete), so importing this module costs a few dict literals and nothing else.
"""

from __future__ import annotations

from typing import Annotated, Any

from trainspec.dsl.framework.measures import fail
from trainspec.dsl.framework.types import _PlainStr
from trainspec.dsl.record import Record


class Preset(Record):
    """One published model: its shape (TransformerModel field names), stated size, context and source."""

    shape: dict[str, Any]
    published: str
    context: int
    source: str
    #: A mixture of experts' stated parameters per token.
    active: str | None = None


# Llama 3 (8B, 70B) and 3.1 (8B, 70B, 405B): "The Llama 3 Herd of Models", Dubey et al. 2024,
# Table 3 (layers, model dimension, FFN dimension, heads, KV heads), and the config.json of
# meta-llama/Meta-Llama-3-8B, -70B, Llama-3.1-405B (vocab_size 128256, tie_word_embeddings false).
# 3.1 has the shapes of 3 with a 128K context (rope scaling); both were pretrained at 8192 tokens.
_LLAMA3_8B = {
    "layers": 32,
    "hidden_size": 4096,
    "attention_heads": 32,
    "kv_heads": 8,
    "ffn_hidden_size": 14336,
    "vocabulary": 128256,
}
_LLAMA3_70B = {
    "layers": 80,
    "hidden_size": 8192,
    "attention_heads": 64,
    "kv_heads": 8,
    "ffn_hidden_size": 28672,
    "vocabulary": 128256,
}
_LLAMA3_405B = {
    "layers": 126,
    "hidden_size": 16384,
    "attention_heads": 128,
    "kv_heads": 8,
    "ffn_hidden_size": 53248,
    "vocabulary": 128256,
}
_LLAMA3 = "Dubey et al. 2024 (The Llama 3 Herd of Models), Table 3; meta-llama config.json"
_LLAMA31 = "Dubey et al. 2024, Table 3; meta-llama/Llama-3.1 config.json (128K context)"

# Qwen 2.5: "Qwen2.5 Technical Report", Qwen Team 2024, Table 1, and the config.json of
# Qwen/Qwen2.5-7B, -14B, -32B, -72B (vocab_size 152064; the 7B and larger untie the embeddings).
# The q/k/v projections carry biases (under 0.01% of the count; not counted). Stated sizes: the
# model cards' "Number of Parameters".
_QWEN = "Qwen Team 2024 (Qwen2.5 Technical Report), Table 1; Qwen/Qwen2.5 config.json"

PRESETS: dict[str, Preset] = {
    "llama3-8b": Preset(_LLAMA3_8B, "8.03B", 8192, _LLAMA3),
    "llama3-70b": Preset(_LLAMA3_70B, "70.6B", 8192, _LLAMA3),
    # Released as Llama 3.1 405B; the paper calls it Llama 3 405B.
    "llama3-405b": Preset(_LLAMA3_405B, "405.9B", 131072, _LLAMA31),
    "llama3.1-8b": Preset(_LLAMA3_8B, "8.03B", 131072, _LLAMA31),
    "llama3.1-70b": Preset(_LLAMA3_70B, "70.6B", 131072, _LLAMA31),
    "llama3.1-405b": Preset(_LLAMA3_405B, "405.9B", 131072, _LLAMA31),
    # "Mistral 7B", Jiang et al. 2023, Table 1 (dim 4096, 32 layers, head_dim 128, hidden_dim 14336,
    # 32 heads, 8 KV heads, vocab 32000); mistralai/Mistral-7B-v0.1 config.json. 7.24B per its card.
    "mistral-7b": Preset(
        {
            "layers": 32,
            "hidden_size": 4096,
            "attention_heads": 32,
            "kv_heads": 8,
            "ffn_hidden_size": 14336,
            "vocabulary": 32000,
        },
        "7.24B",
        8192,
        "Jiang et al. 2023 (Mistral 7B), Table 1; mistralai/Mistral-7B-v0.1 config.json",
    ),
    # "Mixtral of Experts", Jiang et al. 2024, Table 1: Mistral 7B's attention, 8 experts of
    # hidden_dim 14336 in every layer, top-2 routing, 32K context; 46.7B total, 12.9B active per
    # token (the paper's "47B" and "13B", stated exactly in Mistral's announcement).
    "mixtral-8x7b": Preset(
        {
            "layers": 32,
            "hidden_size": 4096,
            "attention_heads": 32,
            "kv_heads": 8,
            "ffn_hidden_size": 14336,
            "vocabulary": 32000,
            "experts": 8,
            "experts_per_token": 2,
        },
        "46.7B",
        32768,
        "Jiang et al. 2024 (Mixtral of Experts), Table 1; mistralai/Mixtral-8x7B-v0.1 config.json",
        active="12.9B",
    ),
    # mistralai/Mixtral-8x22B-v0.1 config.json (hidden 6144, 56 layers, 48 heads, 8 KV heads,
    # intermediate 16384, 8 local experts, top-2, vocab 32000, 64K context); Mistral's
    # announcement: 141B total, 39B active.
    "mixtral-8x22b": Preset(
        {
            "layers": 56,
            "hidden_size": 6144,
            "attention_heads": 48,
            "kv_heads": 8,
            "ffn_hidden_size": 16384,
            "vocabulary": 32000,
            "experts": 8,
            "experts_per_token": 2,
        },
        "141B",
        65536,
        "mistralai/Mixtral-8x22B-v0.1 config.json; Mistral AI's announcement (141B total, 39B active)",
        active="39B",
    ),
    "qwen2.5-7b": Preset(
        {
            "layers": 28,
            "hidden_size": 3584,
            "attention_heads": 28,
            "kv_heads": 4,
            "ffn_hidden_size": 18944,
            "vocabulary": 152064,
        },
        "7.61B",
        131072,
        _QWEN,
    ),
    "qwen2.5-14b": Preset(
        {
            "layers": 48,
            "hidden_size": 5120,
            "attention_heads": 40,
            "kv_heads": 8,
            "ffn_hidden_size": 13824,
            "vocabulary": 152064,
        },
        "14.7B",
        131072,
        _QWEN,
    ),
    "qwen2.5-32b": Preset(
        {
            "layers": 64,
            "hidden_size": 5120,
            "attention_heads": 40,
            "kv_heads": 8,
            "ffn_hidden_size": 27648,
            "vocabulary": 152064,
        },
        "32.5B",
        131072,
        _QWEN,
    ),
    "qwen2.5-72b": Preset(
        {
            "layers": 80,
            "hidden_size": 8192,
            "attention_heads": 64,
            "kv_heads": 8,
            "ffn_hidden_size": 29568,
            "vocabulary": 152064,
        },
        "72.7B",
        131072,
        _QWEN,
    ),
    # "Gemma 2: Improving Open Language Models at a Practical Size", Gemma Team 2024, Tables 1-2,
    # and google/gemma-2-9b, -27b config.json: head_dim 256 (9B) and 128 (27B), which is not
    # hidden / heads; GeGLU (gated); tied embeddings; vocab 256000; 8K context. Table 2 states
    # 917,504,000 + 8,324,201,984 (9B) and 1,179,648,000 + 26,047,480,320 (27B) parameters.
    "gemma2-9b": Preset(
        {
            "layers": 42,
            "hidden_size": 3584,
            "attention_heads": 16,
            "kv_heads": 8,
            "head_dim": 256,
            "ffn_hidden_size": 14336,
            "vocabulary": 256000,
            "tied_embeddings": True,
        },
        "9.24B",
        8192,
        "Gemma Team 2024 (Gemma 2), Tables 1-2; google/gemma-2-9b config.json",
    ),
    "gemma2-27b": Preset(
        {
            "layers": 46,
            "hidden_size": 4608,
            "attention_heads": 32,
            "kv_heads": 16,
            "head_dim": 128,
            "ffn_hidden_size": 36864,
            "vocabulary": 256000,
            "tied_embeddings": True,
        },
        "27.2B",
        8192,
        "Gemma Team 2024 (Gemma 2), Tables 1-2; google/gemma-2-27b config.json",
    ),
    # "DeepSeek-V3 Technical Report", DeepSeek-AI 2024, §4.2, and deepseek-ai/DeepSeek-V3
    # config.json: 61 layers, hidden 7168, 128 heads with multi-head latent attention (q_lora_rank
    # 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128), the first
    # 3 layers dense (intermediate 18432), then 256 routed experts + 1 shared of 2048, top-8, vocab
    # 129280, untied; 671B total, 37B active. The multi-token-prediction module (14B more in the
    # released weights) is not part of the 671B and not counted. MLA's K and V are per head after
    # decompression, so kvHeads is the head count.
    "deepseek-v3": Preset(
        {
            "layers": 61,
            "hidden_size": 7168,
            "attention_heads": 128,
            "kv_heads": 128,
            "ffn_hidden_size": 18432,
            "vocabulary": 129280,
            "experts": 256,
            "experts_per_token": 8,
            "shared_experts": 1,
            "moe_ffn_hidden_size": 2048,
            "dense_layers": 3,
            "latent_attention": {
                "qLoraRank": 1536,
                "kvLoraRank": 512,
                "qkNopeHeadDim": 128,
                "qkRopeHeadDim": 64,
                "vHeadDim": 128,
            },
        },
        "671B",
        131072,
        "DeepSeek-AI 2024 (DeepSeek-V3 Technical Report), §4.2; deepseek-ai/DeepSeek-V3 config.json",
        active="37B",
    ),
}


def _preset_name(raw: Any) -> str:
    """A known preset's name; an unknown one fails with the closest names."""
    if not isinstance(raw, str):
        raise fail("ts_value", f"a model preset is a name such as llama3-70b, got {raw!r}")
    if raw in PRESETS:
        return raw
    import difflib  # only on the error path: a valid spec never needs it

    close = difflib.get_close_matches(raw.lower(), list(PRESETS), n=3, cutoff=0.5)
    exc = fail("ts_value", f"unknown model preset {raw!r}")
    assert exc.ctx is not None
    if close:
        shown = ", ".join(repr(name) for name in close[:-1]) + (" or " if len(close) > 1 else "") + repr(close[-1])
        exc.ctx["hint"] = f"did you mean {shown}? (docs/parallelism.md lists every preset)"
    else:
        exc.ctx["hint"] = f"presets: {', '.join(PRESETS)}; or leave preset out and give the shape"
    raise exc


#: A preset's name, one of :data:`PRESETS` (the JSON Schema lists them for editors).
PresetName = Annotated[
    str,
    _PlainStr(
        _preset_name,
        {
            "type": "string",
            "enum": list(PRESETS),
            "description": "A published model shape (docs/parallelism.md lists each with its source).",
        },
    ),
]


def preset_shape(name: Any) -> dict[str, Any] | None:
    """The shape of the preset ``name`` (Python field names), or None for no or an unknown name."""
    preset = PRESETS.get(name) if isinstance(name, str) else None
    return dict(preset.shape) if preset is not None else None


__all__ = ["PRESETS", "Preset", "PresetName", "preset_shape"]
