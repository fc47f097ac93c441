"""Published training runs: each layout as its team ran it must come out as fitting on its GPUs, and
the layout the planner recommends for the same model and GPUs must fit too.

Every row names its source. Where a paper leaves a number out, the row says what was assumed, always
the side that needs more memory (micro-batch 1 is the least any run uses; a ZeRO stage lower than
the one used). docs/parallelism.md shows the planner's figure for each row beside the paper's.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import pytest

from trainspec.compiler.parallelism.inputs import Cluster, PlannerInputs, Shape, arch_for
from trainspec.compiler.parallelism.layouts import Layout, structural_problems
from trainspec.compiler.parallelism.memory import HEADROOM, estimate
from trainspec.compiler.parallelism.recommend import plan_layouts

GIB = 2**30


@dataclass(frozen=True)
class Run:
    name: str
    source: str
    parameters: int
    shape: Shape
    gpus: int
    layout: Layout
    gpu_memory: int = 80 * GIB  # A100 80GB and H100 80GB alike


def gpt(layers: int, hidden: int, heads: int, batch: int | None, micro: int = 1, vocab: int = 51200) -> Shape:
    """A GPT-style layer: multi-head attention, 4h GeLU MLP with dropout, sequence 2048."""
    return Shape(layers, hidden, heads, heads, 2048, micro, batch, vocab)


MEGATRON = "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters, Table 1"
KORTHIKANTI = "Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models, Table 3"
LLAMA3 = "Llama Team 2024, The Llama 3 Herd of Models, Table 4 and section 3.3.2"
L405 = {
    "layers": 126,
    "hidden": 16384,
    "heads": 128,
    "kv_heads": 8,
    "vocabulary": 128256,
    "ffn_hidden": 53248,
    "gated_mlp": True,
}

RUNS = [
    # Megatron-LM 2021 (before sequence parallelism): full activation recomputation, no ZeRO; micro-batch 1
    # assumed (the table gives the global batch only).
    Run("GPT 145.6B", MEGATRON, 145_600_000_000, gpt(80, 12288, 96, 2304), 1536, Layout(8, 8, 24, 0, "full", sp=False)),
    Run(
        "GPT 310.1B", MEGATRON, 310_100_000_000, gpt(96, 16384, 128, 2160), 1920, Layout(8, 16, 15, 0, "full", sp=False)
    ),
    Run(
        "GPT 529.6B", MEGATRON, 529_600_000_000, gpt(105, 20480, 128, 2520), 2520, Layout(8, 35, 9, 0, "full", sp=False)
    ),
    Run(
        "GPT 1008B",
        MEGATRON,
        1_008_000_000_000,
        gpt(128, 25600, 160, 3072),
        3072,
        Layout(8, 64, 6, 0, "full", sp=False),
    ),
    # Korthikanti 2022: sequence parallelism + selective recomputation, one replica.
    Run("GPT 22B", KORTHIKANTI, 22_000_000_000, gpt(48, 6144, 64, 4, micro=4), 8, Layout(8, 1, 1, 0, "selective")),
    Run("GPT-3 175B", KORTHIKANTI, 175_000_000_000, gpt(96, 12288, 96, 64), 64, Layout(8, 8, 1, 0, "selective")),
    Run("MT-NLG 530B", KORTHIKANTI, 530_000_000_000, gpt(105, 20480, 128, 280), 280, Layout(8, 35, 1, 0, "selective")),
    Run("GPT 1T", KORTHIKANTI, 1_000_000_000_000, gpt(128, 25600, 160, 512), 512, Layout(8, 64, 1, 0, "selective")),
    # Llama 3 405B: 8K pre-training without activation checkpointing (FlashAttention: selective in these
    # terms), the first and last stages one layer short; Meta's FSDP shards gradients too, ZeRO-1 assumed
    # here (more memory). 16M-token batches = 2048 sequences of 8192.
    Run(
        "Llama 3 405B, 8K",
        LLAMA3,
        405_853_388_800,
        Shape(sequence=8192, micro_batch=1, global_batch=2048, **L405),
        16384,
        Layout(8, 16, 128, 1, "selective", first=7, last=7),
    ),
    # ... and the long-context stage: 128K sequences with context parallelism 16 (same 16M-token batches).
    Run(
        "Llama 3 405B, 128K",
        LLAMA3,
        405_853_388_800,
        Shape(sequence=131072, micro_batch=1, global_batch=128, **L405),
        16384,
        Layout(8, 16, 8, 1, "selective", cp=16, first=7, last=7),
    ),
    # BLOOM 176B (BigScience 2022, BLOOM paper section 3.4; Megatron-DeepSpeed): 48 nodes of 8 A100 80GB,
    # TP 4 x PP 12 x DP 8, ZeRO-1, bf16, micro-batch 2, global batch 2048, full recomputation; 70 layers
    # on 12 stages with the embeddings counted as layers (5 on the first and last, 6 elsewhere).
    Run(
        "BLOOM 176B",
        "BigScience 2022, BLOOM: A 176B-Parameter Open-Access Multilingual Language Model, section 3.4",
        176_247_271_424,
        gpt(70, 14336, 112, 2048, micro=2, vocab=250880),
        384,
        Layout(4, 12, 8, 1, "full", first=5, last=5, sp=False),
    ),
    # OPT-175B (Zhang et al. 2022, section 2.3): 992 A100 80GB, Megatron TP 8 with FSDP over 124 replicas,
    # activation checkpointing; micro-batch 1 assumed.
    Run(
        "OPT-175B",
        "Zhang et al. 2022, OPT: Open Pre-trained Transformer Language Models, section 2.3",
        175_000_000_000,
        gpt(96, 12288, 96, None, vocab=50272),
        992,
        Layout(8, 1, 124, 3, "full", sp=False),
    ),
]


def _inputs(run: Run) -> PlannerInputs:
    arch = arch_for(run.parameters, Fraction(2), "adamw", shape=run.shape)
    return PlannerInputs(arch, Cluster(world=run.gpus, gpus_per_node=8, gpu_memory=run.gpu_memory))


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_the_published_layout_fits(run: Run) -> None:
    inputs = _inputs(run)
    lay = run.layout
    assert lay.tp * lay.cp * lay.pp * lay.dp == run.gpus, "the row's degrees are its GPUs"
    assert structural_problems(lay.tp, lay.pp, lay.dp, run.shape, inputs.cluster, lay) == []
    memory = estimate(inputs.arch, lay)
    assert memory.fits(run.gpu_memory), (
        f"{run.name}: {memory.total / 1e9:.1f} GB per GPU, over {run.gpu_memory * HEADROOM / 1e9:.1f} GB"
    )


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_the_recommended_layout_fits(run: Run) -> None:
    plan = plan_layouts(_inputs(run))
    assert plan.chosen is not None and plan.chosen.fits, plan.reasons


def test_docs_show_the_planners_figures() -> None:
    from pathlib import Path

    from trainspec.compiler.sizing import human_bytes

    docs = (Path(__file__).resolve().parents[2] / "docs" / "parallelism.md").read_text(encoding="utf-8")
    for run in RUNS:
        inputs = _inputs(run)
        memory = estimate(inputs.arch, run.layout)
        chosen = plan_layouts(inputs).chosen
        assert chosen is not None
        line = next(line for line in docs.splitlines() if line.startswith(f"| {run.name} ("))
        figure = f"{human_bytes(memory.state)} + {human_bytes(memory.activations or 0)} = {human_bytes(memory.total)}"
        assert f"| {run.layout.describe()} | {figure} |" in line, line
        assert f"| {chosen.layout.describe()} ({human_bytes(chosen.memory.total)}) |" in line, line
