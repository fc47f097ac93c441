"""Lower a ``Runtime`` to a ClusterTrainingRuntime (or namespaced TrainingRuntime).

Hardened by default where upstream's built-ins are not: ``/dev/shm`` as a memory emptyDir, the
interconnect profile (NCCL env, RDMA devices and IPC_LOCK), a restart budget, explicit
``mlPolicy`` and the framework label. A runtime with ``dataSharding`` also yields a
``<name>-sharded`` variant whose JobSet runs the sharding stage before the trainer nodes.
"""

from __future__ import annotations

from trainspec.compiler.lower import env as envs, labels as L, pod as pods
from trainspec.compiler.observability.pods import metrics_env, metrics_ports
from trainspec.compiler.plan import (
    DATA_DIR,
    PVC_ROOT,
    RJOB_DATASET,
    RJOB_LAUNCHER,
    RJOB_NODE,
    WORKSPACE,
    runtime_variants,
)
from trainspec.compiler.provenance import FieldSources, SpecRef
from trainspec.compiler.resolve import resource_items
from trainspec.dsl.kube_facts import MPI_SSH_AUTH_MOUNT_PATH
from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.spec.models import Framework, Gang, Mpi, Runtime, RuntimeSpec, Scope
from trainspec.k8s import (
    ClusterTrainingRuntime,
    Container,
    CoschedulingPodGroupPolicySource,
    DependsOn,
    FailurePolicy,
    JAXMLPolicySource,
    JobSetSpec,
    JobSetTemplateSpec,
    JobSpec,
    JobTemplateSpec,
    MLPolicy,
    MPIMLPolicySource,
    ObjectMeta,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimTemplate,
    PodGroupPolicy,
    PodSecurityContext,
    PodSpec,
    PodTemplateSpec,
    Probe,
    ReplicatedJob,
    ResourceRequirements,
    SuccessPolicy,
    TCPSocketAction,
    TorchMLPolicySource,
    TrainingRuntime,
    TrainingRuntimeSpec,
    VolcanoPodGroupPolicySource,
    VolumeClaimPolicy,
    VolumeMount,
    VolumeResourceRequirements,
)
from trainspec.k8s.jobset import VolumeRetentionPolicy
from trainspec.k8s.wellknown import (
    NODE,
    SHARD_VOLUME,
    SHM_MOUNT_PATH,
    SHM_VOLUME,
    STAGE_UID,
)

SHARD_COMMAND = ["python", "-m", "trainspec.stages.shard"]


def lower_runtime(runtime: Runtime) -> list[ClusterTrainingRuntime | TrainingRuntime]:
    """Every runtime object ``runtime`` compiles to: the base one and, with dataSharding, -sharded."""
    return [_runtime_object(runtime, name, sharded) for name, sharded in runtime_variants(runtime)]


def _runtime_object(runtime: Runtime, name: str, sharded: bool) -> ClusterTrainingRuntime | TrainingRuntime:
    spec = runtime.spec
    metadata = ObjectMeta(
        name=name,
        namespace=runtime.metadata.namespace if spec.scope is Scope.NAMESPACE else None,
        labels={**runtime.metadata.labels, L.FRAMEWORK: spec.framework.value, L.MANAGED_BY: L.MANAGER},
        annotations=dict(runtime.metadata.annotations) or None,
    )
    body = TrainingRuntimeSpec(
        ml_policy=_ml_policy(spec),
        pod_group_policy=_pod_group_policy(spec),
        template=JobSetTemplateSpec(metadata=_jobset_metadata(spec), spec=_jobset_spec(spec, sharded)),
    )
    kind = TrainingRuntime if spec.scope is Scope.NAMESPACE else ClusterTrainingRuntime
    return kind(metadata=metadata, spec=body)


def _ml_policy(spec: RuntimeSpec) -> MLPolicy:
    if spec.framework is Framework.TORCH:
        return MLPolicy(num_nodes=spec.nodes, torch=TorchMLPolicySource())
    if spec.framework is Framework.JAX:
        return MLPolicy(num_nodes=spec.nodes, jax=JAXMLPolicySource())
    mpi = spec.mpi
    gpus = spec.resources_per_node.gpu if spec.resources_per_node else None
    return MLPolicy(
        num_nodes=spec.nodes,
        mpi=MPIMLPolicySource(
            num_proc_per_node=spec.procs_per_node or gpus or 1,
            mpi_implementation="OpenMPI",
            ssh_auth_mount_path=mpi.ssh_auth_mount_path if mpi else MPI_SSH_AUTH_MOUNT_PATH,
            run_launcher_as_node=mpi.run_launcher_as_node if mpi else True,
        ),
    )


