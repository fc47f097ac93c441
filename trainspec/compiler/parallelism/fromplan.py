"""Read the planner's inputs from a compiled job plan (spec.model, checkpoint.model, the runtime).

Where each input comes from:

* parameters: ``spec.model.parameters``, else ``spec.checkpoint.model.parameters`` (both given and
  different is TS420); dtype and optimizer: ``checkpoint.model`` (default bf16, AdamW);
* world and GPUs per node: the job's nodes (an elastic job's maximum) x the runtime's GPUs per
  node, one rank per GPU;
* one GPU's memory and NVLink bandwidth: the runtime's ``accelerator``;
* the network per node: ``network.ports`` (default: the count of an ``rdma/*`` device resource,
  else 1) x ``network.portBandwidth``.
"""

from __future__ import annotations

from fractions import Fraction

from trainspec.compiler.parallelism import recommend
from trainspec.compiler.parallelism.inputs import (
    Arch,
    Cluster,
    Pin,
    PlannerInputs,
    Shape,
    arch_for,
)
from trainspec.compiler.parallelism.recommend import Plan
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.sizing import DTYPE_BYTES
from trainspec.dsl.spec.models import DType, Network
from trainspec.dsl.spec.parallelism import parse_bandwidth


def parameters(plan: JobPlan) -> int | None:
    """The parameter count the planner uses (the job's model block first)."""
    spec = plan.resolved.job.spec
    if spec.model is not None and spec.model.parameters is not None:
        return spec.model.parameters.count
    ckpt = spec.checkpoint.model if spec.checkpoint is not None else None
    return ckpt.parameters.count if ckpt is not None else None


def wanted(plan: JobPlan) -> bool:
    """Whether the job asks for the planner at all (a model block or a parallelism pin)."""
    spec = plan.resolved.job.spec
    return spec.model is not None or spec.parallelism is not None


def arch(plan: JobPlan) -> Arch | None:
    """The model as the planner sees it; None when no parameter count is known anywhere."""
    spec = plan.resolved.job.spec
    count = parameters(plan)
    if count is None:
        return None
    ckpt = spec.checkpoint.model if spec.checkpoint is not None else None
    dtype = ckpt.dtype if ckpt is not None else DType.BF16
    optimizer = ckpt.optimizer.value if ckpt is not None else "adamw"
    k = (
        Fraction(str(ckpt.optimizer_bytes_per_param))
        if ckpt is not None and ckpt.optimizer_bytes_per_param is not None
        else None
    )
    shape = None
    model = spec.model
    if model is not None:
        shape = Shape(
            layers=model.layers,
            hidden=model.hidden_size,
            heads=model.attention_heads,
            kv_heads=model.kv_heads or model.attention_heads,
            sequence=model.sequence_length,
            micro_batch=model.micro_batch,
            global_batch=model.global_batch,
            vocabulary=model.vocabulary,
        )
    return arch_for(count, DTYPE_BYTES[dtype], optimizer, k=k, dtype=dtype.value, shape=shape)


def network_name(network: Network | None) -> str:
    """``InfiniBand`` for an rdma/ib device or NCCL_IB_* settings, ``RDMA`` for other rdma/*, else the network."""
    if network is None:
        return "the network"
    if any(name.endswith("/ib") or "infiniband" in name for name in network.resources) or any(
        name.startswith("NCCL_IB_") for name in network.env
    ):
        return "InfiniBand"
    return "RDMA" if network.wants_rdma else "the network"


def cluster(plan: JobPlan) -> Cluster:
    """The cluster of this job: ranks, GPUs per node, GPU memory and bandwidths."""
    resolved = plan.resolved
    runtime = resolved.runtime.spec.spec
    per_node = resolved.gpus_per_node.value
    accelerator = runtime.accelerator
    memory = int(accelerator.memory.value) if accelerator is not None else None
    nvlink = None
    if accelerator is not None and accelerator.nvlink_bandwidth is not None:
        nvlink = parse_bandwidth(accelerator.nvlink_bandwidth) / 2  # data sheets add both directions
    network = runtime.network
    per_node_bandwidth = None
    if network is not None and network.port_bandwidth is not None:
        ports = network.ports
        if ports is None:
            rdma = [q.value for name, q in network.resources.items() if name.startswith("rdma/")]
            ports = int(sum(rdma)) if rdma else 1
        per_node_bandwidth = parse_bandwidth(network.port_bandwidth) * max(ports, 1)
    return Cluster(
        world=resolved.nodes.value * per_node,
        gpus_per_node=per_node,
        gpu_memory=memory,
        nvlink=nvlink,
        network=per_node_bandwidth,
        network_name=network_name(network),
    )


def pin(plan: JobPlan) -> Pin:
    par = plan.resolved.job.spec.parallelism
    if par is None:
        return Pin()
    return Pin(
        tp=par.tp,
        pp=par.pp,
        dp=par.dp,
        zero=par.pinned_zero,
        recompute=par.recompute.value if par.recompute is not None else None,
        fsdp=par.fsdp,
        framework=par.framework.value if par.framework is not None else None,
    )


def inputs(plan: JobPlan) -> PlannerInputs | None:
    """The planner's inputs for ``plan``; None for a CPU-only job or one with no parameter count."""
    found = arch(plan)
    if found is None or plan.resolved.gpus_per_node.value == 0:
        return None
    return PlannerInputs(found, cluster(plan), pin(plan))


def decide(plan: JobPlan) -> Plan | None:
    """The planner's answer for ``plan`` (the plan pass asks once per job and keeps it in the plan).

    None when the job asks for no planning (neither ``spec.model`` nor ``spec.parallelism``), has
    no GPU or no parameter count, or its runtime does not say how much memory a GPU has.
    """
    if not wanted(plan):
        return None
    found = inputs(plan)
    if found is None or found.cluster.gpu_memory is None:
        return None
    return recommend.plan_layouts(found)  # through the module: one entry point, counted by a test
