"""Kubernetes facts the compiler, checker, Kueue pre-flight and KFP launcher share, defined once.

Label and annotation keys (ours and those of Kubeflow Trainer, JobSet, Kueue, Volcano, Argo CD),
the names Trainer gives containers and replicated jobs, volume names, runtimePatches and
server-side-apply managers, name budgets. The facts the spec language itself needs (number
bounds, name rules, reserved env names) live in :mod:`trainspec.dsl.kube_facts` and are
re-exported here, so lowering code imports one module.

``tests/k8s/test_wellknown.py`` fails when one of these strings is written out anywhere else.
"""

from __future__ import annotations

from trainspec.dsl.kube_facts import (
    CHECKPOINT_DIR_ENV,
    CHECKPOINT_KEEP_ENV,
    DATA_DIR_ENV,
    DATA_FORMAT_ENV,
    DNS1035_LABEL_PATTERN,
    DNS1123_LABEL_MAX,
    DNS1123_LABEL_PATTERN,
    DNS1123_SUBDOMAIN_MAX,
    DNS1123_SUBDOMAIN_PATTERN,
    ENV_NAME_PATTERN,
    HTTP_PATH_PATTERN,
    INT32_MAX,
    INT64_MAX,
    LABEL_VALUE_MAX,
    LABEL_VALUE_PATTERN,
    MAX_EXEC_TIME_SECONDS,
    METRICS_PORT_ENV,  # the in-pod helpers' port variable (issue 15)
    NUM_SHARDS_ENV,
    PVC_ROOT_ENV,
    QUALIFIED_NAME_PATTERN,
    RESERVED_ENV_PREFIXES,
    RUN_ID_ENV,
    SHARD_ASSIGNMENT_ENV,
    SHARD_BALANCE_ENV,
    SHARD_BY_ENV,
    SHARD_CHECKSUM_ENV,
    SHARD_MODE_ENV,
    SHARD_SEED_ENV,
    TRAINER_RESERVED_ENV,
    TRAINSPEC_ENV,
)

