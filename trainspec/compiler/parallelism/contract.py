"""The chosen (or pinned) layout as the trainer container's environment, and as framework flags.

trainspec never edits the user's command: a flag the script does not know would fail the job. It
sets ``TRAINSPEC_TP_SIZE``, ``TRAINSPEC_PP_SIZE``, ``TRAINSPEC_DP_SIZE``, ``TRAINSPEC_ZERO_STAGE``
and ``TRAINSPEC_RECOMPUTE``, and when the layout has them ``TRAINSPEC_CP_SIZE``,
``TRAINSPEC_FIRST_STAGE_LAYERS``/``TRAINSPEC_LAST_STAGE_LAYERS``, ``TRAINSPEC_VIRTUAL_STAGES``
and ``TRAINSPEC_SEQUENCE_PARALLEL=false``; with ``parallelism.framework`` also ``TRAINSPEC_PARALLEL_ARGS``, the
layout in that framework's own flags, for a shell command to splice in
(``bash -c 'torchrun ... pretrain_gpt.py $TRAINSPEC_PARALLEL_ARGS'``). Kubernetes expands
``$(TRAINSPEC_TP_SIZE)`` in ``command`` and ``args`` too. docs/parallelism.md lists the flags.
"""

from __future__ import annotations

import shlex

from trainspec.compiler.parallelism import fromplan
from trainspec.compiler.parallelism.inputs import Pin
from trainspec.compiler.parallelism.layouts import Layout
from trainspec.compiler.plan import JobPlan
from trainspec.dsl.kube_facts import (
    CP_SIZE_ENV,
    DP_SIZE_ENV,
    FIRST_STAGE_LAYERS_ENV,
    LAST_STAGE_LAYERS_ENV,
    PARALLEL_ARGS_ENV,
    PP_SIZE_ENV,
    RECOMPUTE_ENV,
    SEQUENCE_PARALLEL_ENV,
    TP_SIZE_ENV,
    VIRTUAL_STAGES_ENV,
    ZERO_STAGE_ENV,
)


def chosen_layout(plan: JobPlan) -> Layout | None:
    """The planner's choice (which honours the pin); else the pin itself when it fixes TP and PP."""
    pin = fromplan.pin(plan)
    result = plan.parallel  # decided in the plan pass
    if result is not None and result.chosen is not None:
        return result.chosen.layout
    world = plan.resolved.nodes.value * plan.resolved.gpus_per_node.value
    if pin.tp is None or pin.pp is None or world == 0 or world % (pin.tp * pin.pp):
        return None
    cp = pin.cp or 1
    if world % (pin.tp * pin.pp * cp):
        return None
    dp = pin.dp if pin.dp is not None else world // (pin.tp * pin.pp * cp)
    return Layout(
        pin.tp,
        pin.pp,
        dp,
        pin.zero or 0,
        pin.recompute or "none",
        cp=cp,
        first=pin.first or 0,
        last=pin.last or 0,
        virtual=pin.virtual or 1,
        sp=pin.sp if pin.sp is not None else True,
    )


def framework_args(framework: str, layout: Layout, pin: Pin) -> list[str]:
    """The layout in ``framework``'s flags (Megatron-LM, NeMo 1.x overrides, torchtitan, Megatron-DeepSpeed)."""
    t, p, d, zero, recompute = layout.tp, layout.pp, layout.dp, layout.zero, layout.recompute
    sp = t > 1 and layout.sp
    if framework == "megatron":
        out = ["--tensor-model-parallel-size", str(t), "--pipeline-model-parallel-size", str(p)]
        out += ["--context-parallel-size", str(layout.cp)] if layout.cp > 1 else []
        out += ["--sequence-parallel"] if sp else []
        if layout.uneven:
            out += ["--decoder-first-pipeline-num-layers", str(layout.first)]
            out += ["--decoder-last-pipeline-num-layers", str(layout.last)]
        out += ["--num-virtual-stages-per-pipeline-rank", str(layout.virtual)] if layout.virtual > 1 else []
        out += ["--use-distributed-optimizer"] if zero == 1 else ["--use-torch-fsdp2"] if zero == 3 else []
        if recompute == "selective":
            out += ["--recompute-granularity", "selective"]
        elif recompute == "full":
            out += ["--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"]
        return out
    if framework == "nemo":
        out = [
            f"model.tensor_model_parallel_size={t}",
            f"model.pipeline_model_parallel_size={p}",
            f"model.sequence_parallel={'true' if sp else 'false'}",
        ]
        out += [f"model.context_parallel_size={layout.cp}"] if layout.cp > 1 else []
        out += [f"model.virtual_pipeline_model_parallel_size={layout.virtual}"] if layout.virtual > 1 else []
        out += ["model.optim.name=distributed_fused_adam"] if zero == 1 else []
        if recompute != "none":
            out.append(f"model.activations_checkpoint_granularity={recompute}")
        if recompute == "full":
            out += ["model.activations_checkpoint_method=uniform", "model.activations_checkpoint_num_layers=1"]
        return out
    if framework == "torchtitan":
        # FSDP2 shards over data_parallel_shard_degree; plain DDP replicates over data_parallel_replicate_degree.
        axis = "shard" if zero == 3 else "replicate"
        other = "replicate" if zero == 3 else "shard"
        return [
            "--parallelism.tensor_parallel_degree",
            str(t),
            "--parallelism.pipeline_parallel_degree",
            str(p),
            f"--parallelism.data_parallel_{axis}_degree",
            str(d),
            f"--parallelism.data_parallel_{other}_degree",
            "1",
            "--parallelism.context_parallel_degree",
            str(layout.cp),
            "--activation_checkpoint.mode",
            recompute,
        ]
    # deepspeed: Megatron-DeepSpeed's flags; a plain DeepSpeed script reads TRAINSPEC_ZERO_STAGE into its config.
    out = ["--tensor-model-parallel-size", str(t), "--pipeline-model-parallel-size", str(p), "--zero-stage", str(zero)]
    if recompute != "none":
        out.append("--checkpoint-activations")
    return out


def layout_env(plan: JobPlan) -> dict[str, str]:
    """The layout variables of ``plan`` ({} when the job has neither spec.model nor spec.parallelism)."""
    if not fromplan.wanted(plan):
        return {}
    layout = chosen_layout(plan)
    if layout is None:
        return {}
    out = {
        TP_SIZE_ENV: str(layout.tp),
        PP_SIZE_ENV: str(layout.pp),
        DP_SIZE_ENV: str(layout.dp),
        ZERO_STAGE_ENV: str(layout.zero),
        RECOMPUTE_ENV: layout.recompute,
    }
    # Only what a layout has: a new variable in every job would start a new run of each (the run
    # follows the trainer's fields) the day trainspec is upgraded.
    if layout.cp > 1:
        out[CP_SIZE_ENV] = str(layout.cp)
    if layout.uneven:
        out[FIRST_STAGE_LAYERS_ENV] = str(layout.first)
        out[LAST_STAGE_LAYERS_ENV] = str(layout.last)
    if layout.virtual > 1:
        out[VIRTUAL_STAGES_ENV] = str(layout.virtual)
    if layout.tp > 1 and not layout.sp:
        out[SEQUENCE_PARALLEL_ENV] = "false"
    pin = fromplan.pin(plan)
    if pin.framework is not None:
        out[PARALLEL_ARGS_ENV] = shlex.join(framework_args(pin.framework, layout, pin))
    return out
