"""The explanation of one job: its resolved plan, every value with its origin, and estimates.

:func:`explain_plan` turns a :class:`~trainspec.compiler.plan.JobPlan` into an
:class:`Explanation`, a plain frozen record the renderers (text, markdown, json, mermaid) only
read. Origins are the resolver's (job, runtime, project defaults, built-in default), refined
where the resolver cannot tell: a runtime value the runtime never wrote is a built-in default.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar

from trainspec.compiler.parallelism import fromplan
from trainspec.compiler.parallelism.inputs import Arch
from trainspec.compiler.parallelism.recommend import Plan
from trainspec.compiler.plan import CheckpointKind, JobPlan, checkpoint_format
from trainspec.compiler.resolve import Origin, Sourced
from trainspec.compiler.sizing import CheckpointSize, checkpoint_size
from trainspec.dsl.framework.types import Quantity
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.spec.models import ModelSize
from trainspec.dsl.spec.project import Project
from trainspec.explain.estimate import (
    MemoryFit,
    as_price,
    cost,
    gpu_hours,
    memory_fit,
    state_of,
)
from trainspec.k8s.gpu_products import runtime_accelerator

T = TypeVar("T")
#: Origin of a value trainspec derived from others (world size, GPUs in total, sizes).
COMPUTED = Origin.COMPUTED.value
#: A value of the explanation and where it came from: the resolver's own :class:`Sourced`.
Item = Sourced


@dataclass(frozen=True)
class Row:
    """One line of an explanation as the text and markdown renderings print it: a label, the value
    as text, and the value's origin ('' if none)."""

    label: str
    text: str
    origin: str = ""


@dataclass(frozen=True)
class Stage:
    """A replicated job of the compiled JobSet: name, pod count and whether it trains."""

    name: str
    pods: int
    trains: bool


@dataclass(frozen=True)
class CheckpointView:
    """Where checkpoints go and how big they get (sizes need ``checkpoint.model``)."""

    kind: str  # volume | claim | uri
    location: str  # mount path, or the object-store URI
    keep: Item[int]
    claim: str | None
    sized: CheckpointSize | None
    auto: bool  # the volume was sized from the model (size: auto)
    volume: str | None  # the volume's quantity, e.g. 1878Gi
    volume_bytes: int | None
    storage_class: Item[str] | None
    access_mode: str | None


@dataclass(frozen=True)
class DataView:
    """The dataset the sharding stage splits before training."""

    source: str
    format: str
    shard_by: str
    shards: int


@dataclass(frozen=True)
class ElasticView:
    """An elastic node range and what Kueue admits: the maximum (the job's replicas), never the minimum."""

    min_nodes: int
    max_nodes: int
    max_restarts: int
    admitted_gpus: int  # GPUs Kueue reserves quota for: max nodes x GPUs per node


@dataclass(frozen=True)
class Price:
    """Price of one GPU-hour and where it came from."""

    amount: Fraction
    currency: str
    source: str  # "--gpu-hour-price" or "pricing.gpuHour.<key>"


@dataclass(frozen=True)
class Explanation:
    """Everything ``explain`` says about one job."""

    namespace: Item[str]
    name: str
    file: str
    line: int
    column: int
    runtime: str
    runtime_object: str  # the runtime object the TrainJob references (may be the -sharded variant)
    runtime_builtin: bool
    #: The engine the job runs on: trainer, ray or training-operator.
    engine: str
    framework: str
    image: Item[str]
    nodes: Item[int]
    procs_per_node: Item[int]
    world_size: int
    gpus_per_node: Item[int]
    gpus_total: int
    accelerator: Item[str] | None
    gpu_memory: Item[str] | None  # one GPU's memory as written, e.g. 80Gi
    gpu_memory_bytes: int | None
    gang: Item[str]
    queue: Item[str] | None
    priority: Item[str] | None
    max_run_time: Item[str] | None
    max_run_time_seconds: int | None
    restarts: Item[int] | None
    stages: tuple[Stage, ...]
    model: ModelSize | None
    memory: MemoryFit | None
    checkpoint: CheckpointView | None
    data: DataView | None
    gpu_hours: Fraction | None
    price: Price | None
    cost: Fraction | None
    #: The elastic node range (``nodes: {min, max}``); ``nodes`` is then its max.
    elastic: ElasticView | None = None
    #: The model as the planner sees it (parameters, bytes per parameter, the spec.model shape).
    arch: Arch | None = None
    #: The parallelism planner's table and choice (needs spec.model and the GPU's memory).
    planner: Plan | None = None

    @property
    def gpu_memory_node(self) -> str | None:
        """GPU memory of one node as a quantity in the unit the runtime used (8 x 80Gi = 640Gi)."""
        if self.gpu_memory is None:
            return None
        one = Quantity.parse(self.gpu_memory.value)
        return str(Quantity(one.value * self.gpus_per_node.value, one.binary))

    @property
    def key(self) -> str:
        """``namespace/name``: how every command names a job."""
        return f"{self.namespace.value}/{self.name}"