__all__ = [
    # re-exported from trainspec.dsl.kube_facts
    "CHECKPOINT_DIR_ENV",
    "RUN_ID_ENV",
    "COMPARE_OPTIONS_ANNOTATION",
    "RUN_LABEL",
    "SYNC_OPTIONS_ANNOTATION",
    "FLUX_PRUNE_ANNOTATION",
    "FLUX_FORCE_ANNOTATION",
    "FLUX_SSA_ANNOTATION",
    "CHECKPOINT_KEEP_ENV",
    "DATA_DIR_ENV",
    "DATA_FORMAT_ENV",
    "DNS1035_LABEL_PATTERN",
    "DNS1123_LABEL_MAX",
    "DNS1123_LABEL_PATTERN",
    "DNS1123_SUBDOMAIN_MAX",
    "DNS1123_SUBDOMAIN_PATTERN",
    "ENV_NAME_PATTERN",
    "HTTP_PATH_PATTERN",
    "INT32_MAX",
    "INT64_MAX",
    "LABEL_VALUE_MAX",
    "LABEL_VALUE_PATTERN",
    "MAX_EXEC_TIME_SECONDS",
    "NUM_SHARDS_ENV",
    "PVC_ROOT_ENV",
    "QUALIFIED_NAME_PATTERN",
    "RESERVED_ENV_PREFIXES",
    "SHARD_ASSIGNMENT_ENV",
    "SHARD_BALANCE_ENV",
    "SHARD_BY_ENV",
    "SHARD_CHECKSUM_ENV",
    "SHARD_MODE_ENV",
    "SHARD_SEED_ENV",
    "TRAINER_RESERVED_ENV",
    "TRAINSPEC_ENV",
    # defined here
    "ANCESTOR_DATASET",
    "ANCESTOR_LABEL",
    "ANCESTOR_MODEL",
    "ANCESTOR_TRAINER",
    "CHECKPOINT_VOLUME",
    "COMPILER_PATCH_MANAGER",
    "COMPLETION_INDEX_LABEL",
    "COMPONENT_LABEL",
    "COSCHEDULING_SCHEDULER",
    "DATASET_INITIALIZER",
    "ELASTIC_JOB_ANNOTATION",
    "GENERATED_NAME_PREFIX_MAX",
    "GENERATED_NAME_RANDOM",
    "JOBSET_CLAIM_NAME_MAX",
    "JOBSET_COORDINATOR_LABEL",
    "JOBSET_GROUP",
    "JOBSET_MANAGED_BY_MAX",
    "JOBSET_RULE_NAME_MAX",
    "JOBSET_RULE_NAME_PATTERN",
    "FIELD_MANAGER",
    "FRAMEWORK_LABEL",
    "JOBSET_NAME_LABEL",
    "JOB_LABEL",
    "JOB_MIN_PARALLELISM_ANNOTATION",
    "KFP_PATCH_MANAGER",
    "KFP_RUN_ID_LABEL",
    "KUEUE_GROUP",
    "KUEUE_LEGACY_VERSION",
    "KUEUE_PATCH_MANAGER",
    "KUEUE_VERSION",
    "KUEUE_VERSIONS",
    "LAUNCHER",
    "MANAGED_BY_LABEL",
    "MANAGED_BY_VALUE",
    "MAX_EXEC_TIME_LABEL",
    "METADATA_NAME_LABEL",
    "MODEL_INITIALIZER",
    "NAME_MAX",
    "NODE",
    "NODE_ALLOCATABLE",
    "OWNER_FIELD_MANAGER",
    "POD_RANDOM_SUFFIX",
    "PODSET_SLICE_SIZE_ANNOTATION",
    "PRIORITY_CLASS_LABEL",
    "QUEUE_NAME_LABEL",
    "REPLICATED_JOB_LABEL",
    "SHARD_SOURCE_VOLUME",
    "SHARD_VOLUME",
    "SHM_MOUNT_PATH",
    "SHM_VOLUME",
    "STAGE_UID",
    "SYNC_WAVE_ANNOTATION",
    "TOPOLOGY_ANNOTATIONS",
    "TOPOLOGY_PREFERRED",
    "TOPOLOGY_REQUIRED",
    "TOPOLOGY_SLICE_REQUIRED",
    "TOPOLOGY_SLICE_REQUIRED_CONSTRAINTS",
    "TOPOLOGY_UNCONSTRAINED",
    "TRAINER_API_VERSION",
    "TRAINER_GROUP",
    "TRAINER_VERSION",
    "VOLCANO_QUEUE_LABEL",
    "VOLCANO_SCHEDULER",
    "WEBHOOK_VALIDATION_LABEL",
    # the scaling ladder (issue 15)
    "LADDER_LABEL",
    "LADDER_RUNG_LABEL",
    # Kubeflow Trainer's controller plugins (run --local gives a process what they give a pod)
    "MPI_HOSTFILE_PATH",
    "MPI_RSH_ARGS_VALUE",
    "TRAINER_PORT",
    # KubeRay (issue 13: the ray target)
    "CPUS_PER_NODE_ENV",
    "GPUS_PER_NODE_ENV",
    "KUEUE_MAX_PODSETS",
    "MAX_RESTARTS_ENV",
    "MIN_NODES_ENV",
    "NUM_NODES_ENV",
    "PROCS_PER_NODE_ENV",
    "RAY_API_VERSION",
    "RAY_CLUSTER_NAME_MAX",
    "RAY_DEFAULT_SUBMISSION_MODE",
    "RAY_ENV",
    "RAY_GROUP",
    "RAY_HEAD_CONTAINER",
    "RAY_HEAD_PODSET",
    "RAY_HEAD_PORTS",
    "RAY_JOB_NAME_MAX",
    "RAY_SUBMITTER_PODSET",
    "RAY_WORKER_CONTAINER",
    # Training Operator v1 and mpi-operator (issue 13: the training-operator target)
    "ELASTIC_RDZV_BACKEND",
    "JAX_CONTAINER",
    "KUBEFLOW_GROUP",
    "KUBEFLOW_V1_API_VERSION",
    "KUEUE_V1_FRAMEWORKS",
    "KUEUE_V1_OFF_BY_DEFAULT",
    "KUEUE_V1_REMOVAL",
    "MPI_API_VERSION",
    "MPI_WORKER_CONTAINER",
    "PYTORCH_CONTAINER",
    "REPLICA_LAUNCHER",
    "REPLICA_MASTER",
    "REPLICA_WORKER",
    # observability (issue 15): pod labels, the metrics port, PodMonitor and Grafana
    "GRAFANA_DASHBOARD_LABEL",
    "JOB_NAMESPACE_LABEL",
    "METRICS_PORT_ENV",
    "METRICS_PORT_NAME",
    "MONITORING_API_VERSION",
    "MONITORING_GROUP",
    "RAY_NODE_TYPE_LABEL",
    "REPLICA_INDEX_LABEL",
    "REPLICA_TYPE_LABEL",
    "RUNTIME_LABEL",
    "TEAM_LABEL",
    # GPU node labels the parallelism planner reads its accelerator from (issue 25)
    "GKE_ACCELERATOR_LABEL",
    "GPU_PRODUCT_LABEL",
    "KARPENTER_GPU_MEMORY_LABEL",
    "KARPENTER_GPU_NAME_LABEL",
]

