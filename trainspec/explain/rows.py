"""An explanation as labelled rows ``(what, value, from)``: what text and markdown both print.

Keeping the wording in one place means the text and the markdown renderings say the same thing.
"""

from __future__ import annotations

from fractions import Fraction

from trainspec.compiler.engines import DEFAULT_ENGINE
from trainspec.compiler.lower.dialects import dialect_for
from trainspec.compiler.sizing import CheckpointSize, human_bytes
from trainspec.explain.estimate import TrainingState, format_number
from trainspec.explain.explanation import COMPUTED, Explanation, Item, Row
from trainspec.explain.planner_rows import planner_rows

#: Where to set a price, said whenever a cost cannot be computed.
PRICE_HINT = "set spec.pricing.gpuHour in trainspec.yaml or pass --gpu-hour-price"


def money(amount: Fraction, currency: str) -> str:
    """``11,520.00 USD``: two decimals, rounded half to even on the exact value."""
    cents = round(amount * 100)
    return f"{cents // 100:,}.{cents % 100:02d} {currency}"


def fit_text(per_gpu: int, fits: bool | None, gpu_memory: int | None) -> str:
    """``10.9 GB per GPU: fits (13% of 85.9 GB)`` or ``700 GB per GPU: does not fit (85.9 GB)``."""
    text = f"{human_bytes(per_gpu)} per GPU"
    if fits is None or gpu_memory is None:
        return text + " (GPU memory unknown: set spec.accelerator in the runtime)"
    share = per_gpu * 100 / gpu_memory
    if fits:
        return f"{text}: fits ({share:.0f}% of {human_bytes(gpu_memory)})"
    return f"{text}: does not fit ({human_bytes(gpu_memory)} per GPU)"


def _from(item: Item | None) -> str:
    return item.origin.value if item is not None else ""


def rows(ex: Explanation) -> list[Row]:
    """Every row of ``ex``, in reading order: placement, scale, scheduling, memory, storage, cost."""
    runtime = f"{ex.runtime} ({ex.framework}{', built-in' if ex.runtime_builtin else ''})"
    if ex.engine != DEFAULT_ENGINE:
        runtime += f", engine {ex.engine}"
    if ex.runtime_object != ex.runtime:
        runtime += f", compiled as {ex.runtime_object}"
    out = [
        Row("namespace", ex.namespace.value, ex.namespace.origin.value),
        Row("runtime", runtime, "job"),
        Row("image", ex.image.value, ex.image.origin.value),
        Row("nodes", str(ex.nodes.value), ex.nodes.origin.value),
        *_elastic_rows(ex),
        Row("processes per node", str(ex.procs_per_node.value), ex.procs_per_node.origin.value),
        Row("world size", f"{ex.world_size} processes ({ex.nodes.value} x {ex.procs_per_node.value})", COMPUTED),
        Row("GPUs per node", _gpu_kind(ex, ex.gpus_per_node.value), ex.gpus_per_node.origin.value),
        Row("GPUs in total", _gpu_kind(ex, ex.gpus_total), COMPUTED),
    ]
    if ex.gpu_memory is not None and ex.gpu_memory_bytes is not None:
        per_node = ex.gpus_per_node.value
        node = (
            f"{per_node} x {ex.gpu_memory.value} = {ex.gpu_memory_node} "
            f"({human_bytes(ex.gpu_memory_bytes * per_node)}) per node"
        )
        out.append(
            Row(
                "GPU memory",
                f"{ex.gpu_memory.value} ({human_bytes(ex.gpu_memory_bytes)}) per GPU, {node}",
                ex.gpu_memory.origin.value,
            )
        )
    out.append(Row("gang scheduling", ex.gang.value, ex.gang.origin.value))
    out.append(Row("queue", ex.queue.value if ex.queue else "none", _from(ex.queue)))
    out.append(Row("priority", ex.priority.value if ex.priority else "none", _from(ex.priority)))
    out.append(
        Row("max run time", ex.max_run_time.value if ex.max_run_time else "none (no deadline)", _from(ex.max_run_time))
    )
    out.append(
        Row(
            "restarts",
            f"{ex.restarts.value} ({dialect_for(None, ex.engine).restarts_field})"
            if ex.restarts
            else "none (the first failure fails the job)",
            _from(ex.restarts),
        )
    )
    out.extend(_memory_rows(ex))
    out.extend(_checkpoint_rows(ex))
    if ex.data is not None:
        out.append(Row("data", f"{ex.data.source} ({ex.data.format})", "job"))
        out.append(Row("data shards", f"{ex.data.shards} (one per {ex.data.shard_by})", COMPUTED))
    out.extend(_cost_rows(ex))
    return out


def _elastic_rows(ex: Explanation) -> list[Row]:
    """The node range, and that Kueue admits an elastic job at its maximum size."""
    span = ex.elastic
    if span is None:
        return []
    gpus = f", {span.admitted_gpus} GPUs" if span.admitted_gpus else ""
    return [
        Row(
            "elastic",
            f"{span.min_nodes} to {span.max_nodes} nodes (torchrun rendezvous, up to "
            f"{span.max_restarts} restarts of the worker group)",
            "job",
        ),
        Row(
            "Kueue admission",
            f"at the maximum: {span.max_nodes} nodes{gpus} (the job's replicas; Kueue "
            f"reserves quota for all of them, never for the minimum)",
            COMPUTED,
        ),
    ]


def _gpu_kind(ex: Explanation, count: int) -> str:
    if count == 0:
        return "0 (CPU only)"
    return f"{count} x {ex.accelerator.value}" if ex.accelerator is not None else str(count)


