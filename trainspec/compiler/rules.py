"""Checks on resolved jobs and their plans: the problems a cluster would only show after apply.

Each rule is a small function ``(plan) -> diagnostics``; :data:`RULES` lists them in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from trainspec.compiler.engines import DEFAULT_ENGINE, Engine
from trainspec.compiler.lower.dialects import Dialect, dialect_for
from trainspec.compiler.plan import WORKSPACE, CheckpointKind, JobPlan
from trainspec.compiler.resolve import Origin, related_at
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.kube_facts import HUGEPAGES_PREFIX, JAX_PLUGIN_ENV, TRAINER_RESERVED_ENV
from trainspec.dsl.spec.models import AccessMode, Framework, Gang, Mpi
from trainspec.k8s.wellknown import SHM_MOUNT_PATH

Rule = Callable[[JobPlan], Iterator[Diagnostic]]


#: What Trainer's JAX plugin sets in the trainer container (plugins/jax/jax.go). Its webhook
#: accepts a TrainJob that sets them too, and one value then silently replaces the other.
#: framework -> (mlPolicy source, env names that source's Trainer plugin sets, webhook rejects them).
#: Only these exact names: torchrun reads any PET_<option> and Open MPI any OMPI_MCA_<param>, and
#: JAX_PLATFORMS and friends are JAX's own settings, so whole prefixes would refuse real jobs.
TRAINER_ENV: dict[Framework, tuple[str, tuple[str, ...], bool]] = {
    Framework.TORCH: ("torch", TRAINER_RESERVED_ENV["Torch"], True),
    Framework.DEEPSPEED: ("mpi", TRAINER_RESERVED_ENV["MPI"], True),
    Framework.MPI: ("mpi", TRAINER_RESERVED_ENV["MPI"], True),
    Framework.JAX: ("jax", JAX_PLUGIN_ENV, False),
}


def _reserved_env(plan: JobPlan) -> Iterator[Diagnostic]:
    """TS303, the framework half: env names the runtime's Trainer plugin sets (the other half,
    trainspec's own TRAINSPEC_* names, needs no runtime: trainspec.dsl.spec.semantics)."""
    resolved = plan.resolved
    entry = TRAINER_ENV.get(resolved.framework)
    if entry is None:
        return
    source, names, rejected = entry
    framework = resolved.framework.value
    related = (
        related_at(
            resolved.runtime.loaded, ("spec", "framework"), f"runtime {resolved.runtime.name} is a {framework} runtime"
        ),
    )
    for field, values in (("env", resolved.job.spec.env), ("secretEnv", resolved.job.spec.secret_env)):
        for name in values:
            if name not in names:
                continue
            if rejected:
                message = (
                    f"{name} is reserved in a {framework} job: Kubeflow Trainer's {source} plugin "
                    f"(mlPolicy.{source}) sets it, and Trainer's webhook rejects a TrainJob that sets it"
                )
                hint = "rename the variable; Trainer sets it from the job's nodes and processes"
            else:
                message = (
                    f"{name} is set by Kubeflow Trainer's JAX plugin (mlPolicy.{source}) in every trainer "
                    "pod; a value set here clashes with the one Trainer computes"
                )
                hint = "remove it; Trainer derives it from the job's nodes"
            yield resolved.loaded.diagnostic(
                codes.RESERVED_ENV, ("spec", field, name), message, hint=hint, related=related, at_key=True
            )


def _max_nodes(plan: JobPlan) -> Iterator[Diagnostic]:
    resolved = plan.resolved
    runtime = resolved.runtime.spec
    cap = runtime.spec.max_nodes
    if cap is not None and resolved.nodes.value > cap:
        yield resolved.loaded.diagnostic(
            codes.RUNTIME_LIMIT,
            resolved.nodes.path or ("spec", "nodes"),
            f"{resolved.nodes.describe('nodes')}, but runtime {runtime.metadata.name} caps at {cap} (maxNodes)",
            hint=f"ask for at most {cap} nodes, or use a runtime that allows more",
            related=(related_at(resolved.runtime.loaded, ("spec", "maxNodes"), "maxNodes is set here"),),
        )