# -- trainspec's own keys and managers ----------------------------------------------------------

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
COMPONENT_LABEL = "app.kubernetes.io/component"
#: The value of MANAGED_BY_LABEL on everything trainspec emits.
MANAGED_BY_VALUE = "trainspec"
#: Label on the checkpoint PVC: the job it belongs to.
JOB_LABEL = "trainspec.dev/job"
#: Labels on every job of a scaling ladder (compile --ladder): the job it measures, and which rung.
LADDER_LABEL = "trainspec.dev/ladder"
LADDER_RUNG_LABEL = "trainspec.dev/ladder-rung"
#: ResourceFlavor annotation declaring one node's allocatable resources (``cpu=192,memory=2Ti``).
NODE_ALLOCATABLE = "trainspec.dev/node-allocatable"
#: Label on a TrainJob the KFP launcher creates: the KFP run that owns it.
KFP_RUN_ID_LABEL = "trainspec.dev/kfp-run-id"
#: The ``runtimePatches`` entries trainspec owns: the compiler's (checkpoint volume, pod
#: settings) and the KFP launcher's. Kueue owns KUEUE_PATCH_MANAGER.
COMPILER_PATCH_MANAGER = "trainspec.dev/compiler"
KFP_PATCH_MANAGER = "trainspec.dev/kfp"
#: Server-side apply field managers of the KFP launcher: the TrainJob body, and the owner
#: reference added on re-attach (a separate manager, so applying it never drops fields).
FIELD_MANAGER = MANAGED_BY_VALUE
OWNER_FIELD_MANAGER = "trainspec-kfp-owner"

# -- Kubernetes and Argo CD -------------------------------------------------------------------

#: The label every Namespace carries automatically (selectors match namespaces by it).
METADATA_NAME_LABEL = "kubernetes.io/metadata.name"
#: The Job controller's label and annotation of an Indexed Job's pod.
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
#: Argo CD applies lower waves first: runtimes, then claims, then jobs.
SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
#: Argo CD's per-resource sync options (``Prune=false,Delete=false`` on checkpoint claims,
#: ``Force=true,Replace=true`` on jobs with ``runs: replace``).
SYNC_OPTIONS_ANNOTATION = "argocd.argoproj.io/sync-options"
#: Argo CD's per-resource diff options (``ServerSideDiff=true`` on job objects, --gitops argocd).
COMPARE_OPTIONS_ANNOTATION = "argocd.argoproj.io/compare-options"
#: Flux kustomize-controller: ``disabled`` keeps an object out of garbage collection (pruning).
FLUX_PRUNE_ANNOTATION = "kustomize.toolkit.fluxcd.io/prune"
#: Flux kustomize-controller: ``IfNotPresent`` creates an object and never updates it (run objects).
FLUX_SSA_ANNOTATION = "kustomize.toolkit.fluxcd.io/ssa"
#: Flux kustomize-controller: ``enabled`` recreates an object whose update the API server refuses.
FLUX_FORCE_ANNOTATION = "kustomize.toolkit.fluxcd.io/force"
#: Label on a job's run object (and its pods): the run id, ``<job>-<run id>``'s suffix.
RUN_LABEL = "trainspec.dev/run"
#: Longest object name in a name budget: RFC 1035/1123 labels, which pod names must be.
NAME_MAX = DNS1123_LABEL_MAX
#: What a controller appends to a generated pod name: '-' and 5 random characters.
POD_RANDOM_SUFFIX = "-abcde"
#: ``metadata.generateName``: the API server keeps at most this many characters of the prefix
#: and appends GENERATED_NAME_RANDOM random ones (names.SimpleNameGenerator), so a generated
#: name is at most NAME_MAX long.
GENERATED_NAME_RANDOM = 5
GENERATED_NAME_PREFIX_MAX = NAME_MAX - GENERATED_NAME_RANDOM