def explain_plan(plan: JobPlan, project: Project | None = None, *, price: float | None = None) -> Explanation:
    """Explain one planned job; ``price`` (per GPU-hour) overrides the project's pricing."""
    project = project or Project()
    resolved = plan.resolved
    job = resolved.job
    runtime_loaded = resolved.runtime.loaded
    runtime = resolved.runtime.spec.spec
    mark = resolved.loaded.mark(())
    gpus_total = resolved.nodes.value * resolved.gpus_per_node.value
    found = runtime_accelerator(runtime)  # written, else inferred from a GPU node label (TS461)
    accelerator = found.accelerator if found is not None else None
    # Where the GPU was said: the accelerator block, or the node label it was inferred from.
    origin = Origin.INFERRED if found is not None and found.label is not None else Origin.RUNTIME
    said = ("spec", "scheduling", "nodeSelector", found.label) if found is not None and found.label else None
    gpu_memory_bytes = int(accelerator.memory.value) if accelerator is not None else None
    seconds = job.spec.max_run_time.seconds if job.spec.max_run_time is not None else None
    model = job.spec.checkpoint.model if job.spec.checkpoint is not None else None

    arch = fromplan.arch(plan)
    memory = planner = None
    if arch is not None and gpus_total > 0:
        state = state_of(arch)
        memory = memory_fit(state, gpus_total, resolved.gpus_per_node.value, gpu_memory_bytes)
        # The plan pass ran the planner (JobPlan.parallel); a model without its shape gets no table.
        planner = plan.parallel if arch.shape is not None else None
    hours = gpu_hours(gpus_total, seconds) if seconds is not None and gpus_total > 0 else None
    chosen = _price(project, accelerator.name if accelerator else None, price) if gpus_total > 0 else None
    return Explanation(
        namespace=_namespace(plan),
        name=resolved.name,
        file=resolved.loaded.file,
        line=mark.line,
        column=mark.column,
        runtime=resolved.runtime.name,
        runtime_object=plan.runtime_name,
        runtime_builtin=resolved.runtime.builtin,
        engine=plan.engine,
        framework=resolved.framework.value,
        image=_item(resolved.image, runtime_loaded),
        nodes=_item(resolved.nodes, runtime_loaded),
        procs_per_node=_item(resolved.procs_per_node, runtime_loaded),
        world_size=resolved.world_size,
        gpus_per_node=_item(resolved.gpus_per_node, runtime_loaded),
        gpus_total=gpus_total,
        accelerator=Sourced(accelerator.name, origin, said or ("spec", "accelerator", "name"), runtime_loaded)
        if accelerator
        else None,
        gpu_memory=Sourced(str(accelerator.memory), origin, said or ("spec", "accelerator", "memory"), runtime_loaded)
        if accelerator
        else None,
        gpu_memory_bytes=gpu_memory_bytes,
        gang=_gang(plan, project),
        queue=_job_field(plan, "queue", job.spec.queue),
        priority=_job_field(plan, "priority", job.spec.priority),
        max_run_time=Sourced(str(job.spec.max_run_time), Origin.JOB, ("spec", "maxRunTime"), resolved.loaded)
        if job.spec.max_run_time
        else None,
        max_run_time_seconds=seconds,
        restarts=Sourced(runtime.restarts.max, Origin.RUNTIME, ("spec", "restarts", "max"), runtime_loaded)
        if runtime.restarts is not None
        else None,
        stages=tuple(Stage(r.name, r.pods, r.name in plan.trainer_rjobs) for r in plan.rjobs),
        model=model,
        memory=memory,
        checkpoint=_checkpoint(plan, model),
        data=_data(plan),
        gpu_hours=hours,
        price=chosen,
        cost=cost(hours, chosen.amount) if hours is not None and chosen is not None else None,
        elastic=ElasticView(plan.elastic.min_nodes, plan.elastic.max_nodes, plan.elastic.max_restarts, gpus_total)
        if plan.elastic is not None
        else None,
        arch=arch,
        planner=planner,
    )


