"""What every Training Operator / mpi-operator job shares: job metadata, run policy, the trainer pod.

The runtime is folded into each job's object (these operators have no runtime objects), so a
pod here carries what a Trainer runtime and its TrainJob carry together: the runtime's hardened
settings (``/dev/shm`` as a memory emptyDir, RDMA devices with IPC_LOCK, NCCL env, scheduling;
built by the same helpers as the Trainer runtimes) and the job's image, command, env, resources,
checkpoint volume and pod metadata.
"""

from __future__ import annotations

from typing import Literal

from trainspec.compiler.lower import checkpoint, env as envs, kueue, labels as L, pod as pods
from trainspec.compiler.observability.pods import metrics_env, metrics_ports
from trainspec.compiler.plan import JobPlan
from trainspec.dsl.spec.models import Gang
from trainspec.k8s import (
    Container,
    ObjectMeta,
    PodSpec,
    PodTemplateSpec,
    Probe,
    ResourceRequirements,
    RunPolicy,
    SchedulingPolicy,
    VolumeMount,
)
from trainspec.k8s.wellknown import SHM_MOUNT_PATH, SHM_VOLUME

#: Running pods are deleted when the job finishes: MPI workers (sshd) and torch workers left
#: behind by a finished master would otherwise keep their GPUs.
CLEAN_POD_POLICY: Literal["Running"] = "Running"


def job_metadata(plan: JobPlan) -> ObjectMeta:
    """The job object's metadata: the job's labels and annotations plus Kueue's labels."""
    resolved = plan.resolved
    job = resolved.job
    return ObjectMeta(
        name=resolved.name,
        namespace=resolved.namespace,
        labels={**job.metadata.labels, **kueue.job_labels(job)} or None,
        annotations=dict(job.metadata.annotations) or None,
    )


def restart_policy(plan: JobPlan) -> Literal["OnFailure", "Never"]:
    """Pods restart only when there is a restart budget (runtime ``restarts``) or the job is elastic;
    otherwise the first failure fails the job, as on Trainer without a failure policy."""
    if plan.elastic is not None or plan.resolved.runtime.spec.spec.restarts is not None:
        return "OnFailure"
    return "Never"


def backoff_limit(plan: JobPlan) -> int | None:
    """Retries before the job is failed: the runtime's ``restarts.max``, else an elastic job's
    ``nodes.maxRestarts`` (without a limit its pods would restart forever)."""
    restarts = plan.resolved.runtime.spec.spec.restarts
    if restarts is not None:
        return restarts.max
    return plan.elastic.max_restarts if plan.elastic is not None else None


def run_policy(plan: JobPlan, pods: int, *, backoff: int | None) -> RunPolicy:
    """cleanPodPolicy, backoffLimit, activeDeadlineSeconds, suspend (Kueue) and the gang's schedulingPolicy."""
    job = plan.resolved.job
    deadline = job.spec.max_run_time.seconds if job.spec.max_run_time else None
    return RunPolicy(
        clean_pod_policy=CLEAN_POD_POLICY,
        active_deadline_seconds=deadline,
        backoff_limit=backoff,
        scheduling_policy=scheduling_policy(plan, pods),
    )


def scheduling_policy(plan: JobPlan, pods: int) -> SchedulingPolicy | None:
    """The PodGroup a gang scheduler needs (the operator creates it when started with
    ``--gang-scheduler-name``); Kueue's admission is already all-or-nothing, so none for gang: kueue."""
    spec = plan.resolved.runtime.spec.spec
    sched = spec.scheduling
    if spec.gang is Gang.VOLCANO:
        return SchedulingPolicy(min_available=pods, queue=(sched.volcano_queue if sched else None) or "default")
    if spec.gang is Gang.COSCHEDULING:
        timeout = sched.gang_timeout if sched else None
        return SchedulingPolicy(min_available=pods, schedule_timeout_seconds=timeout.seconds if timeout else None)
    return None


def container_env(plan: JobPlan) -> list:
    """Runtime network env, runtime env, job env, the checkpoint contract, then Secrets; by name."""
    resolved = plan.resolved
    runtime = resolved.runtime.spec.spec
    job = resolved.job
    values = {**(runtime.network.env if runtime.network else {}), **runtime.env, **job.spec.env, **metrics_env(runtime)}
    if plan.checkpoint is not None:
        values.update(checkpoint.env(plan.checkpoint))
    values.update(envs.layout(plan))
    values.update(envs.run(plan))
    values.update(envs.tracking(plan))
    return sorted(envs.plain(values) + envs.from_secrets(job.spec.secret_env), key=lambda e: e.name)


def node_resources(plan: JobPlan) -> ResourceRequirements | None:
    """One node's merged resources (runtime, network devices, job); requests equal limits."""
    values = {name: value.value.to_k8s() for name, value in plan.resolved.resources.items()}
    return ResourceRequirements(requests=values, limits=dict(values)) if values else None


def mounts(plan: JobPlan) -> list[VolumeMount] | None:
    runtime = plan.resolved.runtime.spec.spec
    out = [VolumeMount(name=SHM_VOLUME, mount_path=SHM_MOUNT_PATH)] if runtime.shared_memory else []
    mount = checkpoint.mount(plan.checkpoint) if plan.checkpoint else None
    if mount is not None:
        out.append(mount)
    return out or None


def container(
    plan: JobPlan,
    name: str,
    *,
    command: list[str] | None,
    args: list[str] | None,
    resources: bool = True,
    readiness_probe: Probe | None = None,
) -> Container:
    """A container of the job: ``resources=False`` for one that only launches (an MPI launcher)."""
    return Container(
        name=name,
        image=plan.resolved.image.value,
        command=command,
        args=args,
        env=container_env(plan) or None,
        ports=metrics_ports(plan.resolved.runtime.spec.spec),
        resources=node_resources(plan) if resources else None,
        volume_mounts=mounts(plan),
        readiness_probe=readiness_probe,
        security_context=pods.security(plan.resolved.runtime.spec.spec),
    )


def pod_template(plan: JobPlan, main: Container) -> PodTemplateSpec:
    """A pod with ``main`` as its only container, the runtime's volumes and scheduling, the job's
    pod labels and annotations (with Kueue's topology request) and the checkpoint volume."""
    runtime = plan.resolved.runtime.spec.spec
    job = plan.resolved.job
    volumes = list(pods.shared_memory_volumes(runtime) or [])
    volume = checkpoint.volume(plan.checkpoint) if plan.checkpoint else None
    if volume is not None:
        volumes.append(volume)
    labels = {**job.spec.pod_labels, **L.pod_labels(plan)}
    annotations = {**job.spec.pod_annotations, **kueue.topology_annotations(job)}
    metadata = ObjectMeta(labels=labels or None, annotations=annotations or None) if labels or annotations else None
    spec = PodSpec(
        containers=[main],
        volumes=volumes or None,
        security_context=pods.pod_security(runtime),
        **pods.scheduling(runtime),
    )
    return PodTemplateSpec(metadata=metadata, spec=spec)


def command_of(plan: JobPlan) -> tuple[list[str] | None, list[str] | None]:
    """The trainer's (command, args): the job's, else the runtime's command."""
    resolved = plan.resolved
    command = list(resolved.command.value) if resolved.command is not None else None
    args = list(resolved.job.spec.args) if resolved.job.spec.args is not None else None
    return command, args