def _procs_vs_gpus(plan: JobPlan) -> Iterator[Diagnostic]:
    resolved = plan.resolved
    procs, gpus = resolved.procs_per_node, resolved.gpus_per_node
    path = procs.path if procs.origin is Origin.JOB else ("spec", "procsPerNode")
    if resolved.framework is Framework.JAX and procs.value > 1:
        yield resolved.loaded.diagnostic(
            codes.PROCS_VS_GPUS,
            path,
            f"{procs.describe('procsPerNode')}, but JAX runs one process per node",
            severity=Severity.WARNING,
            hint="remove procsPerNode; one JAX process drives all GPUs of its node",
        )
    elif gpus.value > 0 and procs.value > gpus.value:
        yield resolved.loaded.diagnostic(
            codes.PROCS_VS_GPUS,
            path,
            f"{procs.describe('procsPerNode')} but {gpus.describe('GPUs per node')}: processes would share GPUs",
            hint=f"set procsPerNode to {gpus.value} (one process per GPU)",
        )
    elif gpus.value > 0 and procs.value < gpus.value and resolved.framework is not Framework.JAX:
        yield resolved.loaded.diagnostic(
            codes.PROCS_VS_GPUS,
            path,
            f"{procs.describe('procsPerNode')} leaves {gpus.value - procs.value} of {gpus.value} GPUs per node idle",
            severity=Severity.WARNING,
            hint=f"set procsPerNode to {gpus.value}, or ask for fewer GPUs",
        )


def _shared_volumes(plan: JobPlan) -> Iterator[Diagnostic]:
    resolved = plan.resolved
    nodes = resolved.nodes.value
    if nodes <= 1:
        return
    ckpt = plan.checkpoint
    if (
        ckpt is not None
        and ckpt.kind is not CheckpointKind.URI
        and ckpt.access_mode in (AccessMode.READ_WRITE_ONCE, AccessMode.READ_WRITE_ONCE_POD)
    ):
        field = "accessMode" if ckpt.kind is CheckpointKind.VOLUME else "claimAccessMode"
        yield resolved.loaded.diagnostic(
            codes.RWO_MULTI_NODE,
            ("spec", "checkpoint", field),
            f"{nodes} nodes write checkpoints, but the volume is {ckpt.access_mode.value}: only one node can mount it",
            hint="use ReadWriteMany storage, or checkpoint.uri for object storage",
        )
    sharding = resolved.runtime.spec.spec.data_sharding
    if plan.data is not None and sharding is not None and sharding.access_mode is not AccessMode.READ_WRITE_MANY:
        yield resolved.loaded.diagnostic(
            codes.RWO_MULTI_NODE,
            ("spec", "data"),
            f"{nodes} nodes read the shards, but runtime {resolved.runtime.name} keeps them on a "
            f"{sharding.access_mode.value} volume",
            hint="set dataSharding.accessMode: ReadWriteMany in the runtime",
            related=(related_at(resolved.runtime.loaded, ("spec", "dataSharding"), "the shard volume"),),
        )


def _data_needs_sharding(plan: JobPlan) -> Iterator[Diagnostic]:
    resolved = plan.resolved
    if resolved.job.spec.data is not None and resolved.runtime.spec.spec.data_sharding is None:
        yield resolved.loaded.diagnostic(
            codes.SHARDING_UNSUPPORTED,
            ("spec", "data"),
            f"runtime {resolved.runtime.name} cannot run the data-sharding stage (it has no dataSharding)",
            hint="add spec.dataSharding to the runtime, or use a built-in runtime",
            related=(related_at(resolved.runtime.loaded, ("spec",), "the runtime"),),
        )


def _stage_image(plan: JobPlan, dialect: Dialect) -> Iterator[Diagnostic]:
    """TS416: the sharding stage would run, but nobody named its image (no built-in default exists)."""
    resolved = plan.resolved
    sharding = resolved.runtime.spec.spec.data_sharding
    # Other engines cannot run the stage at all; their own rules say so (TS521).
    if not dialect.sharding_stage or plan.data is None or sharding is None or sharding.image is not None:
        return
    name = resolved.runtime.name
    yield resolved.loaded.diagnostic(
        codes.NO_STAGE_IMAGE,
        ("spec", "data"),
        f"the data-sharding stage needs an image, and neither runtime {name} (dataSharding.image) nor the "
        "project file (spec.defaults.stageImage) names one",
        hint=f"set dataSharding.image in runtime {name}, or spec.defaults.stageImage in trainspec.yaml, to an "
        "image built from trainspec's Dockerfile and pushed to your registry (docs/stage-image.md)",
        related=(related_at(resolved.runtime.loaded, ("spec", "dataSharding"), f"runtime {name} runs the stage"),),
    )