def _item(sourced: Sourced[T], runtime_loaded: LoadedSpec) -> Sourced[T]:
    """The resolver says "runtime" for a runtime's model default too; call that a built-in default."""
    if sourced.origin is Origin.RUNTIME and sourced.path and not runtime_loaded.has(sourced.path):
        return Sourced(sourced.value, Origin.DEFAULT)
    return sourced


def _job_field(plan: JobPlan, name: str, value: str | None) -> Sourced[str] | None:
    """A job field that project defaults may fill (queue, priority)."""
    if not value:
        return None
    resolved = plan.resolved
    if name in resolved.from_project:
        return Sourced(value, Origin.PROJECT)
    return Sourced(value, Origin.JOB, ("spec", name), resolved.loaded)


def _namespace(plan: JobPlan) -> Sourced[str]:
    resolved = plan.resolved
    if "namespace" in resolved.from_project:
        return Sourced(resolved.namespace, Origin.PROJECT)
    if resolved.loaded.namespace:
        return Sourced(resolved.namespace, Origin.JOB, ("metadata", "namespace"), resolved.loaded)
    return Sourced(resolved.namespace, Origin.DEFAULT)


def _gang(plan: JobPlan, project: Project) -> Sourced[str]:
    runtime_loaded = plan.resolved.runtime.loaded
    value = plan.resolved.runtime.spec.spec.gang.value
    if runtime_loaded.has(("spec", "gang")):
        return Sourced(value, Origin.RUNTIME, ("spec", "gang"), runtime_loaded)
    return Sourced(value, Origin.PROJECT if project.spec.defaults.gang is not None else Origin.DEFAULT)


def _price(project: Project, accelerator: str | None, override: float | None) -> Price | None:
    """The flag wins; else the project's price for this accelerator; else its ``default`` price."""
    pricing = project.spec.pricing
    if override is not None:
        return Price(as_price(override), pricing.currency, "--gpu-hour-price")
    for key in (accelerator, "default"):
        if key is not None and key in pricing.gpu_hour:
            return Price(as_price(pricing.gpu_hour[key]), pricing.currency, f"pricing.gpuHour.{key}")
    return None


def _checkpoint(plan: JobPlan, model: ModelSize | None) -> CheckpointView | None:
    ckpt = plan.checkpoint
    if ckpt is None:
        return None
    resolved = plan.resolved
    keep_path = ("spec", "checkpoint", "keep")
    keep = (
        Sourced(ckpt.keep, Origin.JOB, keep_path, resolved.loaded)
        if resolved.loaded.has(keep_path)
        else Sourced(ckpt.keep, Origin.DEFAULT)
    )
    # An explicit size or another checkpoint form still gets per-checkpoint figures from the model.
    sized = ckpt.sized or (
        checkpoint_size(model, ckpt.keep, checkpoint_format(resolved)) if model is not None else None
    )
    storage_class = None
    if ckpt.storage_class:
        origin = resolved.origin_of("checkpoint.storageClass")
        storage_class = (
            Sourced(ckpt.storage_class, origin)
            if origin is Origin.PROJECT
            else Sourced(ckpt.storage_class, origin, ("spec", "checkpoint", "storageClass"), resolved.loaded)
        )
    return CheckpointView(
        kind=ckpt.kind.value,
        location=ckpt.path,
        keep=keep,
        claim=ckpt.claim_name,
        sized=sized,
        auto=ckpt.sized is not None,
        volume=str(ckpt.size) if ckpt.kind is CheckpointKind.VOLUME and ckpt.size is not None else None,
        volume_bytes=int(ckpt.size.value) if ckpt.kind is CheckpointKind.VOLUME and ckpt.size is not None else None,
        storage_class=storage_class,
        access_mode=ckpt.access_mode.value if ckpt.access_mode is not None else None,
    )


def _data(plan: JobPlan) -> DataView | None:
    data = plan.resolved.job.spec.data
    if plan.data is None or data is None:
        return None
    return DataView(
        source=data.source, format=data.format.value, shard_by=data.shard_by.value, shards=plan.data.num_shards
    )
