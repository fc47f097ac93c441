"""Read the planner's inputs from a compiled job plan (spec.model, checkpoint.model, the runtime).

Where each input comes from:

* parameters: ``spec.model.parameters``, else ``spec.checkpoint.model.parameters`` (both given and
  different is TS420), else counted from ``spec.model``'s shape (:mod:`.param_count`; a written
  count more than 5% from the shape's is TS460); for a mixture of experts the total (every
  expert is stored); dtype and optimizer: ``checkpoint.model`` (default bf16, AdamW);
* the shape: ``spec.model``, a preset's values already filled in by the spec model;
* world and GPUs per node: the job's nodes (an elastic job's maximum) x the runtime's GPUs per
  node, one rank per GPU;
* one GPU's memory and NVLink bandwidth: the runtime's ``accelerator``, else the GPU its node
  selector names (:func:`trainspec.k8s.gpu_products.runtime_accelerator`; TS461 says so);
* the network per node: ``network.ports`` (default: the count of an ``rdma/*`` device resource,
  else 1) x ``network.portBandwidth``.
"""

from __future__ import annotations

from fractions import Fraction

from trainspec.compiler.parallelism import param_count, recommend
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
from trainspec.dsl.spec.parallelism import TransformerModel, parse_bandwidth
from trainspec.k8s.gpu_products import runtime_accelerator


def written_parameters(plan: JobPlan) -> int | None:
    """The parameter count the spec writes: ``spec.model.parameters``, else ``checkpoint.model``'s."""
    spec = plan.resolved.job.spec
    if spec.model is not None and spec.model.parameters is not None:
        return spec.model.parameters.count
    ckpt = spec.checkpoint.model if spec.checkpoint is not None else None
    return ckpt.parameters.count if ckpt is not None else None


def parameters(plan: JobPlan) -> int | None:
    """The parameter count the planner uses: the one written (it wins), else the shape's total."""
    written = written_parameters(plan)
    if written is not None:
        return written
    model = plan.resolved.job.spec.model
    counted = param_count.count(model) if model is not None else None
    return counted.total if counted is not None else None


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
        shape = _shape(model)
    return arch_for(count, DTYPE_BYTES[dtype], optimizer, k=k, dtype=dtype.value, shape=shape)


def _shape(model: TransformerModel) -> Shape:
    # The spec model has its preset's values in its fields and requires layers, hiddenSize and
    # attentionHeads after that, so the "or" defaults below never apply to a validated model.
    heads = model.attention_heads or 1
    return Shape(
        layers=model.layers or 1,
        hidden=model.hidden_size or heads,
        heads=heads,
        kv_heads=model.kv_heads or heads,
        sequence=model.sequence_length,
        micro_batch=model.micro_batch,
        global_batch=model.global_batch,
        vocabulary=model.vocabulary,
        ffn_hidden=model.ffn_hidden_size,
        gated_mlp=model.gated,
        head_dim=model.head_dim,
        experts=model.experts,
        experts_per_token=(model.experts_per_token or 1) if model.experts is not None else None,
        shared_experts=model.shared_experts or 0,
        moe_ffn_hidden=(model.moe_ffn_hidden_size or model.ffn_hidden_size) if model.experts is not None else None,
        dense_layers=model.dense_layers or 0,
    )


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
    found = runtime_accelerator(runtime)  # written, else inferred from a GPU node label
    accelerator = found.accelerator if found is not None else None
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
        cp=par.cp,
        first=par.first_stage_layers,
        last=par.last_stage_layers,
        virtual=par.virtual_stages,
        sp=par.sequence_parallel,
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
