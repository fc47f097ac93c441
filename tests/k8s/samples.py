"""Sample objects for the k8s model tests.

* realistic ones, shaped like what the compiler emits: a torch ClusterTrainingRuntime with a
  dataset-initializer rjob, an MPI TrainingRuntime with launcher + node, and a TrainJob using
  every level of the runtime-patch chain;
* :func:`maximal`, which fills EVERY field of a model class (recursively, from its type
  hints), so that checking its serialisation against a CRD checks every wire name.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from trainspec.k8s import (
    Affinity,
    Capabilities,
    ClusterTrainingRuntime,
    Container,
    ContainerPatch,
    ContainerPort,
    CoschedulingPodGroupPolicySource,
    DatasetInitializer,
    DependsOn,
    EmptyDirVolumeSource,
    EnvFromSource,
    EnvVar,
    EnvVarSource,
    FailurePolicy,
    FailurePolicyRule,
    Initializer,
    JobSetSpec,
    JobSetSpecPatch,
    JobSetTemplatePatch,
    JobSetTemplateSpec,
    JobSpec,
    JobSpecPatch,
    JobTemplatePatch,
    JobTemplateSpec,
    LocalObjectReference,
    MetadataPatch,
    MLPolicy,
    ModelInitializer,
    MPIMLPolicySource,
    Network,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectFieldSelector,
    ObjectMeta,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimTemplate,
    PersistentVolumeClaimVolumeSource,
    PodGroupPolicy,
    PodSchedulingGate,
    PodSecurityContext,
    PodSpec,
    PodSpecPatch,
    PodTemplatePatch,
    PodTemplateSpec,
    Probe,
    ReplicatedJob,
    ReplicatedJobPatch,
    ResourceRequirements,
    RuntimePatch,
    RuntimeRef,
    SeccompProfile,
    SecretEnvSource,
    SecretKeySelector,
    SecretVolumeSource,
    SecurityContext,
    SuccessPolicy,
    TCPSocketAction,
    Toleration,
    TorchMLPolicySource,
    Trainer,
    TrainingRuntime,
    TrainingRuntimeSpec,
    TrainingRuntimeSpecPatch,
    TrainJob,
    TrainJobSpec,
    Volume,
    VolumeClaimPolicy,
    VolumeMount,
    VolumeResourceRequirements,
    VolumeRetentionPolicy,
)

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
FRAMEWORK = "trainer.kubeflow.org/framework"
TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"

RESTRICTED = SecurityContext(
    allow_privilege_escalation=False,
    run_as_non_root=True,
    capabilities=Capabilities(drop=["ALL"]),
    seccomp_profile=SeccompProfile(type="RuntimeDefault"),
)


def torch_runtime() -> ClusterTrainingRuntime:
    """A torch runtime: a dataset-initializer rjob feeding a shared PVC, then rjob ``node``."""
    workspace = VolumeMount(name="initializer", mount_path="/workspace")
    initializer_job = ReplicatedJob(
        name="dataset-initializer",
        replicas=1,
        template=JobTemplateSpec(
            # The ancestor label goes on the Job template, not on the pod template.
            metadata=ObjectMeta(labels={ANCESTOR: "dataset-initializer"}),
            spec=JobSpec(
                backoff_limit=0,
                template=PodTemplateSpec(
                    spec=PodSpec(
                        containers=[
                            Container(
                                name="dataset-initializer",
                                image="ghcr.io/kubeflow/trainer/dataset-initializer:v2.3.0",
                                env=[EnvVar(name="HF_HUB_DISABLE_TELEMETRY", value="1")],
                                resources=ResourceRequirements(
                                    requests={"cpu": 2, "memory": "8Gi"},
                                    limits={"memory": "8Gi"},
                                ),
                                volume_mounts=[workspace],
                                security_context=RESTRICTED,
                            )
                        ],
                        restart_policy="Never",
                        security_context=PodSecurityContext(fs_group=1000, run_as_user=1000),
                    )
                ),
            ),
        ),
    )
    node_job = ReplicatedJob(
        name="node",
        replicas=1,
        depends_on=[DependsOn(name="dataset-initializer", status="Complete")],
        template=JobTemplateSpec(
            metadata=ObjectMeta(labels={ANCESTOR: "trainer"}),
            spec=JobSpec(
                backoff_limit=0,
                template=PodTemplateSpec(
                    metadata=ObjectMeta(annotations={"kueue.x-k8s.io/podset-preferred-topology": "rack"}),
                    spec=PodSpec(
                        init_containers=[
                            Container(
                                name="preflight",
                                image="registry.example.com/preflight:1",
                                command=["python", "-m", "preflight"],
                                security_context=RESTRICTED,
                            )
                        ],
                        containers=[
                            Container(
                                name="node",
                                image="registry.example.com/train/pytorch:2.13",
                                command=["torchrun", "/app/train.py"],
                                env=[
                                    EnvVar(
                                        name="JOB_INDEX",
                                        value_from=EnvVarSource(
                                            field_ref=ObjectFieldSelector(
                                                field_path="metadata.annotations['batch.kubernetes.io/job-completion-index']"
                                            )
                                        ),
                                    ),
                                    EnvVar(
                                        name="WANDB_API_KEY",
                                        value_from=EnvVarSource(
                                            secret_key_ref=SecretKeySelector(name="wandb", key="api-key", optional=True)
                                        ),
                                    ),
                                ],
                                env_from=[EnvFromSource(secret_ref=SecretEnvSource(name="s3-credentials"))],
                                ports=[ContainerPort(name="c10d", container_port=29500, protocol="TCP")],
                                resources=ResourceRequirements(
                                    requests={"cpu": "90", "memory": "1600Gi", "nvidia.com/gpu": 8},
                                    limits={"memory": "1600Gi", "nvidia.com/gpu": 8},
                                ),
                                volume_mounts=[
                                    workspace,
                                    VolumeMount(name="dshm", mount_path="/dev/shm"),
                                    VolumeMount(name="hf-token", mount_path="/etc/hf", read_only=True),
                                ],
                                readiness_probe=Probe(tcp_socket=TCPSocketAction(port=29500), initial_delay_seconds=5),
                                security_context=RESTRICTED,
                            )
                        ],
                        volumes=[
                            Volume(
                                name="dshm",
                                empty_dir=EmptyDirVolumeSource(medium="Memory", size_limit="256Gi"),
                            ),
                            Volume(
                                name="hf-token",
                                secret=SecretVolumeSource(secret_name="hf-token", default_mode=0o440),
                            ),
                        ],
                        node_selector={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
                        tolerations=[Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")],
                        affinity=Affinity(
                            node_affinity=NodeAffinity(
                                required_during_scheduling_ignored_during_execution=NodeSelector(
                                    node_selector_terms=[
                                        NodeSelectorTerm(
                                            match_expressions=[
                                                NodeSelectorRequirement(
                                                    key="kubernetes.io/arch",
                                                    operator="In",
                                                    values=["amd64"],
                                                )
                                            ]
                                        )
                                    ]
                                )
                            )
                        ),
                        priority_class_name="training",
                        service_account_name="trainer",
                        restart_policy="Never",
                        security_context=PodSecurityContext(fs_group=1000, run_as_user=1000, run_as_non_root=True),
                        termination_grace_period_seconds=120,
                    ),
                ),
            ),
        ),
    )
    return ClusterTrainingRuntime(
        metadata=ObjectMeta(name="trainspec-torch-h100", labels={FRAMEWORK: "torch"}),
        spec=TrainingRuntimeSpec(
            ml_policy=MLPolicy(num_nodes=1, torch=TorchMLPolicySource()),
            template=JobSetTemplateSpec(
                metadata=ObjectMeta(labels={"trainspec.dev/runtime": "torch-h100"}),
                spec=JobSetSpec(
                    network=Network(enable_dns_hostnames=True, publish_not_ready_addresses=True),
                    replicated_jobs=[initializer_job, node_job],
                    success_policy=SuccessPolicy(operator="All", target_replicated_jobs=["node"]),
                    failure_policy=FailurePolicy(
                        max_restarts=3,
                        restart_strategy="Recreate",
                        rules=[
                            FailurePolicyRule(
                                name="initializer-fails-fast",
                                action="FailJobSet",
                                target_replicated_jobs=["dataset-initializer"],
                            )
                        ],
                    ),
                    volume_claim_policies=[
                        VolumeClaimPolicy(
                            templates=[
                                PersistentVolumeClaimTemplate(
                                    metadata=ObjectMeta(name="initializer"),
                                    spec=PersistentVolumeClaimSpec(
                                        access_modes=["ReadWriteOnce"],
                                        resources=VolumeResourceRequirements(requests={"storage": "500Gi"}),
                                        storage_class_name="fast-rwo",
                                    ),
                                )
                            ],
                            retention_policy=VolumeRetentionPolicy(when_deleted="Delete"),
                        )
                    ],
                    ttl_seconds_after_finished=3600,
                ),
            ),
        ),
    )


def mpi_runtime() -> TrainingRuntime:
    """An MPI runtime: workers in rjob ``node``, then ``launcher`` (ancestor ``trainer``)."""
    ssh = SecurityContext(capabilities=Capabilities(add=["SYS_CHROOT"]), run_as_user=1000)

    def job(labels: dict[str, str] | None, command: list[str]) -> JobTemplateSpec:
        return JobTemplateSpec(
            metadata=ObjectMeta(labels=labels) if labels else None,
            spec=JobSpec(
                template=PodTemplateSpec(
                    spec=PodSpec(
                        # In MPI runtimes the container is named "node" in both rjobs.
                        containers=[
                            Container(
                                name="node",
                                image="registry.example.com/train/mpi:5",
                                command=command,
                                resources=ResourceRequirements(limits={"nvidia.com/gpu": 8}),
                                security_context=ssh,
                            )
                        ],
                        scheduler_name="scheduler-plugins-scheduler",
                    )
                )
            ),
        )

    return TrainingRuntime(
        metadata=ObjectMeta(name="trainspec-mpi", namespace="team-a", labels={FRAMEWORK: "deepspeed"}),
        spec=TrainingRuntimeSpec(
            ml_policy=MLPolicy(
                num_nodes=2,
                mpi=MPIMLPolicySource(
                    num_proc_per_node=8,
                    mpi_implementation="OpenMPI",
                    ssh_auth_mount_path="/home/mpiuser/.ssh",
                    run_launcher_as_node=False,
                ),
            ),
            pod_group_policy=PodGroupPolicy(
                coscheduling=CoschedulingPodGroupPolicySource(schedule_timeout_seconds=120)
            ),
            template=JobSetTemplateSpec(
                spec=JobSetSpec(
                    replicated_jobs=[
                        ReplicatedJob(name="node", template=job(None, ["/usr/sbin/sshd", "-De"])),
                        ReplicatedJob(
                            name="launcher",
                            depends_on=[DependsOn(name="node", status="Ready")],
                            template=job(
                                {ANCESTOR: "trainer"},
                                ["mpirun", "python", "/app/train.py"],
                            ),
                        ),
                    ],
                    success_policy=SuccessPolicy(operator="Any", target_replicated_jobs=["launcher"]),
                )
            ),
        ),
    )


def patched_trainjob(index: int = 0) -> TrainJob:
    """A TrainJob that sets every TrainJob field and every level of the runtime-patch chain."""
    name = f"llama-ft-{index}"
    pod_patch = PodSpecPatch(
        volumes=[
            Volume(
                name="checkpoints",
                persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name="ckpt-llama"),
            )
        ],
        init_containers=[ContainerPatch(name="preflight", env=[EnvVar(name="PREFLIGHT_STRICT", value="1")])],
        containers=[
            # No env on "node": that goes through spec.trainer.env.
            ContainerPatch(
                name="node",
                volume_mounts=[VolumeMount(name="checkpoints", mount_path="/checkpoints")],
                security_context=SecurityContext(read_only_root_filesystem=True),
            )
        ],
        node_selector={"topology.kubernetes.io/zone": "zone-a"},
        affinity=Affinity(node_affinity=NodeAffinity(preferred_during_scheduling_ignored_during_execution=[])),
        tolerations=[Toleration(key="dedicated", operator="Equal", value="training", effect="NoSchedule")],
        scheduling_gates=[PodSchedulingGate(name="example.com/quota-check")],
        service_account_name="llama-trainer",
        image_pull_secrets=[LocalObjectReference(name="registry-credentials")],
        security_context=PodSecurityContext(fs_group=2000),
        termination_grace_period_seconds=300,
    )
    patch = RuntimePatch(
        manager="trainspec.dev/compiler",
        training_runtime_spec=TrainingRuntimeSpecPatch(
            template=JobSetTemplatePatch(
                metadata=MetadataPatch(labels={"trainspec.dev/job": name}),
                spec=JobSetSpecPatch(
                    replicated_jobs=[
                        ReplicatedJobPatch(
                            name="node",
                            template=JobTemplatePatch(
                                metadata=MetadataPatch(annotations={"trainspec.dev/spec-hash": "0f3a9c"}),
                                spec=JobSpecPatch(
                                    template=PodTemplatePatch(
                                        metadata=MetadataPatch(
                                            labels={"trainspec.dev/role": "trainer"},
                                            annotations={TOPOLOGY: "kubernetes.io/hostname"},
                                        ),
                                        spec=pod_patch,
                                    )
                                ),
                            ),
                        )
                    ]
                ),
            )
        ),
    )
    return TrainJob(
        metadata=ObjectMeta(
            name=name,
            namespace="team-a",
            labels={
                "kueue.x-k8s.io/queue-name": "gpu-queue",
                "kueue.x-k8s.io/priority-class": "high",
            },
            annotations={"trainspec.dev/source": "specs/llama.yaml"},
        ),
        spec=TrainJobSpec(
            runtime_ref=RuntimeRef(
                name="trainspec-torch-h100",
                api_group="trainer.kubeflow.org",
                kind="ClusterTrainingRuntime",
            ),
            initializer=Initializer(
                dataset=DatasetInitializer(
                    storage_uri="s3://datasets/llama/v3",
                    env=[EnvVar(name="REGION", value="eu-west-1")],
                    secret_ref=LocalObjectReference(name="s3-credentials"),
                ),
                model=ModelInitializer(
                    storage_uri="hf://meta-llama/Llama-3.2-1B",
                    secret_ref=LocalObjectReference(name="hf-token"),
                ),
            ),
            trainer=Trainer(
                image="registry.example.com/train/pytorch:2.13",
                command=["torchrun"],
                args=["/app/train.py", "--lr=3e-4", f"--seed={index}"],
                env=[
                    EnvVar(name="NCCL_DEBUG", value="WARN"),
                    EnvVar(
                        name="HF_TOKEN",
                        value_from=EnvVarSource(secret_key_ref=SecretKeySelector(name="hf-token", key="token")),
                    ),
                ],
                num_nodes=4,
                resources_per_node=ResourceRequirements(
                    requests={"cpu": 96, "memory": "1600Gi", "nvidia.com/gpu": 8},
                    limits={"memory": "1600Gi", "nvidia.com/gpu": 8},
                ),
                num_proc_per_node=8,
            ),
            runtime_patches=[patch],
            suspend=True,
            active_deadline_seconds=172800,
            managed_by="trainer.kubeflow.org/trainjob-controller",
        ),
    )


# --- maximal instances ----------------------------------------------------------------------

#: Fields left out of maximal ObjectMeta: CRD-embedded metadata has no such properties.
_TOP_LEVEL_ONLY_META = {"generate_name", "owner_references"}


def maximal(cls: type, variant: int = 0) -> Any:
    """An instance of model ``cls`` with every field set, recursively.

    Unions and Literals pick option ``variant % len(options)``, so iterating ``variant`` over
    ``range(max_options(cls))`` emits every declared Literal value at least once.
    """
    hints = get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if cls is ObjectMeta and f.name in _TOP_LEVEL_ONLY_META:
            continue
        values[f.name] = _fill(hints[f.name], variant)
    return cls(**values)


def _options(tp: Any) -> tuple[Any, ...]:
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return tuple(a for a in get_args(tp) if a is not type(None))
    return ()


def _fill(tp: Any, variant: int) -> Any:
    options = _options(tp)
    if options:
        return _fill(options[variant % len(options)], variant)
    origin = get_origin(tp)
    if origin is Literal:
        choices = get_args(tp)
        return choices[variant % len(choices)]
    if origin is list:
        return [_fill(get_args(tp)[0], variant)]
    if origin is dict:
        return {"example.com/key": _fill(get_args(tp)[1], variant)}
    if tp is str:
        return "x"
    if tp is bool:
        return True
    if tp is int:
        return 1
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return maximal(tp, variant)
    raise AssertionError(f"no filler for {tp!r}")


def max_options(cls: type, _seen: set[type] | None = None) -> int:
    """The largest number of options of any Union/Literal reachable from ``cls``."""
    seen = _seen if _seen is not None else set()
    if cls in seen:
        return 1
    seen.add(cls)
    best = 1
    for tp in get_type_hints(cls).values():
        best = max(best, _max_in(tp, seen))
    return best


def _max_in(tp: Any, seen: set[type]) -> int:
    if get_origin(tp) is typing.ClassVar:
        return 1
    options = _options(tp)
    if options:
        return max([len(options), *(_max_in(o, seen) for o in options)])
    origin = get_origin(tp)
    if origin is Literal:
        return len(get_args(tp))
    if origin in (list, dict):
        return max(_max_in(a, seen) for a in get_args(tp))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return max_options(tp, seen)
    return 1
