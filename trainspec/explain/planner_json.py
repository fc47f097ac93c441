"""The parallelism planner as JSON: its inputs, every valid layout with its figures, the choice and why."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from trainspec.compiler.parallelism.memory import HEADROOM
from trainspec.compiler.parallelism.recommend import Plan, Scored


def _num(value: Fraction | None) -> float | int | None:
    if value is None:
        return None
    return value.numerator if value.denominator == 1 else round(float(value), 6)


def layout_dict(scored: Scored) -> dict[str, Any]:
    """One layout: degrees, stage, recomputation, bytes per GPU, fit, and each axis's traffic."""
    lay, mem = scored.layout, scored.memory
    return {
        "tp": lay.tp,
        "cp": lay.cp,
        "pp": lay.pp,
        "dp": lay.dp,
        "zeroStage": lay.zero,
        "recompute": lay.recompute,
        "firstStageLayers": lay.first or None,
        "lastStageLayers": lay.last or None,
        "virtualStages": lay.virtual,
        "sequenceParallel": lay.sp and lay.tp > 1,
        "weightsBytes": mem.weights,
        "gradientsBytes": mem.gradients,
        "optimizerBytes": mem.optimizer,
        "activationsBytes": mem.activations,
        "perGpuBytes": mem.total,
        "fits": scored.fits,
        "traffic": [
            {
                "axis": t.axis,
                "size": t.size,
                "collective": t.collective,
                "link": t.link,
                "acrossNodes": t.across_nodes,
                "bytesPerGpu": t.bytes_per_gpu,
                "per": t.per,
                "seconds": _num(t.seconds),
            }
            for t in scored.traffic
        ],
    }


def planner_dict(plan: Plan | None) -> dict[str, Any] | None:
    """The whole planner table (every valid layout), the chosen layout and the reasons."""
    if plan is None:
        return None
    arch, cluster, pin = plan.inputs.arch, plan.inputs.cluster, plan.inputs.pin
    shape = arch.shape
    return {
        "inputs": {
            "parameters": arch.parameters,
            "dtype": arch.dtype,
            "optimizer": arch.optimizer,
            "bytesPerParam": {
                "weights": _num(arch.weight_bytes),
                "gradients": _num(arch.grad_bytes),
                "optimizer": _num(arch.k),
            },
            "layers": shape.layers if shape else None,
            "hiddenSize": shape.hidden if shape else None,
            "attentionHeads": shape.heads if shape else None,
            "kvHeads": shape.kv_heads if shape else None,
            "sequenceLength": shape.sequence if shape else None,
            "microBatch": shape.micro_batch if shape else None,
            "globalBatch": shape.global_batch if shape else None,
            "vocabulary": shape.vocabulary if shape else None,
            "ffnHiddenSize": shape.ffn_hidden if shape else None,
            "gatedMlp": shape.gated_mlp if shape else None,
            "worldSize": cluster.world,
            "gpusPerNode": cluster.gpus_per_node,
            "gpuMemoryBytes": cluster.gpu_memory,
            "usableBytes": int(cluster.gpu_memory * HEADROOM) if cluster.gpu_memory is not None else None,
            "nvlinkBytesPerSecond": _num(cluster.nvlink),
            "networkBytesPerSecondPerNode": _num(cluster.network),
            "network": cluster.network_name,
            "pin": {
                "tp": pin.tp,
                "pp": pin.pp,
                "dp": pin.dp,
                "zeroStage": pin.zero,
                "recompute": pin.recompute,
                "framework": pin.framework,
                "cp": pin.cp,
                "firstStageLayers": pin.first,
                "lastStageLayers": pin.last,
                "virtualStages": pin.virtual,
                "sequenceParallel": pin.sp,
            },
        },
        "pinned": plan.pinned,
        "chosen": layout_dict(plan.chosen) if plan.chosen is not None else None,
        "reasons": list(plan.reasons),
        "validLayouts": len(plan.layouts),
        "fittingLayouts": plan.fitting,
        "layouts": [layout_dict(s) for s in plan.layouts],
    }