# -- Kubeflow Trainer ---------------------------------------------------------------------------

TRAINER_GROUP = "trainer.kubeflow.org"
TRAINER_VERSION = "v1alpha1"
TRAINER_API_VERSION = f"{TRAINER_GROUP}/{TRAINER_VERSION}"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
WEBHOOK_VALIDATION_LABEL = "trainer.kubeflow.org/webhook-validation"
#: Label of a runtime's replicatedJob template: which step of the TrainJob it runs.
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
#: Containers and replicatedJobs Trainer finds by name: the trainer nodes (``node``), the MPI
#: launcher, and the initializers (which are also ancestor label values).
NODE = "node"
LAUNCHER = "launcher"
DATASET_INITIALIZER = "dataset-initializer"
MODEL_INITIALIZER = "model-initializer"
#: Values of ANCESTOR_LABEL.
ANCESTOR_TRAINER = "trainer"
ANCESTOR_DATASET = DATASET_INITIALIZER
ANCESTOR_MODEL = MODEL_INITIALIZER
#: The port Trainer opens on trainer containers: torchrun's rendezvous (PET_MASTER_PORT) and the
#: JAX coordinator (constants.ContainerTrainerPort).
TRAINER_PORT = 29500
#: Where Trainer's MPI plugin mounts the hostfile ConfigMap on the launcher (one line per worker).
MPI_HOSTFILE_PATH = "/etc/mpi/hostfile"
#: The value Trainer's MPI plugin gives ``OMPI_MCA_plm_rsh_args`` (workers' sshd may start late).
MPI_RSH_ARGS_VALUE = "-o ConnectionAttempts=10"

# -- volumes trainspec puts into pods ----------------------------------------------------------

#: ``/dev/shm`` as a memory-backed emptyDir.
SHM_VOLUME = "dshm"
#: Where that volume is mounted: the shared memory NCCL and data loaders use (a path in the pod).
SHM_MOUNT_PATH = "/dev/shm"  # noqa: S108 (a mount path in the pod, not a temporary file of ours)
#: The checkpoint claim's volume in trainer pods.
CHECKPOINT_VOLUME = "checkpoints"
#: The shard volume: the name Trainer's webhook requires on initializer containers.
SHARD_VOLUME = "initializer"
#: The user (and group) trainspec's stage image runs as (the repository's Dockerfile, USER): the
#: sharding pod's fsGroup, so a freshly provisioned, root-owned shard volume is writable by it.
STAGE_UID = 65532
#: A ``pvc://`` data source mounted into the sharding stage.
SHARD_SOURCE_VOLUME = "data-source"

# -- JobSet ------------------------------------------------------------------------------------

JOBSET_GROUP = "jobset.x-k8s.io"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
#: JobSet's pod label: which replica (Job) of the replicated job the pod belongs to.
JOB_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"
#: Label the JobSet controller puts on every pod when ``spec.coordinator`` is set: the
#: coordinator pod's endpoint ``<jobset>-<rjob>-<jobIndex>-<podIndex>.<subdomain>``.
JOBSET_COORDINATOR_LABEL = "jobset.sigs.k8s.io/coordinator"
#: Limits of the JobSet webhook (pkg/webhooks/jobset_webhook.go): ``spec.managedBy`` length,
#: PVC names ``<template>-<jobset>`` of volumeClaimPolicies, failure policy rule names.
JOBSET_MANAGED_BY_MAX = 63
JOBSET_CLAIM_NAME_MAX = 63
JOBSET_RULE_NAME_MAX = 128
JOBSET_RULE_NAME_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"

# -- Kueue -------------------------------------------------------------------------------------