def _gang(plan: JobPlan) -> Iterator[Diagnostic]:
    resolved = plan.resolved
    gang = resolved.runtime.spec.spec.gang
    queue = resolved.job.spec.queue
    if gang is Gang.KUEUE and queue is None and resolved.nodes.value > 1:
        yield resolved.loaded.diagnostic(
            codes.GANG_WITHOUT_QUEUE,
            ("spec",),
            f"runtime {resolved.runtime.name} relies on Kueue for gang admission, but the job has no queue: "
            "its pods will not be admitted all-or-nothing",
            severity=Severity.WARNING,
            hint="set spec.queue to a Kueue LocalQueue",
        )
    if gang is Gang.VOLCANO and queue is not None:
        yield resolved.loaded.diagnostic(
            codes.GANG_CONFLICT,
            ("spec", "queue"),
            "this job is queued by Kueue and by Volcano (gang: volcano): two quota systems for one job",
            severity=Severity.WARNING,
            hint="use one queueing system: drop spec.queue or use gang: kueue",
        )
    if gang is Gang.COSCHEDULING and plan.data is not None:
        yield resolved.loaded.diagnostic(
            codes.GANG_CONFLICT,
            ("spec", "data"),
            "coscheduling gangs count the sharding stage's pod too, but trainer pods start only after it "
            "completes: the gang may never reach quorum",
            severity=Severity.WARNING,
            hint="use gang: kueue for runtimes with the sharding stage",
        )


def _names(plan: JobPlan) -> Iterator[Diagnostic]:
    budget = dialect_for(None, plan.engine).name_budget(plan)  # the names this engine derives
    resolved = plan.resolved
    if len(resolved.name) > budget.max_length:
        yield resolved.loaded.diagnostic(
            codes.NAME_BUDGET,
            ("metadata", "name"),
            f"name {resolved.name!r} has {len(resolved.name)} characters; with {budget.reason} "
            f"it may have at most {budget.max_length}",
            hint=f"shorten the name to {budget.max_length} characters or fewer",
        )


def _pod_the_server_refuses(plan: JobPlan) -> Iterator[Diagnostic]:
    """TS419: what the API server refuses of the trainer pods once job and runtime are merged, when
    the Job controller creates them (so long after the TrainJob was accepted): two volumes at one
    mount path, huge pages without cpu or memory."""
    resolved = plan.resolved
    runtime = resolved.runtime.spec.spec
    ckpt = plan.checkpoint
    if ckpt is not None and ckpt.kind is not CheckpointKind.URI:
        taken = {}
        if runtime.shared_memory is not None:
            taken[SHM_MOUNT_PATH] = f"runtime {resolved.runtime.name}'s sharedMemory volume"
        if plan.data is not None and dialect_for(None, plan.engine).sharding_stage:
            taken[WORKSPACE] = "the data-sharding stage's shard volume"
        if resolved.framework in (Framework.DEEPSPEED, Framework.MPI):
            taken[(runtime.mpi or Mpi()).ssh_auth_mount_path] = "the MPI SSH keys (mpi.sshAuthMountPath)"
        if ckpt.path in taken:
            yield resolved.loaded.diagnostic(
                codes.POD_REFUSED,
                ("spec", "checkpoint", "path"),
                f"checkpoint.path {ckpt.path} is also where {taken[ckpt.path]} is mounted: the API server "
                "refuses a container with two volumes at one mount path",
                hint="mount the checkpoints elsewhere, e.g. path: /checkpoints",
            )
    if resolved.runtime.external:
        return  # the cluster's runtime may give the container cpu or memory trainspec does not know of
    names = set(resolved.resources)
    pages = sorted(name for name in names if name.startswith(HUGEPAGES_PREFIX))
    if pages and not names & {"cpu", "memory"}:
        source = resolved.resources[pages[0]]
        path = (*source.path, "extra", pages[0]) if source.path[-1:] == ("resourcesPerNode",) else source.path
        yield (source.spec or resolved.loaded).diagnostic(
            codes.POD_REFUSED,
            path,
            f"{pages[0]} is asked for without cpu or memory: the API server refuses a container whose huge "
            "pages come without a cpu or memory request",
            hint="set resourcesPerNode.memory (or cpu) in the job or its runtime",
        )


