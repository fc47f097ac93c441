"""The *plan* pass: decide what each job becomes before building any Kubernetes object.

A plan fixes the replicated jobs and their pod counts (for the name budget), the runtime
variant the job references, the checkpoint storage and the data shards.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from trainspec.compiler.engines import DEFAULT_ENGINE, Engine
from trainspec.compiler.observability.settings import Settings, settings_of
from trainspec.compiler.resolve import ResolvedJob
from trainspec.dsl.framework.types import Quantity
from trainspec.dsl.record import Record
from trainspec.dsl.spec.models import AccessMode, Data, Framework, Runtime, ShardBy, ShardMode
from trainspec.k8s.wellknown import DATASET_INITIALIZER, LAUNCHER, NODE

if TYPE_CHECKING:
    from trainspec.compiler.memory_model import CheckpointFormat
    from trainspec.compiler.parallelism.recommend import Plan as LayoutPlan
    from trainspec.compiler.sizing import CheckpointSize

SHARDED_SUFFIX = "-sharded"
# The replicated jobs Trainer knows by name (defined in trainspec.k8s.wellknown).
RJOB_NODE, RJOB_LAUNCHER, RJOB_DATASET = NODE, LAUNCHER, DATASET_INITIALIZER
WORKSPACE = "/workspace"
DATA_DIR = "/workspace/dataset"
PVC_ROOT = "/mnt/pvc"


class CheckpointKind(str, enum.Enum):
    VOLUME = "volume"
    CLAIM = "claim"
    URI = "uri"


class CheckpointPlan(Record):
    kind: CheckpointKind
    path: str  # mount path, or the URI for object storage
    keep: int
    claim_name: str | None = None
    size: Quantity | None = None
    sized: CheckpointSize | None = None  # set for size: auto
    access_mode: AccessMode | None = None
    storage_class: str | None = None
    #: A new volume's claim carries the GitOps controllers' keep annotations (checkpoint.protect).
    protect: bool = True


class DataPlan(Record):
    num_shards: int
    storage_uri: str
    source_claim: str | None  # pvc:// sources are mounted into the sharding stage
    #: index: trainers read the source through the manifest's ranges (so they mount it too); copy: shard files.
    mode: ShardMode = ShardMode.INDEX


class RJob(Record):
    """A replicated job of the JobSet a TrainJob becomes, with its largest pod count."""

    name: str
    pods: int
    replicas: int = 1


class ElasticPlan(Record):
    """An elastic job: it trains on ``min_nodes`` to ``max_nodes`` and is sized (and admitted) for the max."""

    min_nodes: int
    max_nodes: int
    max_restarts: int


class JobPlan(Record):
    """What one job becomes: every decision made once, read by the rules, the lowering and ``explain``."""

    resolved: ResolvedJob
    runtime_name: str  # the runtime object the TrainJob references (may be the -sharded variant)
    rjobs: tuple[RJob, ...]
    trainer_rjobs: tuple[str, ...]  # rjobs whose `node` container runs training code
    checkpoint: CheckpointPlan | None
    data: DataPlan | None
    #: The node range of an elastic job (``nodes: {min, max}``); None for a fixed node count.
    elastic: ElasticPlan | None = None
    #: The engine the job runs on: the lowering dialect.
    engine: Engine = DEFAULT_ENGINE
    #: The job's effective ``observability`` block (job over runtime over defaults).
    observability: Settings | None = None
    #: The parallelism planner's answer (every valid layout, the choice and why), decided once in
    #: the plan pass; None when the job has no ``spec.model``/``spec.parallelism`` to plan, runs on
    #: no GPU, or its runtime gives no GPU memory.
    parallel: LayoutPlan | None = None


def runtime_variants(runtime: Runtime) -> list[tuple[str, bool]]:
    """(object name, sharded) for every runtime object a Runtime compiles to."""
    names = [(runtime.metadata.name, False)]
    sharding = runtime.spec.data_sharding
    # Without a stage image (runtime or project default) there is no -sharded variant: trainspec
    # never emits an image nobody named; a job that needs the stage gets TS416 instead.
    if sharding is not None and sharding.image is not None:
        names.append((runtime.metadata.name + SHARDED_SUFFIX, True))
    return names


def trainer_rjob_names(framework: Framework) -> tuple[str, ...]:
    if framework in (Framework.DEEPSPEED, Framework.MPI):
        return (RJOB_LAUNCHER, RJOB_NODE)
    return (RJOB_NODE,)


def plan_job(resolved: ResolvedJob) -> JobPlan:
    job = resolved.job
    runtime = resolved.runtime.spec
    # The data is sharded only where the runtime has the sharding stage.
    data = job.spec.data if runtime.spec.data_sharding is not None else None
    sharded = data is not None
    runtime_name = runtime.metadata.name + (SHARDED_SUFFIX if sharded else "")
    return JobPlan(
        resolved=resolved,
        runtime_name=runtime_name,
        rjobs=_rjobs(resolved, sharded),
        trainer_rjobs=trainer_rjob_names(resolved.framework),
        checkpoint=_checkpoint(resolved),
        data=_data(resolved, data) if data is not None else None,
        elastic=_elastic(resolved),
        observability=settings_of(resolved),
    )


def _elastic(resolved: ResolvedJob) -> ElasticPlan | None:
    if resolved.node_range is None:
        return None
    span = resolved.node_range.value
    return ElasticPlan(min_nodes=span.min, max_nodes=span.max, max_restarts=span.max_restarts)


def _rjobs(resolved: ResolvedJob, sharded: bool) -> tuple[RJob, ...]:
    nodes = resolved.nodes.value
    rjobs: list[RJob] = []
    if sharded:
        rjobs.append(RJob(RJOB_DATASET, 1))
    # An external runtime's own initializers (Kubeflow Trainer's torchtune ones) count in the name budget.
    rjobs.extend(RJob(name, 1) for name in resolved.runtime.initializers)
    if resolved.framework in (Framework.DEEPSPEED, Framework.MPI):
        mpi = resolved.runtime.spec.spec.mpi
        as_node = mpi.run_launcher_as_node if mpi is not None else True
        rjobs.append(RJob(RJOB_NODE, max(nodes - 1, 1) if as_node else nodes))
        rjobs.append(RJob(RJOB_LAUNCHER, 1))
    else:
        rjobs.append(RJob(RJOB_NODE, nodes))
    return tuple(rjobs)


def _checkpoint(resolved: ResolvedJob) -> CheckpointPlan | None:
    spec = resolved.job.spec.checkpoint
    if spec is None:
        return None
    if spec.uri is not None:
        return CheckpointPlan(CheckpointKind.URI, path=spec.uri, keep=spec.keep)
    if spec.claim_name is not None:
        return CheckpointPlan(
            CheckpointKind.CLAIM,
            path=spec.path,
            keep=spec.keep,
            claim_name=spec.claim_name,
            access_mode=spec.claim_access_mode,
        )
    sized = None
    if spec.size == "auto":
        # The sizing model is imported here: most jobs give a size, a claim or a URI.
        from trainspec.compiler.sizing import checkpoint_size

        assert spec.model is not None, "Checkpoint._check: size: auto needs a model"
        sized = checkpoint_size(spec.model, spec.keep, checkpoint_format(resolved))
        size = Quantity.parse(f"{sized.volume_gi}Gi")
    else:
        assert spec.size is not None, "Checkpoint._check: one of size, claimName and uri"
        size = spec.size
    default_mode = AccessMode.READ_WRITE_MANY if resolved.nodes.value > 1 else AccessMode.READ_WRITE_ONCE
    return CheckpointPlan(
        CheckpointKind.VOLUME,
        path=spec.path,
        keep=spec.keep,
        claim_name=checkpoint_claim_name(resolved.name),
        size=size,
        sized=sized,
        access_mode=spec.access_mode or default_mode,
        storage_class=spec.storage_class,
        protect=spec.protect,
    )


def checkpoint_format(resolved: ResolvedJob) -> CheckpointFormat:
    """Who writes this job's checkpoints: ``checkpoint.model.format``, else what
    ``parallelism.framework`` or the runtime's framework says, else unknown (sized for the largest)."""
    from trainspec.compiler.memory_model import format_for

    spec = resolved.job.spec
    model = spec.checkpoint.model if spec.checkpoint is not None else None
    declared = model.format.value if model is not None and model.format is not None else None
    parallel = spec.parallelism.framework if spec.parallelism is not None else None
    runtime = resolved.runtime.spec.spec.framework
    return format_for(declared, parallel.value if parallel is not None else None, runtime.value)


def checkpoint_claim_name(job_name: str) -> str:
    return f"{job_name}-checkpoints"


def _data(resolved: ResolvedJob, data: Data) -> DataPlan:
    shards = resolved.world_size if data.shard_by is ShardBy.RANK else resolved.nodes.value
    source = data.source
    claim = None
    if source.startswith("pvc://"):
        claim = source[len("pvc://") :].split("/", 1)[0]
    elif source.startswith("/"):
        # Trainer's storageUri must be scheme://...; a mounted path travels as file://.
        source = "file://" + source
    return DataPlan(num_shards=shards, storage_uri=source, source_claim=claim, mode=data.shard_mode)
