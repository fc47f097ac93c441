"""The spec blocks the parallelism planner reads: a job's ``model`` and ``parallelism``, and bandwidths.

``model`` (job level) describes the transformer being trained; it is defined in
:mod:`trainspec.dsl.spec.transformer_model` (presets, experts, the parameter count's inputs) and
imported from here. The dtype and optimizer always come from ``checkpoint.model`` when it is
there (bf16 with AdamW otherwise).

``parallelism`` pins all or part of a layout (TP, PP, DP, ZeRO stage or FSDP, recomputation,
the distributed optimizer); the planner checks a pin and fills in what it leaves open.

A :data:`Bandwidth` is written as a data sheet writes it: ``900GB/s`` (gigabytes) or ``400Gb/s``
(gigabits); here, unlike in Kubernetes quantities, ``B`` and ``b`` differ. It is kept as written and read in bytes
per second by :func:`parse_bandwidth`.
"""

from __future__ import annotations

import enum
import re
from fractions import Fraction
from typing import Annotated, Any

from trainspec.dsl.framework.modeling import Model, field
from trainspec.dsl.framework.types import Count, StrictBool, _PlainStr, fail
from trainspec.dsl.spec.transformer_model import MAX_LAYERS, LatentAttention, TransformerModel

#: A parallel degree (TP, PP, DP) is at most the largest world size (nodes x processes per node).
MAX_DEGREE = 10_000 * 256
MAX_PORTS = 64

# Compiled on first use (re caches it): start-up does not pay for a pattern few specs need.
_BANDWIDTH_RE = r"^(?P<num>[0-9]{1,7}(?:\.[0-9]{1,6})?)\s*(?P<prefix>[MGT])(?P<unit>[Bb])/s$"
_PREFIX = {"M": 10**6, "G": 10**9, "T": 10**12}
BANDWIDTH_PATTERN = r"^[0-9]{1,7}(\.[0-9]{1,6})?\s*[MGT][Bb]/s$"


def parse_bandwidth(raw: Any) -> Fraction:
    """``900GB/s`` -> 900e9 bytes/s; ``400Gb/s`` -> 50e9 bytes/s (``b`` is a bit, ``B`` a byte)."""
    if isinstance(raw, bool) or not isinstance(raw, str):
        raise fail("ts_value", f"a bandwidth is a text such as 900GB/s or 400Gb/s, got {raw!r}")
    match = re.match(_BANDWIDTH_RE, raw.strip())
    if match is None:
        raise fail(
            "ts_value",
            f"{raw!r} is not a bandwidth (examples: 900GB/s for NVLink, 400Gb/s for an "
            "InfiniBand NDR port; B is a byte, b a bit)",
        )
    value = Fraction(match["num"]) * _PREFIX[match["prefix"]]
    if value <= 0:
        raise fail("ts_value", f"{raw!r}: a bandwidth must be greater than 0")
    return value / 8 if match["unit"] == "b" else value


def _bandwidth_text(raw: Any) -> str:
    """The text of a valid bandwidth (kept as written: specs dump back to what users wrote)."""
    parse_bandwidth(raw)
    return str(raw).strip()


#: A bandwidth as written, ``900GB/s`` or ``400Gb/s``; :func:`parse_bandwidth` gives bytes per second.
Bandwidth = Annotated[
    str,
    _PlainStr(
        _bandwidth_text,
        {
            "type": "string",
            "pattern": BANDWIDTH_PATTERN,
            "description": "A bandwidth such as 900GB/s (gigabytes) or 400Gb/s (gigabits) per second.",
        },
    ),
]


class Recompute(str, enum.Enum):
    """Activation recomputation (Korthikanti et al. 2022)."""

    NONE = "none"  # keep every activation
    SELECTIVE = "selective"  # recompute the attention scores only (the 5as/h term); FlashAttention does the same
    FULL = "full"  # keep each layer's input only, recompute the layer in the backward pass


class ParallelFramework(str, enum.Enum):
    """Training frameworks whose own parallelism flags trainspec can spell (docs/parallelism.md)."""

    TORCHTITAN = "torchtitan"
    MEGATRON = "megatron"
    NEMO = "nemo"
    DEEPSPEED = "deepspeed"


