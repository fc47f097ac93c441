"""TrainJob (``trainer.kubeflow.org/v1alpha1``) and its (Cluster)TrainingRuntime -> specs.

The runtime, when it is among the inputs, becomes a ``Runtime`` of the same name (its trainer
pod: image, command, env, resources, ``/dev/shm``, scheduling; ``mlPolicy``: framework, nodes,
processes per node, MPI settings; ``podGroupPolicy``: the gang; ``failurePolicy``: restarts).
Otherwise the job keeps referring to the runtime by name (TS547): it exists in the cluster.
The TrainJob's ``trainer`` (image, command, args, env, numNodes, numProcPerNode,
resourcesPerNode), Kueue's labels, ``suspend``, ``activeDeadlineSeconds`` and the pod labels,
annotations and checkpoint claim of trainspec's ``runtimePatches`` entry go to the TrainingJob.
"""

from __future__ import annotations

from trainspec.compiler.engines import Engine
from trainspec.dsl import codes
from trainspec.dsl.spec.models import Framework, Mpi
from trainspec.k8s.wellknown import (
    ANCESTOR_LABEL,
    FRAMEWORK_LABEL,
    LAUNCHER,
    MANAGED_BY_LABEL,
    NODE,
)
from trainspec.migrate import shared_fields as common
from trainspec.migrate.draft import Draft
from trainspec.migrate.mpijob import EMITTED_IMPLEMENTATION
from trainspec.migrate.pod_template import (
    MigrationError,
    Pod,
    find_pod,
    read_env,
    read_pod,
    read_pod_metadata,
    read_resource_block,
    read_volumes,
)
from trainspec.migrate.source import Source

KIND = "TrainJob"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
_TRAINER = ("spec", "trainer")
_RJOBS = ("spec", "template", "spec", "replicatedJobs")


def read(src: Source, runtimes: dict[tuple[str, str | None], Source]) -> Draft:
    """The draft specs of one TrainJob; ``runtimes``: the input runtimes by (kind, namespace or None)."""
    name = common.job_name(src)
    namespace = src.get(("metadata", "namespace"))
    ref = src.mapping(("spec", "runtimeRef"))
    runtime_name = ref.get("name")
    if not isinstance(runtime_name, str):
        raise MigrationError(src.error(("spec", "runtimeRef"), "the TrainJob has no spec.runtimeRef.name"))
    given = ref.get("kind")
    kind: str = given if isinstance(given, str) and given in RUNTIME_KINDS else RUNTIME_KINDS[0]
    src.use(("spec", "runtimeRef"))
    runtime = runtimes.get((kind, runtime_name if kind == RUNTIME_KINDS[0] else f"{namespace}/{runtime_name}"))
    framework = _framework(runtime) if runtime is not None else Framework.TORCH
    draft = Draft(src, name, namespace, framework, Engine.TRAINER)
    if runtime is None:
        draft.runtime_ref = runtime_name
        src.warn(
            ("spec", "runtimeRef", "name"),
            f"the runtime {runtime_name} is not among the inputs: the job refers "
            "to it by name (it must exist in the cluster, or be a Kubeflow Trainer runtime)",
            code=codes.RUNTIME_BY_NAME,
            hint="give its ClusterTrainingRuntime/TrainingRuntime manifest too, to migrate it as a Runtime",
        )
    else:
        read_runtime(runtime, draft)
    common.read_metadata(src, draft)
    _trainer(src, draft)
    common.read_deadline(src, draft, ("spec", "activeDeadlineSeconds"))
    common.read_suspend(src, draft, ("spec", "suspend"))
    _patches(src, draft)
    if runtime is not None and "gang" not in draft.runtime and "queue" not in draft.job:
        draft.runtime["gang"] = "none"
    return draft


def runtime_key(src: Source) -> tuple[str, str]:
    """How TrainJobs find a runtime among the inputs."""
    name = str(src.get(("metadata", "name"), ""))
    if src.obj.kind == RUNTIME_KINDS[0]:
        return (RUNTIME_KINDS[0], name)
    return (RUNTIME_KINDS[1], f"{src.get(('metadata', 'namespace'))}/{name}")


