"""Lower a planned job to its TrainJob (and the checkpoint PVC it needs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from trainspec.compiler.lower import checkpoint, env as envs, kueue, labels as L
from trainspec.compiler.lower.field_sources import claim_sources, metadata_sources
from trainspec.compiler.lower.trainer import sharding
from trainspec.compiler.plan import RJOB_DATASET, JobPlan
from trainspec.compiler.provenance import FieldSources, Origin, SpecRef
from trainspec.dsl.spec.models import Framework, Scope
from trainspec.k8s import (
    ContainerPatch,
    JobSetSpecPatch,
    JobSetTemplatePatch,
    JobSpecPatch,
    JobTemplatePatch,
    MetadataPatch,
    ObjectMeta,
    PersistentVolumeClaim,
    PodSpecPatch,
    PodTemplatePatch,
    ReplicatedJobPatch,
    ResourceRequirements,
    RuntimePatch,
    RuntimeRef,
    Trainer,
    TrainingRuntimeSpecPatch,
    TrainJob,
    TrainJobSpec,
    Volume,
)
from trainspec.k8s.wellknown import DATA_DIR_ENV, NODE, NUM_SHARDS_ENV, SHARD_SOURCE_VOLUME


def lower_job(plan: JobPlan) -> list[PersistentVolumeClaim | TrainJob]:
    """The objects of one job, in apply order: the checkpoint PVC, then the TrainJob."""
    resolved = plan.resolved
    objects: list[PersistentVolumeClaim | TrainJob] = []
    if plan.checkpoint is not None:
        pvc = checkpoint.claim(plan.checkpoint, resolved.name, resolved.namespace)
        if pvc is not None:
            objects.append(pvc)
    objects.append(_trainjob(plan))
    return objects


def _trainjob(plan: JobPlan) -> TrainJob:
    resolved = plan.resolved
    job = resolved.job
    runtime = resolved.runtime.spec
    kind: Literal["ClusterTrainingRuntime", "TrainingRuntime"] = (
        "TrainingRuntime" if runtime.spec.scope is Scope.NAMESPACE else "ClusterTrainingRuntime"
    )
    deadline = job.spec.max_run_time.seconds if job.spec.max_run_time else None
    return TrainJob(
        metadata=ObjectMeta(
            name=resolved.name,
            namespace=resolved.namespace,
            labels={**job.metadata.labels, **kueue.job_labels(job)} or None,
            annotations=dict(job.metadata.annotations) or None,
        ),
        spec=TrainJobSpec(
            runtime_ref=RuntimeRef(name=plan.runtime_name, api_group=L.API_GROUP, kind=kind),
            initializer=sharding.initializer(job.spec.data, plan.data) if plan.data and job.spec.data else None,
            trainer=_trainer(plan),
            runtime_patches=_patches(plan) or None,
            active_deadline_seconds=deadline,
        ),
    )


def _trainer(plan: JobPlan) -> Trainer:
    resolved = plan.resolved
    job = resolved.job
    env = dict(job.spec.env)
    if plan.checkpoint is not None:
        env.update(checkpoint.env(plan.checkpoint))
    if plan.data is not None:
        env.update(sharding.trainer_env(plan.data))
    env.update(envs.layout(plan))
    env.update(envs.run(plan))
    env.update(envs.tracking(plan))
    env_vars = envs.plain(env) + envs.from_secrets(job.spec.secret_env)
    per_process = resolved.framework in (Framework.TORCH, Framework.DEEPSPEED, Framework.MPI)
    return Trainer(
        image=job.spec.image,
        command=list(job.spec.command) if job.spec.command is not None else None,
        args=list(job.spec.args) if job.spec.args is not None else None,
        env=sorted(env_vars, key=lambda e: e.name) or None,
        num_nodes=resolved.nodes.value,
        resources_per_node=_resources(plan),
        num_proc_per_node=resolved.procs_per_node.value if per_process else None,
    )


def _resources(plan: JobPlan) -> ResourceRequirements | None:
    """The merged per-node resources, emitted only when the job overrides any.

    The full merge (runtime, network devices, job) is written out, so the result is the same on
    Trainer 2.3 (which merges) and 2.2 (which replaces).
    """
    resources = plan.resolved.resources
    if not any(value.origin is Origin.JOB for value in resources.values()):
        return None
    values = {name: value.value.to_k8s() for name, value in resources.items()}
    return ResourceRequirements(requests=values, limits=dict(values))


def _patches(plan: JobPlan) -> list[RuntimePatch]:
    """One runtimePatches entry owned by trainspec: pod labels, annotations, volumes and mounts."""
    rjobs = [p for p in (_trainer_patch(plan, name) for name in plan.trainer_rjobs) if p is not None]
    stage = _stage_patch(plan)
    if stage is not None:
        rjobs.insert(0, stage)
    if not rjobs:
        return []
    return [
        RuntimePatch(
            manager=L.PATCH_MANAGER,
            training_runtime_spec=TrainingRuntimeSpecPatch(
                template=JobSetTemplatePatch(spec=JobSetSpecPatch(replicated_jobs=rjobs))
            ),
        )
    ]


def _trainer_patch(plan: JobPlan, rjob: str) -> ReplicatedJobPatch | None:
    job = plan.resolved.job
    annotations = {**job.spec.pod_annotations, **kueue.topology_annotations(job)}
    labels = {**job.spec.pod_labels, **L.pod_labels(plan)}
    volumes, mounts = [], []
    if plan.checkpoint is not None:
        volume, mount = checkpoint.volume(plan.checkpoint), checkpoint.mount(plan.checkpoint)
        if volume is not None and mount is not None:
            volumes.append(volume)
            mounts.append(mount)
    # Index mode: trainers read the source's own files, so they mount a pvc:// source as the stage does.
    source = sharding.trainer_source_volume(plan.data) if plan.data else None
    if source is not None:
        volumes.append(source[0])
        mounts.append(source[1])
    if not (annotations or labels or volumes):
        return None
    return _pod_patch(
        rjob,
        MetadataPatch(labels=labels or None, annotations=annotations or None) if (labels or annotations) else None,
        volumes or None,
        [ContainerPatch(name=NODE, volume_mounts=mounts)] if mounts else None,
    )


def _stage_patch(plan: JobPlan) -> ReplicatedJobPatch | None:
    source = sharding.source_volume(plan.data) if plan.data else None
    if source is None:
        return None
    volume, mount = source
    return _pod_patch(RJOB_DATASET, None, [volume], [ContainerPatch(name=RJOB_DATASET, volume_mounts=[mount])])


def _pod_patch(
    rjob: str, metadata: MetadataPatch | None, volumes: list[Volume] | None, containers: list[ContainerPatch] | None
) -> ReplicatedJobPatch:
    spec = PodSpecPatch(volumes=volumes, containers=containers) if (volumes or containers) else None
    return ReplicatedJobPatch(
        name=rjob,
        template=JobTemplatePatch(spec=JobSpecPatch(template=PodTemplatePatch(metadata=metadata, spec=spec))),
    )


# -- provenance: which spec field decided each manifest field ---------------------------------------

_POD = ("template", "spec", "template")


def job_sources(plan: JobPlan, obj: PersistentVolumeClaim | TrainJob) -> FieldSources:
    """What lowering set in ``obj`` (a job's PVC or TrainJob), field by field, and from where."""
    resolved = plan.resolved
    job = resolved.loaded

    def at(*path: str) -> SpecRef:
        return SpecRef(job, path)

    if isinstance(obj, PersistentVolumeClaim):
        return claim_sources(plan)
    sources = metadata_sources(job)
    for path, ref in (
        (("spec", "suspend"), at("spec", "queue")),
        (("spec", "activeDeadlineSeconds"), at("spec", "maxRunTime")),
        (("spec", "runtimeRef"), at("spec", "runtime")),
        (("spec", "initializer"), at("spec", "data")),
        # Trainer fields the job leaves to its runtime: the runtime reference is the line to fix.
        (("spec", "trainer"), at("spec", "runtime")),
        (("spec", "trainer", "args"), at("spec", "args")),
        (("spec", "trainer", "env"), at("spec", "env")),
    ):
        sources.set(path, ref)
    sources.set(("spec", "trainer", "numNodes"), resolved.nodes)
    sources.set(("spec", "trainer", "numProcPerNode"), resolved.procs_per_node)
    sources.set(("spec", "trainer", "image"), resolved.image)
    sources.set(("spec", "trainer", "command"), resolved.command)
    job_resources = [v for v in resolved.resources.values() if v.origin is Origin.JOB]
    sources.set(("spec", "trainer", "resourcesPerNode"), job_resources[0] if job_resources else None)
    trainer = obj.spec.trainer
    spec = resolved.job.spec
    for index, var in enumerate((trainer.env if trainer else None) or []):
        if var.name in spec.env:
            sources.set(("spec", "trainer", "env", index), at("spec", "env", var.name))
        elif var.name in spec.secret_env:
            sources.set(("spec", "trainer", "env", index), at("spec", "secretEnv", var.name))
        elif plan.data is not None and (var.name.startswith(DATA_DIR_ENV) or var.name == NUM_SHARDS_ENV):
            sources.set(("spec", "trainer", "env", index), at("spec", "data"))
        else:
            sources.set(("spec", "trainer", "env", index), at("spec", "checkpoint"))
    _record_patches(plan, obj, sources, at)
    return sources


def _record_patches(plan: JobPlan, obj: TrainJob, sources: FieldSources, at: Callable[..., SpecRef]) -> None:
    topology_keys = set(kueue.topology_annotations(plan.resolved.job))
    for p, patch in enumerate(obj.spec.runtime_patches or []):
        template = patch.training_runtime_spec.template if patch.training_runtime_spec else None
        rjobs = (template.spec.replicated_jobs if template is not None and template.spec else None) or []
        sources.set(("spec", "runtimePatches", p), at("spec", "checkpoint"))
        for r, rjob in enumerate(rjobs):
            base = ("spec", "runtimePatches", p, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", r, *_POD)
            owner = at("spec", "data") if rjob.name == RJOB_DATASET else at("spec", "checkpoint")
            sources.set(base, owner)
            sources.set((*base, "metadata", "labels"), at("spec", "podLabels"))
            sources.set((*base, "metadata", "annotations"), at("spec", "podAnnotations"))
            for key in topology_keys:
                sources.set((*base, "metadata", "annotations", key), at("spec", "topology", "level"))
            pod = (
                rjob.template.spec.template.spec
                if rjob.template and rjob.template.spec and rjob.template.spec.template
                else None
            )
            for v, volume in enumerate((pod.volumes if pod else None) or []):
                if volume.name == SHARD_SOURCE_VOLUME:  # the data source, in the stage and in index-mode trainers
                    sources.set((*base, "spec", "volumes", v), at("spec", "data", "source"))
    # Trainer 2.1 spells the same patches podTemplateOverrides and spec.labels/annotations.
    sources.set(("spec", "podTemplateOverrides"), at("spec", "checkpoint"))
    sources.set(("spec", "labels"), at("spec", "podLabels"))
    sources.set(("spec", "annotations"), at("spec", "podAnnotations"))
