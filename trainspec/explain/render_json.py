"""Explanations as JSON: every value with its origin, every size in bytes, for tools."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from trainspec.explain.explanation import Explanation, Item
from trainspec.explain.planner_json import planner_dict


def _item(item: Item | None) -> dict[str, Any] | None:
    if item is None:
        return None
    out: dict[str, Any] = {"value": item.value, "origin": item.origin.value}
    where = item.location()
    if where is not None:  # where the value was written: file:line:col and field path
        out["at"] = {"file": where.file, "line": where.line, "column": where.column, "path": where.path}
    return out


def _number(value: Fraction | None, places: int = 4) -> float | int | None:
    if value is None:
        return None
    return value.numerator if value.denominator == 1 else round(float(value), places)


def as_dict(ex: Explanation) -> dict[str, Any]:
    """One job as a JSON-ready mapping (keys camelCase, like the specs)."""
    fit = ex.memory
    ckpt = ex.checkpoint
    return {
        "namespace": _item(ex.namespace),
        "name": ex.name,
        "location": {"file": ex.file, "line": ex.line, "column": ex.column},
        "runtime": {
            "name": ex.runtime,
            "object": ex.runtime_object,
            "builtin": ex.runtime_builtin,
            "framework": ex.framework,
        },
        "engine": ex.engine,
        "image": _item(ex.image),
        "nodes": _item(ex.nodes),
        "procsPerNode": _item(ex.procs_per_node),
        "worldSize": ex.world_size,
        "gpusPerNode": _item(ex.gpus_per_node),
        "gpusTotal": ex.gpus_total,
        "accelerator": _item(ex.accelerator),
        "gpuMemory": _item(ex.gpu_memory),
        "gpuMemoryBytes": ex.gpu_memory_bytes,
        "gang": _item(ex.gang),
        "queue": _item(ex.queue),
        "priority": _item(ex.priority),
        "maxRunTime": _item(ex.max_run_time),
        "maxRunTimeSeconds": ex.max_run_time_seconds,
        "restarts": _item(ex.restarts),
        "stages": [{"name": s.name, "pods": s.pods, "trains": s.trains} for s in ex.stages],
        "model": None
        if ex.model is None
        else {
            "parameters": ex.model.parameters.count,
            "dtype": ex.model.dtype.value,
            "optimizer": ex.model.optimizer.value,
            "optimizerBytesPerParam": ex.model.optimizer_bytes_per_param,
        },
        "memory": None
        if fit is None
        else {
            "weightsBytes": fit.state.weights,
            "gradientsBytes": fit.state.gradients,
            "optimizerBytes": fit.state.optimizer,
            "masterBytes": fit.state.master,
            "modelStateBytes": fit.state.total,
            "shardedOverGpus": fit.gpus,
            "gpuMemoryBytes": fit.gpu_memory,
            "nodeGpuMemoryBytes": fit.node_memory,
            "weightsFitOneNode": fit.weights_fit_node,
            "zero0": {"perGpuBytes": fit.replicated_per_gpu, "fits": fit.fits_replicated},
            "zero3": {"perGpuBytes": fit.sharded_per_gpu, "fits": fit.fits_sharded},
        },
        "planner": planner_dict(ex.planner),
        "checkpoint": None
        if ckpt is None
        else {
            "kind": ckpt.kind,
            "location": ckpt.location,
            "keep": _item(ckpt.keep),
            "claimName": ckpt.claim,
            "perCheckpointBytes": ckpt.sized.per_checkpoint if ckpt.sized else None,
            "savedBytes": None
            if ckpt.sized is None
            else {
                "format": ckpt.sized.format.value,
                "weights": ckpt.sized.weights,
                "master": ckpt.sized.master,
                "moments": ckpt.sized.moments,
            },
            "totalBytes": ckpt.sized.total if ckpt.sized else None,
            "auto": ckpt.auto,
            "volume": ckpt.volume,
            "volumeBytes": ckpt.volume_bytes,
            "storageClass": _item(ckpt.storage_class),
            "accessMode": ckpt.access_mode,
        },
        "data": None
        if ex.data is None
        else {
            "source": ex.data.source,
            "format": ex.data.format,
            "shardBy": ex.data.shard_by,
            "shards": ex.data.shards,
        },
        "gpuHours": _number(ex.gpu_hours),
        "price": None
        if ex.price is None
        else {
            "perGpuHour": _number(ex.price.amount),
            "currency": ex.price.currency,
            "source": ex.price.source,
        },
        "cost": _number(ex.cost, 2),
        "elastic": None
        if ex.elastic is None
        else {
            "minNodes": ex.elastic.min_nodes,
            "maxNodes": ex.elastic.max_nodes,
            "maxRestarts": ex.elastic.max_restarts,
            "kueueAdmitsNodes": ex.elastic.max_nodes,
            "kueueAdmitsGpus": ex.elastic.admitted_gpus,
        },
    }


def render(explanations: list[Explanation]) -> str:
    """``{"jobs": [...]}``, indented, keys in a fixed order."""
    return json.dumps({"jobs": [as_dict(ex) for ex in explanations]}, indent=2) + "\n"
