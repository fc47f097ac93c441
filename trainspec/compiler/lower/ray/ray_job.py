"""Lower a planned job to a KubeRay RayJob (Ray Train), and record where each field came from.

The runtime folds into the job's object: a RayJob carries its whole Ray cluster.

* **Head group**: one pod that runs the GCS, the dashboard and, in K8sJobMode, the job's driver
  (the entrypoint). It gets ``num-cpus: "0"`` (and ``num-gpus: "0"`` when it has GPUs) so Ray
  never places training workers on it; its size is :data:`HEAD_RESOURCES` with ``ray.headResources``
  of the runtime, then of the job, merged over it key by key (:func:`head_resources`).
* **One worker group per node shape** (a job has one): ``replicas`` = nodes, each pod with the
  job's merged per-node resources (requests = limits), the runtime's interconnect profile
  (NCCL env, RDMA devices, IPC_LOCK). An elastic job (``nodes: {min, max}``) gets
  ``minReplicas``/``maxReplicas`` and runs ``max`` pods (what Kueue admits).
* **Every pod** gets the image, the job's env and secretEnv as container env, /dev/shm (Ray's
  object store lives there), the checkpoint volume and the in-pod contract
  (:data:`~trainspec.k8s.wellknown.RAY_ENV`) that ``trainspec.stages.ray`` reads.

Container env, not ``runtimeEnvYAML``: secrets stay ``secretKeyRef`` instead of plain text in the
custom resource, and raylet-started worker processes inherit the container's environment on
every node, the driver's included.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from trainspec.compiler.lower import checkpoint, env as envs, kueue, labels as L, pod as pods
from trainspec.compiler.lower.field_sources import metadata_sources
from trainspec.compiler.observability.pods import metrics_env, metrics_ports
from trainspec.compiler.plan import CheckpointKind, CheckpointPlan, JobPlan
from trainspec.compiler.provenance import FieldSources, Origin, SpecRef
from trainspec.compiler.resolve import resource_items
from trainspec.dsl.record import replace
from trainspec.dsl.spec.models import AccessMode
from trainspec.k8s import (
    Container,
    ContainerPort,
    EnvVar,
    ObjectMeta,
    PersistentVolumeClaim,
    PodSpec,
    PodTemplateSpec,
    ResourceRequirements,
    VolumeMount,
)
from trainspec.k8s.ray import HeadGroupSpec, RayClusterSpec, RayJob, RayJobSpec, WorkerGroupSpec
from trainspec.k8s.wellknown import (
    CPUS_PER_NODE_ENV,
    GPUS_PER_NODE_ENV,
    MAX_RESTARTS_ENV,
    MIN_NODES_ENV,
    NUM_NODES_ENV,
    PROCS_PER_NODE_ENV,
    RAY_DEFAULT_SUBMISSION_MODE,
    RAY_HEAD_CONTAINER,
    RAY_HEAD_PORTS,
    RAY_WORKER_CONTAINER,
    SHM_MOUNT_PATH,
    SHM_VOLUME,
)

#: The worker group's name (Kueue's PodSet name for the training pods).
WORKER_GROUP = "workers"
#: The head pod's default size: the driver, GCS and dashboard need little (``ray.headResources`` changes it).
HEAD_RESOURCES: dict[str, int | str] = {"cpu": "2", "memory": "8Gi"}
#: The head takes no Ray CPUs, so training workers and tasks always land on worker pods.
HEAD_START_PARAMS = {"num-cpus": "0"}
#: KubeRay counts a container resource as Ray GPUs when its name ends in this (or is a MIG slice);
#: any other gpuResource needs ``num-gpus`` in rayStartParams.
KUBERAY_GPU_SUFFIX = "gpu"


def node_range(plan: JobPlan) -> tuple[int, int, int | None]:
    """(min nodes, max nodes, restart budget) of the job: min == max and no budget unless elastic."""
    nodes = plan.resolved.job.spec.nodes
    low, high = getattr(nodes, "min", None), getattr(nodes, "max", None)
    if isinstance(low, int) and isinstance(high, int):
        return low, high, getattr(nodes, "max_restarts", None)
    count = plan.resolved.nodes.value
    count = count if isinstance(count, int) else getattr(count, "max", 1)
    return count, count, None


def lower_job(plan: JobPlan) -> list[PersistentVolumeClaim | RayJob]:
    """The objects of one job in apply order: the checkpoint PVC (if trainspec creates one), the RayJob."""
    resolved = plan.resolved
    objects: list[PersistentVolumeClaim | RayJob] = []
    ckpt = checkpoint_plan(plan)
    if ckpt is not None:
        pvc = checkpoint.claim(ckpt, resolved.name, resolved.namespace)
        if pvc is not None:
            objects.append(pvc)
    objects.append(rayjob(plan))
    return objects


def checkpoint_plan(plan: JobPlan) -> CheckpointPlan | None:
    """The job's checkpoint storage; a new volume defaults to ReadWriteMany (head and workers mount it)."""
    ckpt = plan.checkpoint
    spec = plan.resolved.job.spec.checkpoint
    if ckpt is not None and ckpt.kind is CheckpointKind.VOLUME and spec is not None and spec.access_mode is None:
        return replace(ckpt, access_mode=AccessMode.READ_WRITE_MANY)
    return ckpt


