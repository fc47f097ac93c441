"""The planner's numbers against hand-computed cases of the published formulas.

ZeRO paper (Rajbhandari et al. 2020) for model state, Korthikanti et al. 2022 (Table 2) for
activations; Llama 3 70B and 405B with their real shapes. Every expected figure below is worked
out by hand in the comment beside it, not by calling the code under test.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from trainspec.compiler.parallelism.inputs import (
    Arch,
    Cluster,
    PlannerInputs,
    Shape,
    arch_for,
)
from trainspec.compiler.parallelism.layouts import Layout
from trainspec.compiler.parallelism.memory import (
    activations,
    estimate,
    layer_activations,
    model_state,
)
from trainspec.compiler.parallelism.recommend import plan_layouts

GB = 10**9
GIB = 2**30
L70 = Shape(
    layers=80, hidden=8192, heads=64, kv_heads=8, sequence=8192, micro_batch=1, global_batch=128, vocabulary=128256
)
L405 = Shape(
    layers=126, hidden=16384, heads=128, kv_heads=8, sequence=8192, micro_batch=1, global_batch=512, vocabulary=128256
)


def arch(params: int, shape: Shape | None = None) -> Arch:
    return arch_for(params, Fraction(2), "adamw", shape=shape)


def h100(nodes: int) -> Cluster:
    return Cluster(
        world=nodes * 8,
        gpus_per_node=8,
        gpu_memory=80 * GIB,
        nvlink=Fraction(450 * GB),
        network=Fraction(400 * GB),
        network_name="InfiniBand",
    )


def test_mixed_precision_adam_is_16_bytes_per_parameter() -> None:
    a = arch(70 * GB)
    assert (a.weight_bytes, a.grad_bytes, a.k) == (2, 2, 12)  # bf16 weights, bf16 grads, fp32 master + m + v
    assert arch_for(7 * GB, Fraction(4), "adam").bytes_per_param == 16  # fp32: 4 + 4 + 8, no master copy
    assert arch_for(7 * GB, Fraction(2), "sgd").k == 8  # master 4 + momentum 4


@pytest.mark.parametrize(
    ("zero", "expected"),
    [
        (0, 120 * GB),  # (2 + 2 + 12) x 7.5B
        (1, 31_406_250_000),  # (2 + 2 + 12/64) x 7.5B = 31.4 GB
        (2, 16_640_625_000),  # (2 + 14/64) x 7.5B = 16.6 GB
        (3, 1_875_000_000),  # 16 x 7.5B / 64 = 1.9 GB
    ],
)
def test_zero_paper_figure_1_for_7_5b_on_64_gpus(zero: int, expected: int) -> None:
    # The ZeRO paper's own worked figure (Figure 1): 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
    assert sum(model_state(arch(7_500_000_000), 1, 1, 64, zero)) == expected


@pytest.mark.parametrize(
    ("zero", "expected"),
    [
        (0, 140 * GB),  # psi = 70B / 8 = 8.75B; 16 x 8.75B
        (1, 48_125_000_000),  # (4 + 12/8) x 8.75B: Megatron's distributed optimizer
        (2, 32_812_500_000),  # (2 + 14/8) x 8.75B
        (3, 17_500_000_000),  # 16 x 8.75B / 8
    ],
)
def test_70b_model_state_with_tp_8_and_dp_8(zero: int, expected: int) -> None:
    assert sum(model_state(arch(70 * GB), 8, 1, 8, zero)) == expected


GPT3 = Shape(layers=96, hidden=12288, heads=96, kv_heads=96, sequence=2048, micro_batch=1, vocabulary=51200)


def test_the_papers_gpt_layer_is_34_sbh_and_10_replicated_without_sequence_parallelism() -> None:
    sbh = 2048 * 1 * 12288  # 25,165,824
    # Korthikanti et al. 2022, Table 2: selective, TP 8 with SP: 34 sbh / t; without SP: sbh (10 + 24 / t).
    assert layer_activations(GPT3, 8, "selective") == 34 * sbh // 8 == 106_954_752
    assert layer_activations(GPT3, 8, "selective", sp=False) == 13 * sbh == 327_155_712
    # No recomputation adds the scores 5 a s / h = 5 x 96 x 2048 / 12288 = 80, split over t.
    assert layer_activations(GPT3, 8, "none") == (34 + 80) * sbh // 8
    # Full: the layer's input only: 2 sbh, over t with SP.
    assert layer_activations(GPT3, 8, "full", sp=False) == 2 * sbh
    assert layer_activations(GPT3, 8, "full") == 2 * sbh // 8


def test_70b_activations_per_layer_with_grouped_query_attention() -> None:
    sbh = 8192 * 1 * 8192  # 67,108,864
    # L70 has 8 KV heads for 64: K and V are 2 sbh x 8/64 each, so the attention keeps 7 + 0.5 (+1 dropout)
    # and the layer 34 - 3.5 = 30.5 sbh; the scores 5 x 64 x 8192 / 8192 = 320.
    assert layer_activations(L70, 8, "none") == sbh * 3505 // 80 == 2_940_207_104  # (30.5 + 320) / 8
    assert layer_activations(L70, 8, "selective") == sbh * 305 // 80 == 255_852_544  # 30.5 / 8
    assert layer_activations(L70, 8, "selective", sp=False) == sbh * 12_5625 // 10_000  # 10 + 20.5 / 8
    assert layer_activations(L70, 8, "full") == 2 * sbh // 8 == 16_777_216
    assert layer_activations(L70, 1, "none") == sbh * 3505 // 10 == 23_521_656_832


def test_a_gated_mlp_keeps_its_gate_up_and_activation_and_no_dropout() -> None:
    # Llama 3 70B's MLP: SwiGLU, intermediate 28672 = 3.5 h: 2 + 6 x 3.5 = 23 sbh; no dropout masks, so the
    # replicated part is 8 and the scores 2 a s / h (the softmax output only).
    llama = Shape(
        layers=80, hidden=8192, heads=64, kv_heads=8, sequence=8192, micro_batch=1, ffn_hidden=28672, gated_mlp=True
    )
    sbh = 8192 * 8192
    # selective: attention 2 + 0.5 + 2 = 4.5 split + the MLP's 21 split = 25.5; 8 replicated -> (25.5 + 8) / 8
    assert layer_activations(llama, 8, "selective") == sbh * 335 // 80
    assert layer_activations(llama, 8, "none") == sbh * (335 + 2 * 64 * 10) // 80  # + 2 x 64 x 8192 / 8192 = 128


def test_context_parallelism_divides_the_sequence() -> None:
    assert layer_activations(L70, 8, "selective", cp=2) == layer_activations(L70, 8, "selective") // 2


def test_70b_peak_activations_tp8_selective() -> None:
    # 80 layers x 255,852,544 + the output layer 4 s b h / t (1 + v / s) = 33,554,432 x 16.65625 = 558,891,008.
    assert activations(L70, Layout(8, 1, 8, 1, "selective")) == 80 * 255_852_544 + 558_891_008
    # The first of 2 stages holds 40 layers x 2 micro-batches in flight (1F1B) = as much as 80 layers.
    assert activations(L70, Layout(8, 2, 4, 1, "selective")) == 80 * 255_852_544
    # Full recomputation: 80 x 2 sbh / t kept, plus one layer's full activations while it is recomputed.
    assert activations(L70, Layout(8, 1, 8, 1, "full")) == 80 * 16_777_216 + 2_940_207_104 + 558_891_008
    # Interleaved with 2 virtual stages: the first stage's x (1 + (p - 1) / (p v)) = 1 + 1/4.
    assert activations(L70, Layout(8, 2, 4, 1, "selective", virtual=2)) == 80 * 255_852_544 * 5 // 4


def test_70b_recommended_layout_total() -> None:
    mem = estimate(arch(70 * GB, L70), Layout(8, 1, 8, 1, "selective"))
    assert (mem.weights, mem.gradients, mem.optimizer) == (17_500_000_000, 17_500_000_000, 13_125_000_000)
    assert mem.total == 48_125_000_000 + 21_027_094_528 == 69_152_094_528  # 69.2 GB of 85.9 GB
    assert mem.fits(80 * GIB) is True  # <= 90% of 80 GiB = 77.3 GB
    # Without recomputation it is 48.1 GB + 236 GB: far beyond the GPU.
    assert estimate(arch(70 * GB, L70), Layout(8, 1, 8, 1, "none")).fits(80 * GIB) is False


def test_405b_pinned_tp8_pp14_dp4_zero1_full_recompute() -> None:
    mem = estimate(arch(405 * GB, L405), Layout(8, 14, 4, 1, "full"))
    # The first stage: 9 layers + the input embedding. The embedding is v h = 128256 x 16384 = 2,101,346,304;
    # a layer (405B - 2 embeddings) / 126 = 3,180,931,011.05; the stage 30,729,725,403.4 over TP 8 = 3,841,215,675.4
    # per GPU: weights and gradients 2 bytes each, the optimizer 12 bytes / DP 4 (ZeRO-1), rounded up.
    assert (mem.weights, mem.gradients, mem.optimizer) == (7_682_431_351, 7_682_431_351, 11_523_647_027)
    # sbh = 8192 x 16384 = 134,217,728. First stage: 9 layers x 14 micro-batches in flight x 2 sbh / 8
    # = 4,227,858,432, plus one layer recomputed: sbh (30.25 + 320) / 8 = 5,876,219,904.
    assert mem.activations == 4_227_858_432 + 5_876_219_904
    assert mem.fits(80 * GIB) is True  # 37.0 GB


def test_405b_selective_does_not_fit_at_tp8_pp14() -> None:
    # 126 layer-equivalents x 30.25 sbh / 8 = 63.9 GB of activations on the first stage, + 26.9 GB of state.
    mem = estimate(arch(405 * GB, L405), Layout(8, 14, 4, 1, "selective"))
    assert mem.activations == 126 * 30_25 * 134_217_728 // 800 == 63_946_358_784
    assert mem.fits(80 * GIB) is False


def test_405b_does_not_fit_on_8_nodes_whatever_the_layout() -> None:
    plan = plan_layouts(PlannerInputs(arch(405 * GB, L405), h100(8)))
    assert plan.chosen is None and plan.fitting == 0
    # Even ZeRO-3 over all 64 GPUs holds 16 x 405B / 64 = 101.25 GB of model state per GPU.
    assert sum(model_state(arch(405 * GB), 1, 1, 64, 3)) == 101_250_000_000
    assert "no layout fits" in plan.reasons[0]


def test_70b_on_8_nodes_of_8_h100_recommends_tp_8_inside_the_node() -> None:
    plan = plan_layouts(PlannerInputs(arch(70 * GB, L70), h100(8)))
    assert plan.chosen is not None
    assert plan.chosen.layout == Layout(tp=8, pp=1, dp=8, zero=1, recompute="selective")
    assert plan.reasons[0].startswith("TP 8 within the node over NVLink, DP 8 across nodes over InfiniBand")
    tp, dp = plan.chosen.traffic
    assert (tp.axis, tp.link, tp.across_nodes) == ("TP", "NVLink", False)
    assert (dp.axis, dp.link, dp.across_nodes) == ("DP", "InfiniBand", True)
    # DP: 2 (d-1)/d x 2 bytes x 8.75B = 30.625 GB per GPU per step; at 400 GB/s per node / 8 GPUs: 0.6125 s.
    assert dp.bytes_per_gpu == 30_625_000_000 and dp.seconds == Fraction(6125, 10000)
    # TP: 8 (t-1)/t x 2 sbh bytes x 80 layers x 16 micro-batches (128 / (1 x 8)).
    assert tp.bytes_per_gpu == 7 * 2 * 67_108_864 * 80 * 16


def test_405b_on_56_nodes_recommends_pp_across_nodes() -> None:
    plan = plan_layouts(PlannerInputs(arch(405 * GB, L405), h100(56)))
    assert plan.chosen is not None
    lay = plan.chosen.layout
    assert lay.tp == 8 and lay.pp > 1
    pp = next(t for t in plan.chosen.traffic if t.axis == "PP")
    assert pp.across_nodes and pp.link == "InfiniBand"


def test_126_layers_on_16_stages_split_as_llama_3_did() -> None:
    # 126 + 2 = 128 = 16 x 8: the first and last stages one layer short (the embedding and the output
    # layer weigh as a layer each), 8 on the 14 others.
    plan = plan_layouts(PlannerInputs(arch(405 * GB, L405), h100(16)))
    stages = {(s.layout.pp, s.layout.first, s.layout.last) for s in plan.layouts}
    assert (16, 7, 7) in stages and (2, 0, 0) in stages  # 126 / 2 = 63: even
    assert (4, 31, 31) in stages and (8, 15, 15) in stages  # 128 / 4 - 1 = 31 on the ends, 32 in the middle
    from trainspec.compiler.parallelism.layouts import balanced_split, layer_split_problem

    assert balanced_split(126, 16) == (7, 7)
    assert balanced_split(70, 12) == (5, 5)  # BLOOM: 70 layers + 2 embeddings = 72 = 12 x 6
    assert balanced_split(80, 8) == (0, 0)  # even
    assert balanced_split(126, 5) is None  # 128 is not a multiple of 5
    assert layer_split_problem(126, 16, 0, 0) == "PP 16 does not divide the 126 layers"
    assert layer_split_problem(126, 16, 7, 7) is None
    assert layer_split_problem(126, 16, 6, 7) is not None  # 113 layers do not divide over 14 stages
    assert layer_split_problem(126, 16, 7, 7, virtual=2) is not None  # 7 layers do not split into 2 chunks


def test_the_largest_world_is_bounded_work() -> None:
    # 10,000 nodes x 256 ranks: the enumeration stays within MAX_LAYOUTS and every kept layout is valid.
    from trainspec.compiler.parallelism.recommend import MAX_LAYOUTS

    big = Cluster(world=10_000 * 256, gpus_per_node=256, gpu_memory=80 * GIB)
    plan = plan_layouts(PlannerInputs(arch(70 * GB, L70), big))
    assert 0 < len(plan.layouts) <= MAX_LAYOUTS
    assert all(s.layout.tp * s.layout.pp * s.layout.dp == big.world for s in plan.layouts)


def test_zero_2_is_never_combined_with_a_pipeline() -> None:
    plan = plan_layouts(PlannerInputs(arch(70 * GB, L70), h100(8)))
    assert not any(s.layout.zero == 2 and s.layout.pp > 1 for s in plan.layouts)
    assert any(s.layout.zero == 2 and s.layout.pp == 1 for s in plan.layouts)