KUEUE_GROUP = "kueue.x-k8s.io"
#: The served Kueue API versions trainspec reads: v1beta2, and v1beta1 (``spec.cohort``, not cohortName).
KUEUE_VERSION = "v1beta2"
KUEUE_LEGACY_VERSION = "v1beta1"
KUEUE_VERSIONS = (KUEUE_VERSION, KUEUE_LEGACY_VERSION)
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
#: Kueue's label on a Workload: the uid of the job it was made for.
KUEUE_JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
#: Seconds as a decimal int32 > 0 (Kueue ignores anything else): see MAX_EXEC_TIME_SECONDS.
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
#: Kueue's own runtimePatches entry on a TrainJob.
KUEUE_PATCH_MANAGER = "kueue.x-k8s.io/manager"
ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
JOB_MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
PODSET_SLICE_SIZE_ANNOTATION = "kueue.x-k8s.io/podset-slice-size"
#: Topology-aware scheduling annotations of a PodSet's pod template.
TOPOLOGY_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
TOPOLOGY_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
TOPOLOGY_UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
TOPOLOGY_SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
TOPOLOGY_SLICE_REQUIRED_CONSTRAINTS = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
#: Any of these on a pod template asks Kueue for topology-aware placement.
TOPOLOGY_ANNOTATIONS = (
    TOPOLOGY_REQUIRED,
    TOPOLOGY_PREFERRED,
    TOPOLOGY_UNCONSTRAINED,
    TOPOLOGY_SLICE_REQUIRED,
    TOPOLOGY_SLICE_REQUIRED_CONSTRAINTS,
)

# -- gang schedulers ---------------------------------------------------------------------------

COSCHEDULING_SCHEDULER = "scheduler-plugins-scheduler"
VOLCANO_SCHEDULER = "volcano"
VOLCANO_QUEUE_LABEL = "scheduling.volcano.sh/queue-name"

# -- KubeRay (ray.io/v1, KubeRay 1.7) and Kueue's RayJob integration ---------------------------

RAY_GROUP = "ray.io"
RAY_API_VERSION = f"{RAY_GROUP}/v1"
#: Container names of the Ray pods. KubeRay finds the Ray container by index (the first one),
#: not by name; these are the names its samples and docs use.
RAY_HEAD_CONTAINER = "ray-head"
RAY_WORKER_CONTAINER = "ray-worker"
#: The head's ports (KubeRay builds the head Service from them): GCS, dashboard (job
#: submission goes through it), Ray client.
RAY_HEAD_PORTS = {"gcs-server": 6379, "dashboard": 8265, "client": 10001}
#: The submission mode trainspec emits (KubeRay's default): a submitter Job runs ``ray job submit``.
RAY_DEFAULT_SUBMISSION_MODE = "K8sJobMode"
#: KubeRay's name limits (controllers/ray/utils/constant.go): a RayJob's RayCluster is
#: ``<rayjob>-<5 random>``, and a RayCluster name is at most 53 characters, so a RayJob's 47.
RAY_CLUSTER_NAME_MAX = 53
RAY_JOB_NAME_MAX = RAY_CLUSTER_NAME_MAX - 6
#: Kueue's PodSet names for a RayJob: the head group, then one per worker group (its
#: groupName), then in K8sJobMode the submitter Job. A worker group may not be called "head".
RAY_HEAD_PODSET = "head"
RAY_SUBMITTER_PODSET = "submitter"
#: PodSets a Kueue Workload may hold, by the first Kueue version with that limit
#: (Workload spec.podSets maxItems: 8 up to 0.17, 10 in 0.18, 18 from 0.19).
KUEUE_MAX_PODSETS = ((0, 0, 8), (0, 18, 10), (0, 19, 18))

#: The in-pod contract of the ray target (read by ``trainspec.stages.ray``): node counts,
#: processes (Ray Train workers) per node and the resources of one node.
NUM_NODES_ENV = "TRAINSPEC_NUM_NODES"
MIN_NODES_ENV = "TRAINSPEC_MIN_NODES"
PROCS_PER_NODE_ENV = "TRAINSPEC_PROCS_PER_NODE"
GPUS_PER_NODE_ENV = "TRAINSPEC_GPUS_PER_NODE"
CPUS_PER_NODE_ENV = "TRAINSPEC_CPUS_PER_NODE"
MAX_RESTARTS_ENV = "TRAINSPEC_MAX_RESTARTS"
RAY_ENV = (NUM_NODES_ENV, MIN_NODES_ENV, PROCS_PER_NODE_ENV, GPUS_PER_NODE_ENV, CPUS_PER_NODE_ENV, MAX_RESTARTS_ENV)