def rayjob(plan: JobPlan) -> RayJob:
    """The RayJob of a planned job."""
    resolved = plan.resolved
    job = resolved.job
    restarts = resolved.runtime.spec.spec.restarts
    return RayJob(
        metadata=ObjectMeta(
            name=resolved.name,
            namespace=resolved.namespace,
            labels={**job.metadata.labels, **kueue.job_labels(job)} or None,
            annotations=dict(job.metadata.annotations) or None,
        ),
        spec=RayJobSpec(
            entrypoint=entrypoint(plan),
            submission_mode=RAY_DEFAULT_SUBMISSION_MODE,
            ray_cluster_spec=RayClusterSpec(head_group_spec=_head(plan), worker_group_specs=[_workers(plan)]),
            # Kueue requires it, and a finished job should not hold its cluster's quota anyway.
            shutdown_after_job_finishes=True,
            active_deadline_seconds=job.spec.max_run_time.seconds if job.spec.max_run_time else None,
            backoff_limit=restarts.max if restarts else None,
        ),
    )


def entrypoint(plan: JobPlan) -> str | None:
    """The job's command and args as one shell-quoted line (what ``ray job submit`` runs)."""
    command = plan.resolved.command.value if plan.resolved.command is not None else []
    args = plan.resolved.job.spec.args or []
    words = [*command, *args]
    return shlex.join(words) if words else None


def contract_env(plan: JobPlan) -> dict[str, str]:
    """The TRAINSPEC_* variables of the ray target: what ``trainspec.stages.ray`` turns into a ScalingConfig."""
    resolved = plan.resolved
    low, high, budget = node_range(plan)
    out = {
        NUM_NODES_ENV: str(high),
        PROCS_PER_NODE_ENV: str(resolved.procs_per_node.value),
        GPUS_PER_NODE_ENV: str(resolved.gpus_per_node.value),
    }
    cpu = resolved.resources.get("cpu")
    if cpu is not None:
        out[CPUS_PER_NODE_ENV] = _cores(cpu.value.value)
    if low != high or budget is not None:
        out[MIN_NODES_ENV] = str(low)
    if budget is not None:
        out[MAX_RESTARTS_ENV] = str(budget)
    return out


def _cores(value: Fraction) -> str:
    """CPU cores as a plain decimal (``64``, ``0.5``): what Ray's resource numbers are."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.3f}".rstrip("0").rstrip(".")


def _env(plan: JobPlan, *, worker: bool) -> list[EnvVar] | None:
    resolved = plan.resolved
    runtime = resolved.runtime.spec.spec
    values: dict[str, str] = {}
    if worker and runtime.network is not None:
        values.update(runtime.network.env)
    values.update(runtime.env)
    values.update(resolved.job.spec.env)
    ckpt = checkpoint_plan(plan)
    if ckpt is not None:
        values.update(checkpoint.env(ckpt))
    values.update(contract_env(plan))
    values.update(envs.layout(plan))
    values.update(envs.run(plan))
    values.update(envs.tracking(plan))
    if worker:  # Ray Train's workers run the training code; the head only schedules it
        values.update(metrics_env(runtime))
    found = envs.plain(values) + envs.from_secrets(resolved.job.spec.secret_env)
    return sorted(found, key=lambda e: e.name) or None


def _mounts(plan: JobPlan) -> list[VolumeMount] | None:
    mounts = []
    if plan.resolved.runtime.spec.spec.shared_memory:
        mounts.append(VolumeMount(name=SHM_VOLUME, mount_path=SHM_MOUNT_PATH))
    ckpt = checkpoint_plan(plan)
    mount = checkpoint.mount(ckpt) if ckpt is not None else None
    if mount is not None:
        mounts.append(mount)
    return mounts or None


def _pod_volumes(plan: JobPlan) -> list[Any] | None:
    volumes = list(pods.shared_memory_volumes(plan.resolved.runtime.spec.spec) or [])
    ckpt = checkpoint_plan(plan)
    volume = checkpoint.volume(ckpt) if ckpt is not None else None
    if volume is not None:
        volumes.append(volume)
    return volumes or None


def _pod_metadata(plan: JobPlan, *, worker: bool) -> ObjectMeta | None:
    job = plan.resolved.job
    # Topology placement is for the training pods; the head goes wherever Kueue puts it.
    annotations = {**job.spec.pod_annotations, **(kueue.topology_annotations(job) if worker else {})}
    labels = {**job.spec.pod_labels, **L.pod_labels(plan)}
    if not (labels or annotations):
        return None
    return ObjectMeta(labels=labels or None, annotations=annotations or None)


def head_resources(plan: JobPlan) -> dict[str, int | str]:
    """The head container's requests (= limits): the default, then the runtime's, then the job's headResources."""
    runtime = plan.resolved.runtime.spec.spec
    out = dict(HEAD_RESOURCES)
    for ray in (runtime.ray, plan.resolved.job.spec.ray):
        if ray is not None and ray.head_resources is not None:
            for name, value in resource_items(ray.head_resources, runtime.gpu_resource):
                out[name] = value.to_k8s()
    if not out.get(runtime.gpu_resource, 1):
        del out[runtime.gpu_resource]  # gpu: 0 asks for the default (none), not for a zero device request
    return out