def _framework(runtime: Source) -> Framework:
    policy = runtime.mapping(("spec", "mlPolicy"))
    label = runtime.get(("metadata", "labels", FRAMEWORK_LABEL))
    if "mpi" in policy:
        return Framework.DEEPSPEED if label == Framework.DEEPSPEED.value else Framework.MPI
    if "jax" in policy:
        return Framework.JAX
    return Framework.TORCH


def read_runtime(rt: Source, draft: Draft) -> None:
    """A (Cluster)TrainingRuntime's trainer pod and policies into the draft's Runtime."""
    draft.runtime_ref = None
    name = common.job_name(rt)
    draft.runtime_own_name = name
    if rt.obj.kind == RUNTIME_KINDS[1]:
        draft.runtime["scope"] = "namespace"
    rt.use(("metadata", "namespace"), ("metadata", "labels", FRAMEWORK_LABEL), ("metadata", "labels", MANAGED_BY_LABEL))
    rjobs = {str(j.get("name")): i for i, j in enumerate(rt.sequence(_RJOBS)) if isinstance(j, dict)}
    mpi = draft.framework in (Framework.DEEPSPEED, Framework.MPI)
    trainer = rjobs.get(LAUNCHER if mpi else NODE)
    if trainer is None:
        raise MigrationError(rt.error(_RJOBS, f"the runtime has no replicatedJob {LAUNCHER if mpi else NODE}"))
    job = Draft(rt, name, None, draft.framework, Engine.TRAINER)
    pod = find_pod(rt, (*_RJOBS, trainer, "template", "spec", "template"), NODE)
    read_pod(rt, job, pod)
    # A runtime's command and env are the platform's defaults, not one run's.
    for key in ("command", "env"):
        if key in job.job:
            job.runtime[key] = job.job.pop(key)
    draft.runtime.update(job.runtime)
    for spec_path, origin in job.origins.items():
        moved = spec_path[2] in ("command", "env")
        draft.origins[("Runtime", *spec_path[1:]) if moved else spec_path] = origin
    for index, rjob in enumerate(rt.sequence(_RJOBS)):
        base = (*_RJOBS, index)
        rt.use(
            (*base, "name"),
            (*base, "replicas"),
            (*base, "dependsOn"),
            (*base, "template", "metadata", "labels", ANCESTOR_LABEL),
        )
        if index != trainer and rjob.get("name") == NODE and mpi:
            worker = find_pod(rt, (*base, "template", "spec", "template"), NODE)
            argv = [
                str(w) for w in rt.sequence((*worker.container, "command")) + rt.sequence((*worker.container, "args"))
            ]
            rt.use(worker.template)
            if argv and argv != Mpi().worker_command:
                draft.runtime.setdefault("mpi", {})["workerCommand"] = argv
        elif index != trainer:
            rt.drop(base, "a spec's runtime has the trainer nodes (and MPI's workers) only")
    _ml_policy(rt, draft)
    _policies(rt, draft)
    rt.use(("spec", "template", "spec", "successPolicy"))
    draft.extra.append(rt)


def _ml_policy(rt: Source, draft: Draft) -> None:
    base = ("spec", "mlPolicy")
    nodes = rt.take((*base, "numNodes"))
    if isinstance(nodes, int) and nodes > 1:
        draft.runtime["nodes"] = nodes
    for key in ("torch", "jax"):
        rt.use((*base, key))
    procs = rt.take((*base, "torch", "numProcPerNode")) or rt.take((*base, "mpi", "numProcPerNode"))
    if isinstance(procs, int) or (isinstance(procs, str) and procs.isdigit()):
        gpus = draft.runtime.get("resourcesPerNode", {}).get("gpu")
        if int(procs) != (gpus or 1):
            draft.runtime["procsPerNode"] = int(procs)
    mpi = rt.mapping((*base, "mpi"))
    rt.use((*base, "mpi"))
    if mpi.get("sshAuthMountPath") not in (None, Mpi().ssh_auth_mount_path):
        draft.runtime.setdefault("mpi", {})["sshAuthMountPath"] = mpi["sshAuthMountPath"]
    if mpi.get("runLauncherAsNode") is False:
        draft.runtime.setdefault("mpi", {})["runLauncherAsNode"] = False
    if mpi.get("mpiImplementation") not in (None, EMITTED_IMPLEMENTATION):
        rt.warn((*base, "mpi", "mpiImplementation"), "specs compile to OpenMPI", code=codes.FIELD_NOT_CARRIED)