# -- Kubeflow Training Operator v1 (kubeflow.org/v1, 1.9) and mpi-operator (kubeflow.org/v2beta1, 0.8)

KUBEFLOW_GROUP = "kubeflow.org"
#: PyTorchJob and JAXJob (Training Operator 1.9); MPIJob v2beta1 is mpi-operator's (both define
#: the CRD mpijobs.kubeflow.org, so a cluster runs one of them; trainspec emits v2beta1).
KUBEFLOW_V1_API_VERSION = f"{KUBEFLOW_GROUP}/v1"
MPI_API_VERSION = f"{KUBEFLOW_GROUP}/v2beta1"
#: Replica types, the keys of pytorchReplicaSpecs / jaxReplicaSpecs / mpiReplicaSpecs. The
#: operators name pods and Services ``<job>-<type in lower case>-<index>``.
REPLICA_MASTER = "Master"
REPLICA_WORKER = "Worker"
REPLICA_LAUNCHER = "Launcher"
#: The containers the operators' webhooks require by name (PyTorchJob, JAXJob).
PYTORCH_CONTAINER = "pytorch"
JAX_CONTAINER = "jax"
#: mpi-operator runs the first container of each pod; the launcher's is LAUNCHER, the workers' this.
MPI_WORKER_CONTAINER = "mpi-worker"
#: The torchrun rendezvous trainspec asks for in a PyTorchJob's elasticPolicy (no etcd to run).
ELASTIC_RDZV_BACKEND = "c10d"
#: Kueue's integrations of these kinds (Configuration integrations.frameworks). Those of the
#: Training Operator v1 (PyTorchJob, JAXJob, ...) are deprecated and off by default from Kueue
#: 0.19, to be removed (tentatively) in 0.20; MPIJob (mpi-operator) stays on.
KUEUE_V1_FRAMEWORKS = {
    "PyTorchJob": "kubeflow.org/pytorchjob",
    "JAXJob": "kubeflow.org/jaxjob",
    "MPIJob": "kubeflow.org/mpijob",
}
KUEUE_V1_OFF_BY_DEFAULT = (0, 19)
KUEUE_V1_REMOVAL = (0, 20)

# -- observability (issue 15) ------------------------------------------------------------------

#: Labels on every trainer pod, beside JOB_LABEL (the job's name): GPU metrics (dcgm-exporter's
#: pod labels) and the job's own metrics (a PodMonitor's podTargetLabels) join to the job by them.
JOB_NAMESPACE_LABEL = "trainspec.dev/namespace"
TEAM_LABEL = "trainspec.dev/team"
RUNTIME_LABEL = "trainspec.dev/runtime"
#: The container port of the rank-0 Prometheus endpoint (its number is METRICS_PORT_ENV, defined
#: with the in-pod contract in trainspec.dsl.kube_facts and re-exported here).
METRICS_PORT_NAME = "train-metrics"
#: Prometheus Operator (PodMonitor).
MONITORING_GROUP = "monitoring.coreos.com"
MONITORING_API_VERSION = f"{MONITORING_GROUP}/v1"
#: The label the Grafana Helm chart's dashboard sidecar looks for on ConfigMaps (sidecar.dashboards.label).
GRAFANA_DASHBOARD_LABEL = "grafana_dashboard"
#: Pod labels of the Training Operator v1 and mpi-operator (replica type in lower case, index).
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
#: KubeRay's pod label: head or worker.
RAY_NODE_TYPE_LABEL = "ray.io/node-type"

# -- GPU node labels (issue 25: the accelerator inferred from a runtime's nodeSelector) ----------

#: NVIDIA GPU feature discovery (GPU Operator): the product name, e.g. NVIDIA-H100-80GB-HBM3.
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
#: GKE's GPU node pools: the accelerator type, e.g. nvidia-h100-80gb.
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
#: Karpenter on AWS: the GPU's name (h100, a100, l40s) and one GPU's memory in MiB.
KARPENTER_GPU_NAME_LABEL = "karpenter.k8s.aws/instance-gpu-name"
KARPENTER_GPU_MEMORY_LABEL = "karpenter.k8s.aws/instance-gpu-memory"
