"""The planner's inputs as the spec gives or implies them: the parameter count and the accelerator.

* TS420 (error): ``spec.model`` has no parameter count anywhere (not written, no
  ``checkpoint.model``, a shape that does not say enough to count), or two written counts differ.
* TS460 (warning): a written count is more than :data:`~.param_count.TOLERANCE` (5%) away from
  the count of ``spec.model``'s shape. The written count is used (it may count what the formula
  leaves out); the warning names both numbers.
* TS461 (note): the runtime gives no ``accelerator`` and the planner takes one GPU's memory and
  NVLink from the GPU its node selector names; said once per runtime, at the label.
* TS462 (note): a mixture of experts or latent attention, which the planner approximates: memory
  counts every expert (they are all stored), but no layout places experts by expert parallelism
  (they are split by TP, PP and ZeRO like dense weights), and the activations and TP rules take
  latent attention as multi-head attention over ``attentionHeads``.
"""

from __future__ import annotations

from collections.abc import Iterator

from trainspec.compiler.parallelism import param_count
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.resolve import related_at
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.k8s.gpu_products import RuntimeAccelerator, runtime_accelerator
from trainspec.k8s.wellknown import KARPENTER_GPU_MEMORY_LABEL, KARPENTER_GPU_NAME_LABEL

MODEL = ("spec", "model")


def check(plan: JobPlan) -> Iterator[Diagnostic]:
    """TS420, TS460 and TS461 for a job that asks for the planner."""
    yield from _parameters(plan)
    if plan.resolved.gpus_per_node.value > 0:
        yield from _accelerator(plan)
        yield from _approximated(plan)


def _parameters(plan: JobPlan) -> Iterator[Diagnostic]:
    spec = plan.resolved.job.spec
    loaded = plan.resolved.loaded
    ckpt = spec.checkpoint.model if spec.checkpoint is not None else None
    model = spec.model
    if model is None:
        return  # a pin without a model: only its degrees can be checked
    counted = param_count.count(model)
    if model.parameters is None and ckpt is None and counted is None:
        widths = (("ffnHiddenSize", model.ffn_hidden_size), ("vocabulary", model.vocabulary))
        missing = [alias for alias, value in widths if value is None]
        yield loaded.diagnostic(
            codes.MODEL_PARAMS,
            MODEL,
            "spec.model gives no parameter count, there is no checkpoint.model to take it from, and its shape "
            f"cannot be counted without {' and '.join(missing) or 'the width of its experts'}",
            hint=f"add {' and '.join(missing) or 'moeFfnHiddenSize'} (or parameters: 70B, or a preset such as "
            "preset: llama3-70b) to spec.model",
        )
        return
    if model.parameters is not None and ckpt is not None and model.parameters.count != ckpt.parameters.count:
        yield loaded.diagnostic(
            codes.MODEL_PARAMS,
            (*MODEL, "parameters"),
            f"the model has {model.parameters} parameters here but {ckpt.parameters} in checkpoint.model",
            hint="write the count once (spec.model takes it from checkpoint.model when left out)",
            related=(related_at(loaded, ("spec", "checkpoint", "model", "parameters"), "the checkpoint's count"),),
        )
    if counted is None:
        return
    path: tuple[str, ...]
    if model.parameters is not None:
        written, path, where = model.parameters, (*MODEL, "parameters"), "spec.model.parameters"
    elif ckpt is not None:
        written, path, where = ckpt.parameters, ("spec", "checkpoint", "model", "parameters"), "checkpoint.model"
    else:
        return
    if not param_count.differs(written.count, counted.total):
        return
    off = (written.count - counted.total) / counted.total
    preset = f" (preset {model.preset})" if model.preset is not None else ""
    moe = f", {param_count.billions(counted.active)} active per token" if model.experts is not None else ""
    yield loaded.diagnostic(
        codes.MODEL_COUNT_SHAPE,
        path,
        f"{where} says {written} parameters, but spec.model's shape{preset} gives "
        f"{param_count.billions(counted.total)}{moe}: {abs(off):.0%} {'more' if off > 0 else 'fewer'}; the "
        f"planner uses {written}",
        severity=Severity.WARNING,
        hint="correct the shape (layers, hiddenSize, ffnHiddenSize, gatedMlp, tiedEmbeddings, vocabulary, experts) "
        "or the count; leave spec.model.parameters out to use the shape's",
        related=(related_at(loaded, MODEL, "the shape"),),
    )


def _accelerator(plan: JobPlan) -> Iterator[Diagnostic]:
    resolved = plan.resolved
    found = runtime_accelerator(resolved.runtime.spec.spec)
    if found is None or found.label is None:
        return
    name = resolved.runtime.name
    runtime = resolved.runtime.spec.spec
    selector = runtime.scheduling.node_selector if runtime.scheduling is not None else {}
    also = ""
    if found.label == KARPENTER_GPU_NAME_LABEL and KARPENTER_GPU_MEMORY_LABEL in selector:
        also = f" and {KARPENTER_GPU_MEMORY_LABEL}={selector[KARPENTER_GPU_MEMORY_LABEL]}"
    yield resolved.runtime.loaded.diagnostic(
        codes.ACCELERATOR_INFERRED,
        ("spec", "scheduling", "nodeSelector", found.label),
        f"runtime {name}: accelerator {_described(found)} inferred from nodeSelector {found.label}={found.value}{also}",
        severity=Severity.NOTE,
        hint=f"set spec.accelerator in runtime {name} to override: accelerator: {_yaml(found)}",
    )


def _approximated(plan: JobPlan) -> Iterator[Diagnostic]:
    model = plan.resolved.job.spec.model
    if model is None or (model.experts is None and model.latent_attention is None):
        return
    counted = param_count.count(model)
    said = []
    if model.experts is not None:
        sizes = (
            f" ({param_count.billions(counted.total)}, {param_count.billions(counted.active)} active per token)"
            if counted is not None
            else ""
        )
        said.append(
            f"memory counts all {model.experts} experts of each MoE layer{sizes}, split by TP, PP and ZeRO like "
            "dense weights: expert parallelism is not modelled"
        )
    if model.latent_attention is not None:
        said.append("latent attention is taken as multi-head attention in the activations and TP rules")
    yield plan.resolved.loaded.diagnostic(
        codes.MODEL_APPROXIMATED,
        MODEL,
        "the planner approximates this model: " + "; ".join(said),
        severity=Severity.NOTE,
        hint="read the layout as a memory check, and plan expert parallelism in the training framework "
        "(docs/parallelism.md, 'What is not modelled')",
    )


def _described(found: RuntimeAccelerator) -> str:
    accelerator = found.accelerator
    nvlink = f", NVLink {accelerator.nvlink_bandwidth}" if accelerator.nvlink_bandwidth else ", no NVLink"
    return f"{accelerator.name} {accelerator.memory}{nvlink}"


def _yaml(found: RuntimeAccelerator) -> str:
    accelerator = found.accelerator
    nvlink = f", nvlinkBandwidth: {accelerator.nvlink_bandwidth}" if accelerator.nvlink_bandwidth else ""
    return f"{{name: {accelerator.name}, memory: {accelerator.memory}{nvlink}}}"


__all__ = ["check"]