def _pod_group_policy(spec: RuntimeSpec) -> PodGroupPolicy | None:
    # Kueue's quota admission is already all-or-nothing: no pod group for gang: kueue.
    if spec.gang is Gang.COSCHEDULING:
        timeout = spec.scheduling.gang_timeout if spec.scheduling else None
        return PodGroupPolicy(
            coscheduling=CoschedulingPodGroupPolicySource(schedule_timeout_seconds=timeout.seconds if timeout else None)
        )
    if spec.gang is Gang.VOLCANO:
        return PodGroupPolicy(volcano=VolcanoPodGroupPolicySource())
    return None


def _jobset_metadata(spec: RuntimeSpec) -> ObjectMeta | None:
    if spec.gang is Gang.VOLCANO:
        queue = (spec.scheduling.volcano_queue if spec.scheduling else None) or "default"
        return ObjectMeta(annotations={L.VOLCANO_QUEUE: queue})
    return None


def _jobset_spec(spec: RuntimeSpec, sharded: bool) -> JobSetSpec:
    trainer_target = RJOB_LAUNCHER if spec.framework in (Framework.DEEPSPEED, Framework.MPI) else RJOB_NODE
    return JobSetSpec(
        # Only the trainer decides success, never the sharding stage or MPI workers.
        success_policy=SuccessPolicy(operator="All", target_replicated_jobs=[trainer_target]),
        failure_policy=FailurePolicy(max_restarts=spec.restarts.max) if spec.restarts else None,
        volume_claim_policies=[_shard_claim_policy(spec)] if sharded else None,
        replicated_jobs=_replicated_jobs(spec, sharded),
    )


def _shard_claim_policy(spec: RuntimeSpec) -> VolumeClaimPolicy:
    sharding = spec.data_sharding
    assert sharding is not None, "only a runtime with dataSharding has a sharded variant (runtime_variants)"
    return VolumeClaimPolicy(
        templates=[
            PersistentVolumeClaimTemplate(
                metadata=ObjectMeta(name=SHARD_VOLUME),
                spec=PersistentVolumeClaimSpec(
                    access_modes=[sharding.access_mode.value],
                    storage_class_name=sharding.storage_class,
                    resources=VolumeResourceRequirements(requests={"storage": sharding.size.to_k8s()}),
                ),
            )
        ],
        retention_policy=VolumeRetentionPolicy(when_deleted="Delete"),
    )


def _replicated_jobs(spec: RuntimeSpec, sharded: bool) -> list[ReplicatedJob]:
    after_shards = [DependsOn(name=RJOB_DATASET, status="Complete")] if sharded else []
    rjobs = [_dataset_rjob(spec)] if sharded else []
    if spec.framework in (Framework.DEEPSPEED, Framework.MPI):
        rjobs.append(_rjob(RJOB_NODE, _worker_pod(spec, sharded), ancestor=None, depends_on=after_shards))
        rjobs.append(
            _rjob(
                RJOB_LAUNCHER,
                _trainer_pod(spec, sharded),
                ancestor=L.ANCESTOR_TRAINER,
                depends_on=[DependsOn(name=RJOB_NODE, status="Ready")],
            )
        )
    else:
        rjobs.append(
            _rjob(RJOB_NODE, _trainer_pod(spec, sharded), ancestor=L.ANCESTOR_TRAINER, depends_on=after_shards)
        )
    return rjobs


def _rjob(name: str, pod: PodSpec, *, ancestor: str | None, depends_on: list[DependsOn]) -> ReplicatedJob:
    # The ancestor label goes on the Job template, not the pod template: Trainer looks there.
    return ReplicatedJob(
        name=name,
        replicas=1,
        depends_on=depends_on or None,
        template=JobTemplateSpec(
            metadata=ObjectMeta(labels={L.ANCESTOR: ancestor}) if ancestor else None,
            spec=JobSpec(template=PodTemplateSpec(spec=pod)),
        ),
    )