def _policies(rt: Source, draft: Draft) -> None:
    group = rt.mapping(("spec", "podGroupPolicy"))
    rt.use(("spec", "podGroupPolicy"))
    if "volcano" in group:
        draft.runtime["gang"] = "volcano"
    elif "coscheduling" in group:
        draft.runtime["gang"] = "coscheduling"
        timeout = (
            group["coscheduling"].get("scheduleTimeoutSeconds") if isinstance(group["coscheduling"], dict) else None
        )
        if isinstance(timeout, int) and timeout > 0:
            from trainspec.dsl.framework.types import Duration

            draft.runtime.setdefault("scheduling", {})["gangTimeout"] = str(Duration(timeout))
    restarts = rt.take(("spec", "template", "spec", "failurePolicy", "maxRestarts"))
    if isinstance(restarts, int) and restarts >= 0:
        draft.runtime["restarts"] = {"max": restarts}


def _trainer(src: Source, draft: Draft) -> None:
    trainer = src.mapping(_TRAINER)
    src.use(_TRAINER)
    if "image" in trainer:
        draft.set_job(("image",), src.take((*_TRAINER, "image")), (*_TRAINER, "image"))
    pod = Pod(template=(), container=_TRAINER)
    for key in ("command", "args"):
        if isinstance(trainer.get(key), list):
            draft.set_job((key,), [str(w) for w in trainer[key]], (*_TRAINER, key))
    read_env(src, draft, pod)
    nodes = trainer.get("numNodes")
    if isinstance(nodes, int) and nodes >= 1:
        draft.set_job(("nodes",), nodes, (*_TRAINER, "numNodes"))
    procs = trainer.get("numProcPerNode")
    if isinstance(procs, int) or (isinstance(procs, str) and procs.isdigit()):
        draft.set_job(("procsPerNode",), int(procs), (*_TRAINER, "numProcPerNode"))
    elif procs is not None:
        src.warn(
            (*_TRAINER, "numProcPerNode"), f"numProcPerNode {procs!r} is not a number", code=codes.FIELD_NOT_CARRIED
        )
    if "resourcesPerNode" in trainer:
        read_resource_block(src, draft, (*_TRAINER, "resourcesPerNode"), job=True)
    for key in sorted(
        set(trainer) - {"image", "command", "args", "env", "numNodes", "numProcPerNode", "resourcesPerNode"}
    ):
        src.drop((*_TRAINER, key), "a spec's trainer has image, command, args, env, nodes and resources")


def _patches(src: Source, draft: Draft) -> None:
    """Pod labels, annotations and the checkpoint claim of the runtimePatches' replicated jobs."""
    for p, _patch in enumerate(src.sequence(("spec", "runtimePatches"))):
        base = ("spec", "runtimePatches", p)
        src.use((*base, "manager"))
        rjobs = ("spec", "runtimePatches", p, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
        for r, _ in enumerate(src.sequence(rjobs)):
            tpl = (*rjobs, r, "template", "spec", "template")
            src.use((*rjobs, r, "name"))
            containers = src.sequence((*tpl, "spec", "containers"))
            volumes = {
                v["name"]: i
                for i, v in enumerate(src.sequence((*tpl, "spec", "volumes")))
                if isinstance(v, dict) and isinstance(v.get("name"), str)
            }
            read_pod_metadata(src, draft, Pod(tpl, (*tpl, "spec", "containers", 0), volumes))
            if containers:
                pod = Pod(tpl, (*tpl, "spec", "containers", 0), volumes)
                src.use((*pod.container, "name"))
                read_volumes(src, draft, pod)


__all__ = ["KIND", "RUNTIME_KINDS", "read", "runtime_key"]