class Parallelism(Model):
    """A pinned parallel layout, in full or in part; the planner checks it and fills in the rest."""

    tp: Count | None = field(
        default=None, ge=1, le=MAX_DEGREE, description="Tensor-parallel degree (inside a node, over NVLink)."
    )
    pp: Count | None = field(
        default=None, ge=1, le=MAX_DEGREE, description="Pipeline-parallel degree (stages; must divide model.layers)."
    )
    dp: Count | None = field(
        default=None, ge=1, le=MAX_DEGREE, description="Data-parallel degree (replicas): world size / (tp x pp)."
    )
    zero_stage: Count | None = field(
        default=None,
        ge=0,
        le=3,
        description="ZeRO stage over the data-parallel replicas: 0 none, 1 optimizer state, 2 + gradients, "
        "3 + weights (what FSDP full sharding does).",
    )
    fsdp: StrictBool = field(default=False, description="PyTorch FSDP full sharding: ZeRO stage 3 by another name.")
    distributed_optimizer: StrictBool = field(
        default=False,
        description="Megatron's distributed optimizer: the optimizer state sharded over DP, i.e. ZeRO stage 1.",
    )
    recompute: Recompute | None = field(default=None, description="Activation recomputation: none, selective or full.")
    cp: Count | None = field(
        default=None,
        ge=1,
        le=MAX_DEGREE,
        description="Context-parallel degree: each sequence split over this many ranks (ring attention), for long "
        "sequences; must divide model.sequenceLength. Default 1.",
    )
    sequence_parallel: StrictBool | None = field(
        default=None,
        description="Sequence parallelism with TP (the norms' and dropouts' activations split over the TP ranks "
        "too). Default: on, as Megatron, NeMo and torchtitan run TP; false when your framework does not.",
    )
    first_stage_layers: Count | None = field(
        default=None,
        ge=1,
        le=MAX_LAYERS,
        description="Layers of the first pipeline stage when it holds fewer than the others (it also holds the "
        "embedding; Megatron's --decoder-first-pipeline-num-layers). Needs lastStageLayers and pp.",
    )
    last_stage_layers: Count | None = field(
        default=None,
        ge=1,
        le=MAX_LAYERS,
        description="Layers of the last pipeline stage when it holds fewer than the others (it also holds the "
        "output layer; --decoder-last-pipeline-num-layers). Needs firstStageLayers and pp.",
    )
    virtual_stages: Count | None = field(
        default=None,
        ge=1,
        le=MAX_LAYERS,
        description="Model chunks per pipeline rank (the interleaved 1F1B schedule): a smaller bubble for more "
        "activation memory and traffic. Needs pp > 1. Default 1.",
    )
    framework: ParallelFramework | None = field(
        default=None,
        description="torchtitan, megatron, nemo or deepspeed: also emit that framework's flags for the layout in "
        "TRAINSPEC_PARALLEL_ARGS (the layout's TRAINSPEC_* variables are always set).",
    )

    @property
    def pinned_zero(self) -> int | None:
        """The ZeRO stage this pin asks for: zeroStage, else 3 for fsdp, 1 for distributedOptimizer."""
        if self.zero_stage is not None:
            return self.zero_stage
        if self.fsdp:
            return 3
        if self.distributed_optimizer:
            return 1
        return None

    def _check(self) -> None:
        if self.fsdp and self.zero_stage not in (None, 3):
            raise fail("ts_value", f"fsdp is ZeRO stage 3, but zeroStage is {self.zero_stage}")
        if self.distributed_optimizer and self.zero_stage not in (None, 1):
            raise fail("ts_value", f"distributedOptimizer is ZeRO stage 1, but zeroStage is {self.zero_stage}")
        if self.fsdp and self.distributed_optimizer:
            raise fail("ts_value", "fsdp (ZeRO-3) and distributedOptimizer (ZeRO-1) are different stages: choose one")
        if (self.first_stage_layers is None) != (self.last_stage_layers is None):
            raise fail("ts_value", "firstStageLayers and lastStageLayers go together (an uneven split names both)")
        if self.first_stage_layers is not None and self.pp is None:
            raise fail("ts_value", "firstStageLayers and lastStageLayers need pp: the stages they shorten")
        if self.virtual_stages is not None and self.virtual_stages > 1 and self.pp in (None, 1):
            raise fail("ts_value", "virtualStages needs pp > 1: it interleaves pipeline stages")


__all__ = [
    "Bandwidth",
    "LatentAttention",
    "ParallelFramework",
    "Parallelism",
    "Recompute",
    "TransformerModel",
    "parse_bandwidth",
]