def params_text(count: int) -> str:
    """``70B``, ``7.5B``, ``350M``: a parameter count as people write it."""
    for unit, scale in (("T", 10**12), ("B", 10**9), ("M", 10**6)):
        if count >= scale:
            return f"{format_number(Fraction(count, scale))}{unit}"
    return str(count)


def _memory_rows(ex: Explanation) -> list[Row]:
    arch, fit = ex.arch, ex.memory
    if arch is None:
        return [
            Row(
                "memory per GPU",
                "unknown: set spec.checkpoint.model (parameters, dtype, optimizer) or spec.model (docs/parallelism.md)",
            )
        ]
    if fit is None:
        return []  # a CPU-only job: nothing to fit on GPUs
    state = fit.state
    model = ex.model
    optimizer = arch.optimizer
    if model is not None and model.optimizer_bytes_per_param is not None:
        optimizer = f"{model.optimizer_bytes_per_param:g} bytes/param"
    origin = "job"  # spec.model or checkpoint.model: both are the job's
    out = [
        Row("model", f"{params_text(arch.parameters)} parameters, {arch.dtype}, optimizer {optimizer}", origin),
        Row(
            "model state",
            f"weights {human_bytes(state.weights)} + gradients {human_bytes(state.gradients)} "
            f"+ optimizer {human_bytes(state.optimizer)}{_optimizer_parts(state)} = {human_bytes(state.total)} "
            f"({format_number(arch.bytes_per_param)} bytes/param)",
            COMPUTED,
        ),
    ]
    if fit.node_memory is not None:
        verdict = "fit" if fit.weights_fit_node else "do not fit"
        out.append(
            Row(
                "weights on one node",
                f"{human_bytes(state.weights)} {verdict} in one node's {human_bytes(fit.node_memory)} of GPU memory",
                COMPUTED,
            )
        )
    out.append(
        Row(
            "plain data parallel (ZeRO-0)",
            fit_text(fit.replicated_per_gpu, fit.fits_replicated, fit.gpu_memory) + ", model state only",
            COMPUTED,
        )
    )
    out.append(
        Row(
            f"ZeRO-3 / FSDP over {fit.gpus} GPUs",
            fit_text(fit.sharded_per_gpu, fit.fits_sharded, fit.gpu_memory) + ", model state only",
            COMPUTED,
        )
    )
    out.extend(planner_rows(ex))
    return out


def _checkpoint_rows(ex: Explanation) -> list[Row]:
    ckpt = ex.checkpoint
    if ckpt is None:
        return [Row("checkpoints", "none")]
    where = {
        "volume": f"new volume {ckpt.claim} at {ckpt.location}",
        "claim": f"existing claim {ckpt.claim} at {ckpt.location}",
        "uri": f"object storage {ckpt.location}",
    }[ckpt.kind]
    out = [Row("checkpoints", where, "job"), Row("checkpoints kept", str(ckpt.keep.value), ckpt.keep.origin.value)]
    if ckpt.sized is not None:
        out.append(
            Row(
                "checkpoint size",
                f"{human_bytes(ckpt.sized.per_checkpoint)} each ({checkpoint_parts(ckpt.sized)}), "
                f"{human_bytes(ckpt.sized.total)} for {ckpt.keep.value}",
                COMPUTED,
            )
        )
    if ckpt.volume is not None and ckpt.volume_bytes is not None:
        mode = f", {ckpt.access_mode}" if ckpt.access_mode else ""
        sizing = " (size: auto, kept checkpoints + 20%)" if ckpt.auto else ""
        out.append(
            Row(
                "checkpoint volume",
                f"{ckpt.volume} ({human_bytes(ckpt.volume_bytes)}){mode}{sizing}",
                COMPUTED if ckpt.auto else "job",
            )
        )
    if ckpt.storage_class is not None:
        out.append(Row("storage class", ckpt.storage_class.value, ckpt.storage_class.origin.value))
    return out


def _cost_rows(ex: Explanation) -> list[Row]:
    if ex.gpus_total == 0:
        return [Row("GPU-hours", "0 (CPU only)")]
    if ex.gpu_hours is None:
        return [Row("GPU-hours", "unbounded: no maxRunTime")]
    out = [
        Row(
            "GPU-hours",
            f"{format_number(ex.gpu_hours)} ({ex.gpus_total} GPUs x "
            f"{format_number(Fraction(ex.max_run_time_seconds or 0, 3600))} h of maxRunTime, at most)",
            COMPUTED,
        )
    ]
    if ex.price is None or ex.cost is None:
        out.append(Row("cost", f"unknown: no price ({PRICE_HINT})"))
    else:
        out.append(
            Row(
                "cost",
                f"{money(ex.cost, ex.price.currency)} at {format_number(ex.price.amount)} "
                f"{ex.price.currency} per GPU-hour, at most",
                ex.price.source,
            )
        )
    return out


def checkpoint_parts(sized: CheckpointSize) -> str:
    """``weights 140 GB + fp32 master 280 GB + moments 560 GB, as DeepSpeed writes it``."""
    from trainspec.compiler.memory_model import FORMAT_NAMES

    weights = "fp32 weights" if sized.weight_bytes == 4 and not sized.master else "weights"
    parts = [f"{weights} {human_bytes(sized.weights)}"]
    if sized.master:
        parts.append(f"fp32 master {human_bytes(sized.master)}")
    if sized.moments:
        parts.append(f"optimizer moments {human_bytes(sized.moments)}")
    return f"{' + '.join(parts)}, as {FORMAT_NAMES[sized.format]} writes it"


def _optimizer_parts(state: TrainingState) -> str:
    """`` (fp32 master 280 GB + moments 560 GB)`` when the optimizer keeps a master copy."""
    if not state.master:
        return ""
    return f" (fp32 master {human_bytes(state.master)} + moments {human_bytes(state.optimizer - state.master)})"