def _observability(plan: JobPlan) -> Iterator[Diagnostic]:
    chosen = plan.observability
    if chosen is not None and not chosen.pod_monitor and not plan.resolved.job.spec.pod_labels:
        # Both rules need a PodMonitor or pod labels: most jobs have neither, and their run then
        # imports neither the rules nor the label module they read.
        return iter(())
    from trainspec.compiler.observability.observability_rules import observability_problems

    return observability_problems(plan)


RULES: tuple[Rule, ...] = (
    _reserved_env,
    _max_nodes,
    _procs_vs_gpus,
    _shared_volumes,
    _data_needs_sharding,
    _gang,
    _names,
    _pod_the_server_refuses,
    _observability,
)


def _elastic_engine(plan: JobPlan, dialect: Dialect) -> Iterator[Diagnostic]:
    """TS521: an elastic node range on Kubeflow Trainer v2, which has no elastic policy (KEP-2903 is open)."""
    resolved = plan.resolved
    if plan.elastic is None or dialect.elastic:
        return
    engine = dialect.name
    span = plan.elastic
    name = resolved.runtime.name
    chosen = resolved.runtime.spec.spec.engine
    if chosen is not None and dialect_for(None, chosen).elastic:  # the command line overrode the runtime
        hint = f"drop engine={engine} from --target: runtime {name} runs its jobs on {chosen.value}"
        related = (related_at(resolved.runtime.loaded, ("spec", "engine"), f"runtime {name} asks for {chosen.value}"),)
    else:
        hint = (
            f"run it on the Training Operator (--target training-operator, or spec.engine: training-operator "
            f"in runtime {name}), or ask for a fixed count: nodes: {span.max_nodes}"
        )
        related = (related_at(resolved.runtime.loaded, ("spec",), f"runtime {name}, which runs on {engine}"),)
    yield resolved.loaded.diagnostic(
        codes.TARGET_UNSUPPORTED,
        ("spec", "nodes"),
        f"nodes {{min: {span.min_nodes}, max: {span.max_nodes}}} asks for elastic training, which is not in "
        f"Kubeflow Trainer v2 (its TrainJobs run a fixed numNodes; elastic torchrun is KEP-2903, still open)",
        hint=hint,
        related=related,
    )


def _ray_settings_engine(plan: JobPlan, dialect: Dialect) -> Iterator[Diagnostic]:
    """TS521: ``ray:`` (the Ray head's size) on a job or runtime whose engine is not ray."""
    if dialect.ray_head:
        return
    engine = dialect.name
    resolved = plan.resolved
    for loaded, what in ((resolved.loaded, "job"), (resolved.runtime.loaded, f"runtime {resolved.runtime.name}")):
        spec = getattr(loaded.spec, "spec", None)
        if getattr(spec, "ray", None) is None:
            continue
        yield loaded.diagnostic(
            codes.TARGET_UNSUPPORTED,
            ("spec", "ray"),
            f"{what}: spec.ray (the Ray head's size) only applies to engine ray; this job runs on {engine}, "
            "which has no Ray head",
            hint="drop spec.ray, or run the job on ray (--target ray, or spec.engine: ray in its runtime)",
        )


def _parallel_layout(plan: JobPlan) -> Iterator[Diagnostic]:
    """TS420-TS428: the parallelism planner's checks of spec.model and a pinned spec.parallelism."""
    if plan.resolved.job.spec.model is None and plan.resolved.job.spec.parallelism is None:
        return  # most jobs: the planner is not even imported
    from trainspec.compiler.parallelism.planner_diagnostics import check

    yield from check(plan)


def check_plan(plan: JobPlan, engine: Engine | str = DEFAULT_ENGINE) -> list[Diagnostic]:
    """Every plan rule's findings for ``plan``, in :data:`RULES` order, then the rules that depend
    on the ``engine`` the job runs on (they ask its dialect)."""
    dialect = dialect_for(None, engine)
    return [
        *(d for rule in RULES for d in rule(plan)),
        *_stage_image(plan, dialect),
        *_elastic_engine(plan, dialect),
        *_ray_settings_engine(plan, dialect),
        *_parallel_layout(plan),
    ]