def _dataset_rjob(spec: RuntimeSpec) -> ReplicatedJob:
    assert spec.data_sharding is not None, "only a runtime with dataSharding has a sharded variant (runtime_variants)"
    container = Container(
        name=RJOB_DATASET,
        image=spec.data_sharding.image,
        command=list(SHARD_COMMAND),
        env=envs.plain({envs.DATA_DIR: DATA_DIR, envs.PVC_ROOT: PVC_ROOT}),
        volume_mounts=[VolumeMount(name=SHARD_VOLUME, mount_path=WORKSPACE)],
    )
    # The stage image runs as a non-root user; fsGroup makes the new shard volume writable for it.
    pod = PodSpec(
        containers=[container], security_context=PodSecurityContext(fs_group=STAGE_UID), **pods.scheduling(spec)
    )
    return _rjob(RJOB_DATASET, pod, ancestor=L.ANCESTOR_DATASET, depends_on=[])


def _trainer_pod(spec: RuntimeSpec, sharded: bool) -> PodSpec:
    mounts = [VolumeMount(name=SHM_VOLUME, mount_path=SHM_MOUNT_PATH)] if spec.shared_memory else []
    if sharded:
        mounts.append(VolumeMount(name=SHARD_VOLUME, mount_path=WORKSPACE))
    container = Container(
        name=NODE,
        image=spec.image,
        command=list(spec.command) if spec.command else None,
        env=envs.plain({**(spec.network.env if spec.network else {}), **spec.env, **metrics_env(spec)}) or None,
        ports=metrics_ports(spec),
        resources=_resources(spec),
        volume_mounts=mounts or None,
        security_context=pods.security(spec),
    )
    return PodSpec(
        containers=[container],
        volumes=pods.shared_memory_volumes(spec),
        security_context=pods.pod_security(spec),
        **pods.scheduling(spec),
    )


def _worker_pod(spec: RuntimeSpec, sharded: bool) -> PodSpec:
    """MPI workers run an SSH daemon; the launcher reaches them with mpirun."""
    pod = _trainer_pod(spec, sharded)
    worker = pod.containers[0]
    mpi = spec.mpi or Mpi()
    probe = None
    if mpi.ssh_port is not None:
        probe = Probe(tcp_socket=TCPSocketAction(port=mpi.ssh_port), initial_delay_seconds=5)
    container = Container(
        name=worker.name,
        image=worker.image,
        command=list(mpi.worker_command),
        env=worker.env,
        ports=worker.ports,
        resources=worker.resources,
        volume_mounts=worker.volume_mounts,
        security_context=worker.security_context,
        readiness_probe=probe,
    )
    return PodSpec(
        containers=[container], volumes=pod.volumes, security_context=pod.security_context, **pods.scheduling(spec)
    )


def _resources(spec: RuntimeSpec) -> ResourceRequirements | None:
    items = dict(resource_items(spec.resources_per_node, spec.gpu_resource)) if spec.resources_per_node else {}
    if spec.network:
        items.update(spec.network.resources)
    if not items:
        return None
    values = {name: q.to_k8s() for name, q in items.items()}
    # Requests equal limits: GPUs and RDMA devices must, and equal values give Guaranteed QoS.
    return ResourceRequirements(requests=values, limits=dict(values))


def runtime_sources(loaded: LoadedSpec, used_by: SpecRef | None = None) -> FieldSources:
    """What lowering set in a runtime object, and from which field of the Runtime spec.

    A built-in runtime's lines are not the user's to fix: its findings point at ``used_by``,
    the first job that references it.
    """
    if used_by is not None:
        return FieldSources(default=used_by)
    sources = FieldSources(default=SpecRef(loaded, ()))
    template = ("spec", "template", "spec")
    for path, field_path in (
        (("metadata",), ("metadata", "name")),
        (("spec", "mlPolicy"), ("spec", "framework")),
        (("spec", "podGroupPolicy"), ("spec", "gang")),
        ((*template, "volumeClaimPolicies"), ("spec", "dataSharding")),
        ((*template, "failurePolicy"), ("spec", "restarts")),
        ((*template, "replicatedJobs"), ("spec", "image")),
    ):
        sources.set(path, SpecRef(loaded, field_path))
    return sources