def _head(plan: JobPlan) -> HeadGroupSpec:
    resolved = plan.resolved
    runtime = resolved.runtime.spec.spec
    size = head_resources(plan)
    start = dict(HEAD_START_PARAMS)
    if runtime.gpu_resource in size:
        # Like num-cpus: the head's GPUs are the driver's; Ray must not schedule training workers on them.
        start["num-gpus"] = "0"
    container = Container(
        name=RAY_HEAD_CONTAINER,
        image=resolved.image.value,
        env=_env(plan, worker=False),
        ports=[ContainerPort(name=name, container_port=port) for name, port in RAY_HEAD_PORTS.items()],
        resources=ResourceRequirements(requests=size, limits=dict(size)),
        volume_mounts=_mounts(plan),
    )
    pod = PodSpec(containers=[container], volumes=_pod_volumes(plan), **pods.scheduling(runtime))
    return HeadGroupSpec(
        ray_start_params=start,
        template=PodTemplateSpec(metadata=_pod_metadata(plan, worker=False), spec=pod),
    )


def _workers(plan: JobPlan) -> WorkerGroupSpec:
    resolved = plan.resolved
    runtime = resolved.runtime.spec.spec
    values = {name: value.value.to_k8s() for name, value in resolved.resources.items()}
    container = Container(
        name=RAY_WORKER_CONTAINER,
        image=resolved.image.value,
        env=_env(plan, worker=True),
        ports=metrics_ports(runtime),
        # Requests equal limits: GPUs and RDMA devices must, and equal values give Guaranteed QoS.
        resources=ResourceRequirements(requests=values, limits=dict(values)) if values else None,
        volume_mounts=_mounts(plan),
        security_context=pods.security(runtime),
    )
    pod = PodSpec(containers=[container], volumes=_pod_volumes(plan), **pods.scheduling(runtime))
    low, high, _ = node_range(plan)
    start: dict[str, str] = {}
    gpus = resolved.gpus_per_node.value
    if gpus and not runtime.gpu_resource.endswith(KUBERAY_GPU_SUFFIX):
        start["num-gpus"] = str(gpus)  # KubeRay would not count this resource as GPUs
    return WorkerGroupSpec(
        group_name=WORKER_GROUP,
        replicas=high,
        min_replicas=low,
        max_replicas=high,
        ray_start_params=start,
        template=PodTemplateSpec(metadata=_pod_metadata(plan, worker=True), spec=pod),
    )


# -- provenance -------------------------------------------------------------------------------------

_CLUSTER = ("spec", "rayClusterSpec")
_HEAD_POD = (*_CLUSTER, "headGroupSpec", "template")
_WORKER = (*_CLUSTER, "workerGroupSpecs", 0)
_WORKER_POD = (*_WORKER, "template")


def rayjob_sources(plan: JobPlan, obj: RayJob) -> FieldSources:
    """What lowering set in the RayJob, field by field, and from which spec field."""
    resolved = plan.resolved
    job = resolved.loaded

    def at(*path: Any) -> SpecRef:
        return SpecRef(job, path)

    def runtime_at(*path: Any) -> SpecRef:
        # A built-in or cluster runtime's lines are not the user's to fix: point at the reference.
        entry = resolved.runtime
        return at("spec", "runtime") if entry.builtin or entry.external else SpecRef(entry.loaded, path)

    sources = metadata_sources(resolved.loaded)
    for path, ref in (
        (("spec", "suspend"), at("spec", "queue")),
        (("spec", "activeDeadlineSeconds"), at("spec", "maxRunTime")),
        (("spec", "backoffLimit"), runtime_at("spec", "restarts")),
        (_CLUSTER, at("spec", "runtime")),
    ):
        sources.set(path, ref)
    sources.set(("spec", "entrypoint"), resolved.command)
    if resolved.job.spec.args is not None and resolved.command is None:
        sources.set(("spec", "entrypoint"), at("spec", "args"))
    for field in ("replicas", "minReplicas", "maxReplicas"):
        sources.set((*_WORKER, field), resolved.nodes)
    job_resources = [v for v in resolved.resources.values() if v.origin is Origin.JOB]
    runtime_resources = runtime_at("spec", "resourcesPerNode")
    sources.set(
        (*_WORKER_POD, "spec", "containers", 0, "resources"), job_resources[0] if job_resources else runtime_resources
    )
    if resolved.gpus_per_node.value:
        sources.set((*_WORKER, "rayStartParams"), runtime_at("spec", "gpuResource"))
    head_ref = _head_resources_ref(plan, at, runtime_at)
    if head_ref is not None:
        sources.set((*_HEAD_POD, "spec", "containers", 0, "resources"), head_ref)
        if resolved.runtime.spec.spec.gpu_resource in head_resources(plan):  # num-gpus: "0" comes with a GPU
            sources.set((*_CLUSTER, "headGroupSpec", "rayStartParams"), head_ref)
    for pod in (_HEAD_POD, _WORKER_POD):
        _pod_sources(plan, obj, pod, sources, at, runtime_at)
    return sources


def _head_resources_ref(
    plan: JobPlan, at: Callable[..., SpecRef], runtime_at: Callable[..., SpecRef]
) -> SpecRef | None:
    """The spec field that sized the head: the job's headResources, else the runtime's, else none (the default)."""
    path = ("spec", "ray", "headResources")
    job, runtime = plan.resolved.job.spec.ray, plan.resolved.runtime.spec.spec.ray
    if job is not None and job.head_resources is not None:
        return at(*path)
    if runtime is not None and runtime.head_resources is not None:
        return runtime_at(*path)
    return None


def _pod_sources(
    plan: JobPlan,
    obj: RayJob,
    pod: tuple,
    sources: FieldSources,
    at: Callable[..., SpecRef],
    runtime_at: Callable[..., SpecRef],
) -> None:
    resolved = plan.resolved
    spec = resolved.job.spec
    container = (*pod, "spec", "containers", 0)
    sources.set((*container, "image"), resolved.image)
    sources.set((*pod, "metadata", "labels"), at("spec", "podLabels"))
    sources.set((*pod, "metadata", "annotations"), at("spec", "podAnnotations"))
    for key in kueue.topology_annotations(resolved.job):
        sources.set((*pod, "metadata", "annotations", key), at("spec", "topology", "level"))
    sources.set((*pod, "spec", "volumes"), at("spec", "checkpoint"))
    sources.set((*container, "volumeMounts"), at("spec", "checkpoint"))
    for field in ("nodeSelector", "tolerations", "schedulerName", "priorityClassName"):
        sources.set((*pod, "spec", field), runtime_at("spec", "scheduling"))
    sources.set((*container, "securityContext"), runtime_at("spec", "network"))
    head = pod == _HEAD_POD
    cluster = obj.spec.ray_cluster_spec
    assert cluster is not None and cluster.worker_group_specs, "lowering always builds the cluster and its workers"
    group = cluster.head_group_spec if head else cluster.worker_group_specs[0]
    contract = set(contract_env(plan))
    network = resolved.runtime.spec.spec.network
    for index, var in enumerate(group.template.spec.containers[0].env or []):
        path = (*container, "env", index)
        if var.name in spec.env:
            sources.set(path, at("spec", "env", var.name))
        elif var.name in spec.secret_env:
            sources.set(path, at("spec", "secretEnv", var.name))
        elif var.name in contract:
            sources.set(path, at("spec", "nodes") if "NODES" in var.name else at("spec", "resourcesPerNode"))
        elif var.name in resolved.runtime.spec.spec.env:
            sources.set(path, runtime_at("spec", "env", var.name))
        elif network is not None and var.name in network.env:
            sources.set(path, runtime_at("spec", "network", "env", var.name))
        else:
            sources.set(path, at("spec", "checkpoint"))


__all__ = [
    "checkpoint_plan",
    "contract_env",
    "entrypoint",
    "head_resources",
    "lower_job",
    "node_range",
    "rayjob",
    "rayjob_sources",
]
