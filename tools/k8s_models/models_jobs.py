"""Generator configuration of the job kinds: Trainer, Trainer v2.1, KubeRay, Training Operator v1, MPI.

Docstrings here are trainspec's own words about how the compiler uses each type; no upstream
``description`` is copied. See :mod:`tools.k8s_models.vocabulary` for the vocabulary.
"""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["KUBEFLOW_V1", "LEGACY", "MPI", "RAY", "TRAINER"]

TRAINER = Module(
    name="trainer",
    doc="Kubeflow Trainer (``trainer.kubeflow.org/v1alpha1``): TrainJob and the training runtimes.",
    classes=(
        Cls(
            "RuntimeRef",
            "The runtime a TrainJob instantiates. Immutable; the runtime must exist before the job.",
            (
                "name",
                "api_group",
                "kind",
            ),
        ),
        Cls(
            "DatasetInitializer",
            """Feeds the ``dataset-initializer`` container of the rjob with that ancestor label.

``storage_uri`` becomes env ``STORAGE_URI``; ``secret_ref`` becomes ``envFrom.secretRef``
(so the secret's keys must be env names like ``ACCESS_TOKEN``).""",
            (
                "storage_uri",
                Field("env", ref="EnvVar"),
                Field("secret_ref", ref="LocalObjectReference"),
            ),
        ),
        Cls(
            "ModelInitializer",
            "Feeds the ``model-initializer`` container of the rjob with that ancestor label.",
            (
                "storage_uri",
                Field("env", ref="EnvVar"),
                Field("secret_ref", ref="LocalObjectReference"),
            ),
        ),
        Cls(
            "Initializer",
            "Dataset and model initializers. Immutable.",
            (
                Field("dataset", ref="DatasetInitializer"),
                Field("model", ref="ModelInitializer"),
            ),
        ),
        Cls(
            "Trainer",
            """Overrides for container ``node`` of the trainer-ancestor rjob. Immutable.

``command``/``args`` replace the runtime's; ``env`` is upserted (framework-reserved names
such as ``PET_*`` are rejected); ``resources_per_node`` is merged key by key (v2.3+);
``num_nodes`` sets the Job's parallelism/completions.""",
            (
                "image",
                "command",
                "args",
                Field("env", ref="EnvVar"),
                "num_nodes",
                Field("resources_per_node", ref="ResourceRequirements"),
                "num_proc_per_node",
            ),
        ),
        Cls(
            "MetadataPatch",
            "Labels/annotations to merge into the patched object (the only metadata allowed).",
            (
                "labels",
                "annotations",
            ),
        ),
        Cls(
            "ContainerPatch",
            """Patch for an existing container of the rjob.

Setting ``env`` on ``node``, ``dataset-initializer`` or ``model-initializer`` is rejected:
use ``Trainer.env`` / the initializer's ``env`` for those.""",
            (
                "name",
                Field("env", ref="EnvVar"),
                Field("volume_mounts", ref="VolumeMount"),
                Field("security_context", ref="SecurityContext"),
            ),
        ),
        Cls(
            "PodSpecPatch",
            """Patch for a pod spec.

Volumes, containers, initContainers, serviceAccountName, imagePullSecrets, securityContext
and terminationGracePeriodSeconds are immutable once the patch entry exists; the
scheduling fields (nodeSelector, affinity, tolerations, schedulingGates) stay mutable.""",
            (
                Field("volumes", ref="Volume"),
                Field("init_containers", ref="ContainerPatch"),
                Field("containers", ref="ContainerPatch"),
                "node_selector",
                Field("affinity", ref="Affinity"),
                Field("tolerations", ref="Toleration"),
                Field("scheduling_gates", ref="PodSchedulingGate"),
                "service_account_name",
                Field("image_pull_secrets", ref="LocalObjectReference"),
                Field("security_context", ref="PodSecurityContext"),
                "termination_grace_period_seconds",
            ),
        ),
        Cls(
            "PodTemplatePatch",
            "Patch for a Job's pod template (labels here land on the pods).",
            (
                Field("metadata", ref="MetadataPatch"),
                Field("spec", ref="PodSpecPatch"),
            ),
        ),
        Cls(
            "JobSpecPatch",
            "Patch for a Job spec: only the pod template can be patched.",
            (Field("template", ref="PodTemplatePatch"),),
        ),
        Cls(
            "JobTemplatePatch",
            "Patch for an rjob's Job template (labels here land on the Job, not the pods).",
            (
                Field("metadata", ref="MetadataPatch"),
                Field("spec", ref="JobSpecPatch"),
            ),
        ),
        Cls(
            "ReplicatedJobPatch",
            "Patch for one rjob, matched by name (which must exist in the runtime).",
            (
                "name",
                Field("template", ref="JobTemplatePatch"),
            ),
        ),
        Cls(
            "JobSetSpecPatch",
            "Patch for the JobSet spec: only replicatedJobs can be patched.",
            (Field("replicated_jobs", ref="ReplicatedJobPatch"),),
        ),
        Cls(
            "JobSetTemplatePatch",
            "Patch for the runtime's JobSet template (metadata lands on the JobSet).",
            (
                Field("metadata", ref="MetadataPatch"),
                Field("spec", ref="JobSetSpecPatch"),
            ),
        ),
        Cls(
            "TrainingRuntimeSpecPatch",
            "Patch for the referenced runtime's spec.",
            (Field("template", ref="JobSetTemplatePatch"),),
        ),
        Cls(
            "RuntimePatch",
            """One ``runtimePatches`` entry, keyed by ``manager`` (a domain-prefixed path).

The webhook stamps ``time``; it is never emitted by trainspec.""",
            (
                "manager",
                Field("training_runtime_spec", ref="TrainingRuntimeSpecPatch"),
            ),
        ),
        Cls(
            "TrainJobSpec",
            "A TrainJob specification. Only ``suspend`` is freely mutable after creation.",
            (
                Field("runtime_ref", ref="RuntimeRef"),
                Field("initializer", ref="Initializer"),
                Field("trainer", ref="Trainer"),
                Field("runtime_patches", ref="RuntimePatch"),
                "suspend",
                "active_deadline_seconds",
                "managed_by",
            ),
        ),
        Cls(
            "TrainJob",
            """A training job (top-level, namespaced). The controller creates one JobSet of the same name.

Metadata labels/annotations are NOT copied to the JobSet or pods (Kueue reads the queue
label here); use a runtime patch to label Jobs or pods.""",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="TrainJobSpec"),
            ),
            resource=("TRAINER_API_VERSION", "TrainJob"),
            path="trainjob:",
        ),
        Cls(
            "EnvInjectionTarget",
            "Extra containers (not ``node``, 1-8 names) of rjob ``job_name`` that get the PET_* env.",
            (
                "job_name",
                "container_names",
            ),
        ),
        Cls(
            "TorchEnvInjection",
            "Where else the torch plugin injects PET_* env (v2.3+).",
            (Field("targets", ref="EnvInjectionTarget"),),
        ),
        Cls(
            "TorchMLPolicySource",
            """PyTorch policy; ``TorchMLPolicySource()`` serialises to ``torch: {}``.

There is no numProcPerNode here since v2.2: it comes from the TrainJob or is inferred.""",
            (Field("env_injection", ref="TorchEnvInjection"),),
        ),
        Cls(
            "MPIMLPolicySource",
            "MPI (OpenMPI) policy: rjobs ``launcher`` + ``node``, SSH keys and hostfile injected.",
            (
                "num_proc_per_node",
                "mpi_implementation",
                "ssh_auth_mount_path",
                "run_launcher_as_node",
            ),
        ),
        Cls(
            "JAXMLPolicySource",
            "JAX policy: an empty struct, serialises to ``jax: {}``.",
            (),
        ),
        Cls(
            "XGBoostMLPolicySource",
            "XGBoost policy: an empty struct, serialises to ``xgboost: {}``.",
            (),
        ),
        Cls(
            "FluxMLPolicySource",
            "Flux framework policy.",
            ("num_proc_per_node",),
        ),
        Cls(
            "MLPolicy",
            "Node count plus at most ONE framework source (CEL); none at all means plain ML.",
            (
                "num_nodes",
                Field("torch", ref="TorchMLPolicySource"),
                Field("mpi", ref="MPIMLPolicySource"),
                Field("jax", ref="JAXMLPolicySource"),
                Field("xgboost", ref="XGBoostMLPolicySource"),
                Field("flux", ref="FluxMLPolicySource"),
            ),
        ),
        Cls(
            "CoschedulingPodGroupPolicySource",
            "scheduler-plugins gang scheduling; the pod template must also set ``schedulerName``.",
            ("schedule_timeout_seconds",),
        ),
        Cls(
            "VolcanoNetworkTopology",
            "Volcano network-topology-aware placement.",
            (
                "mode",
                "highest_tier_allowed",
            ),
        ),
        Cls(
            "VolcanoPodGroupPolicySource",
            """Volcano gang scheduling; the queue comes from JobSet annotation
``scheduling.volcano.sh/queue-name``.""",
            (Field("network_topology", ref="VolcanoNetworkTopology"),),
        ),
        Cls(
            "PodGroupPolicy",
            "Gang scheduling through a PodGroup; set one source (Kueue users usually set none).",
            (
                Field("coscheduling", ref="CoschedulingPodGroupPolicySource"),
                Field("volcano", ref="VolcanoPodGroupPolicySource"),
            ),
        ),
        Cls(
            "JobSetTemplateSpec",
            "The runtime's JobSet blueprint (metadata lands on the JobSet).",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="JobSetSpec", required=True),
            ),
        ),
        Cls(
            "TrainingRuntimeSpec",
            """Shared spec of TrainingRuntime and ClusterTrainingRuntime.

Always set ``ml_policy`` (even just ``MLPolicy(num_nodes=1)``): the SDK fails to list
runtimes without one.""",
            (
                Field("ml_policy", ref="MLPolicy"),
                Field("pod_group_policy", ref="PodGroupPolicy"),
                Field("template", ref="JobSetTemplateSpec", required=True),
            ),
        ),
        Cls(
            "ClusterTrainingRuntime",
            "A cluster-scoped runtime blueprint (metadata carries no namespace).",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="TrainingRuntimeSpec"),
            ),
            resource=("TRAINER_API_VERSION", "ClusterTrainingRuntime"),
            path="clustertrainingruntime:",
        ),
        Cls(
            "TrainingRuntime",
            "A namespaced runtime blueprint; only TrainJobs of the same namespace can use it.",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="TrainingRuntimeSpec"),
            ),
            resource=("TRAINER_API_VERSION", "TrainingRuntime"),
            path="trainingruntime:",
        ),
    ),
    reexports=(("wellknown", "TRAINER_API_VERSION"),),
)


LEGACY = Module(
    name="legacy",
    doc="""The Kubeflow Trainer v2.1 TrainJob, for clusters not yet on 2.2 (see ``compiler.targets``).

What differs from the v2.2+ TrainJob in :mod:`trainspec.k8s.trainer`:

* ``spec.podTemplateOverrides`` (each entry aimed at replicatedJobs by ``targetJobs``) instead
  of ``spec.runtimePatches``;
* ``spec.labels`` / ``spec.annotations``, applied to the derived JobSet and its Jobs;
* no ``spec.activeDeadlineSeconds``;
* ``spec.trainer.numProcPerNode`` is an IntOrString (``auto``, ``cpu``, ``gpu`` or a number).

Not part of the lazily re-exported ``trainspec.k8s`` names: import this module directly.""",
    classes=(
        Cls(
            "PodTemplateOverrideTargetJob",
            "A replicatedJob of the runtime that an override applies to (by name).",
            ("name",),
            path="manual:PodTemplateOverrideTargetJob",
        ),
        Cls(
            "ContainerOverride",
            "Additions to an existing container of the targeted jobs: env and volume mounts.",
            (
                "name",
                Field("env", ref="EnvVar"),
                Field("volume_mounts", ref="VolumeMount"),
            ),
            path="manual:ContainerOverride",
        ),
        Cls(
            "PodTemplateOverrideSpec",
            "The pod-spec fields a v2.1 override may set.",
            (
                "service_account_name",
                "node_selector",
                Field("affinity", ref="Affinity"),
                Field("tolerations", ref="Toleration"),
                Field("volumes", ref="Volume"),
                Field("init_containers", ref="ContainerOverride"),
                Field("containers", ref="ContainerOverride"),
                Field("scheduling_gates", ref="PodSchedulingGate"),
                Field("image_pull_secrets", ref="LocalObjectReference"),
            ),
            path="manual:PodTemplateOverrideSpec",
        ),
        Cls(
            "PodTemplateOverride",
            "Pod metadata and spec overrides for the replicatedJobs named in ``target_jobs``.",
            (
                Field("target_jobs", ref="PodTemplateOverrideTargetJob"),
                Field("metadata", ref="MetadataPatch"),
                Field("spec", ref="PodTemplateOverrideSpec"),
            ),
            path="manual:PodTemplateOverride",
        ),
        Cls(
            "TrainerV21",
            "``spec.trainer`` of v2.1: as in v2.2+, but numProcPerNode may also be auto/cpu/gpu.",
            (
                "image",
                "command",
                "args",
                Field("env", ref="EnvVar"),
                "num_nodes",
                Field("resources_per_node", ref="ResourceRequirements"),
                Field("num_proc_per_node", type="int | str"),
            ),
            path="trainjob:spec.trainer",
        ),
        Cls(
            "TrainJobSpecV21",
            "A v2.1 TrainJob specification (no runtimePatches, no activeDeadlineSeconds).",
            (
                Field("runtime_ref", ref="RuntimeRef"),
                Field("initializer", ref="Initializer"),
                Field("trainer", ref="TrainerV21"),
                "labels",
                "annotations",
                Field("pod_template_overrides", ref="PodTemplateOverride"),
                "suspend",
                "managed_by",
            ),
            path="manual:TrainJobSpecV21",
        ),
        Cls(
            "TrainJobV21",
            "A TrainJob as Kubeflow Trainer v2.1 (and Kueue 0.15-0.16) understand it.",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="TrainJobSpecV21"),
            ),
            resource=("TRAINER_API_VERSION", "TrainJob"),
            path="manual:TrainJobV21",
        ),
    ),
    lazy=False,
)


RAY = Module(
    name="ray",
    doc="""KubeRay ``RayJob`` (``ray.io/v1``, KubeRay 1.7): the sub-trees the ray target emits.

Only the fields trainspec writes are modelled; the CRD has many more (autoscaler, GCS fault
tolerance, auth, deletion rules). A RayJob carries the whole cluster it runs on
(``rayClusterSpec``): KubeRay creates a RayCluster ``<rayjob>-<5 random>`` from it, submits the
``entrypoint`` to the head and, with ``shutdownAfterJobFinishes``, deletes the cluster after.""",
    classes=(
        Cls(
            "HeadGroupSpec",
            """The head pod: GCS, dashboard, and (in K8sJobMode) where the job's driver runs.

``rayStartParams`` become ``ray start`` flags; KubeRay fills ``num-cpus``, ``num-gpus`` and
``memory`` from the Ray container's resource limits unless they are given here.""",
            (
                "ray_start_params",
                Field("template", ref="PodTemplateSpec"),
            ),
        ),
        Cls(
            "WorkerGroupSpec",
            "One group of identical worker pods; KubeRay 1.7 requires min and max replicas without autoscaling.",
            (
                "group_name",
                "replicas",
                "min_replicas",
                "max_replicas",
                "num_of_hosts",
                "ray_start_params",
                Field("template", ref="PodTemplateSpec"),
            ),
        ),
        Cls(
            "RayClusterSpec",
            "The cluster a RayJob creates: one head group and worker groups.",
            (
                "ray_version",
                "enable_in_tree_autoscaling",
                Field("head_group_spec", ref="HeadGroupSpec"),
                Field("worker_group_specs", ref="WorkerGroupSpec"),
            ),
        ),
        Cls(
            "RayJobSpec",
            "What to run (``entrypoint``), on which cluster, and how long and how often.",
            (
                "entrypoint",
                Field("submission_mode", type="SubmissionMode"),
                "runtime_env_yaml",
                Field("ray_cluster_spec", ref="RayClusterSpec"),
                "cluster_selector",
                "shutdown_after_job_finishes",
                "ttl_seconds_after_finished",
                "active_deadline_seconds",
                "backoff_limit",
                "suspend",
            ),
        ),
        Cls(
            "RayJob",
            "A Ray job with its own Ray cluster (top-level, namespaced). Kueue reads the queue label here.",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="RayJobSpec"),
            ),
            resource=("RAY_API_VERSION", "RayJob"),
            path="rayjob:",
        ),
    ),
    preamble="""#: K8sJobMode (a submitter Job; KubeRay's default), HTTPMode, InteractiveMode or SidecarMode.
SubmissionMode = str""",
    reexports=(("wellknown", "RAY_API_VERSION"),),
)


KUBEFLOW_V1 = Module(
    name="kubeflow_v1",
    doc="""Kubeflow Training Operator v1 (``kubeflow.org/v1``, Training Operator 1.9): PyTorchJob and JAXJob.

Only the sub-trees trainspec emits are modelled. ``RunPolicy``, ``SchedulingPolicy`` and
``ReplicaSpec`` are the operator's common types; mpi-operator's MPIJob (:mod:`trainspec.k8s.mpi`)
has the same shapes and reuses them.""",
    classes=(
        Cls(
            "SchedulingPolicy",
            "What a gang scheduler (Volcano, scheduler-plugins coscheduling) gets in the job's PodGroup.",
            (
                "min_available",
                "queue",
                "min_resources",
                "priority_class",
                "schedule_timeout_seconds",
            ),
        ),
        Cls(
            "RunPolicy",
            "Job-wide policies: pod clean-up, retries, deadline, gang scheduling and Kueue's ``suspend``.",
            (
                Field("clean_pod_policy", alias="CleanPodPolicy"),
                "ttl_seconds_after_finished",
                "active_deadline_seconds",
                Field(
                    "backoff_limit",
                    comment="Retries before the job is marked failed (pod restarts count, as in a batch Job).",
                ),
                Field("scheduling_policy", ref="SchedulingPolicy"),
                Field("suspend", comment="Created suspended, Kueue starts the job on admission."),
                "managed_by",
            ),
        ),
        Cls(
            "ReplicaSpec",
            "One replica type (Master, Worker, Launcher): how many pods, their template and restart policy.",
            (
                "replicas",
                Field("template", ref="PodTemplateSpec", required=True),
                Field("restart_policy", alias="RestartPolicy"),
            ),
        ),
        Cls(
            "ElasticPolicy",
            """torchrun's elastic launch: the operator turns it into ``PET_NNODES=min:max``, the rendezvous
endpoint (``<job>-worker-0``) and ``PET_MAX_RESTARTS``.""",
            (
                "min_replicas",
                "max_replicas",
                Field("rdzv_backend", comment="c10d, etcd or etcd-v2 (the CRD takes any string)."),
                "rdzv_port",
                "rdzv_host",
                "rdzv_id",
                "standalone",
                "max_restarts",
            ),
        ),
        Cls(
            "PyTorchJobSpec",
            """Master (exactly one) and Workers, or Workers only when elastic; ``nprocPerNode`` is a string
(``auto``, ``cpu``, ``gpu`` or a number).""",
            (
                Field("run_policy", ref="RunPolicy"),
                Field("elastic_policy", ref="ElasticPolicy"),
                Field("pytorch_replica_specs", ref="ReplicaSpec"),
                "nproc_per_node",
            ),
        ),
        Cls(
            "PyTorchJob",
            "A PyTorch job of the Training Operator (namespaced). Kueue reads the queue label here.",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="PyTorchJobSpec"),
            ),
            resource=("KUBEFLOW_V1_API_VERSION", "PyTorchJob"),
            path="pytorchjob:",
        ),
        Cls(
            "JAXJobSpec",
            "Workers only; the operator sets the JAX coordinator address and process ids.",
            (
                Field("run_policy", ref="RunPolicy"),
                Field("jax_replica_specs", ref="ReplicaSpec"),
            ),
        ),
        Cls(
            "JAXJob",
            "A JAX job of the Training Operator (namespaced).",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="JAXJobSpec"),
            ),
            resource=("KUBEFLOW_V1_API_VERSION", "JAXJob"),
            path="jaxjob:",
        ),
    ),
    reexports=(("wellknown", "KUBEFLOW_V1_API_VERSION"),),
)


MPI = Module(
    name="mpi",
    doc="""mpi-operator's MPIJob (``kubeflow.org/v2beta1``, mpi-operator 0.8): a launcher and SSH workers.

Run policy and replica specs have the Training Operator's shapes (:mod:`trainspec.k8s.kubeflow_v1`).""",
    classes=(
        Cls(
            "MPIJobSpec",
            """Launcher (exactly one) and Workers; the operator writes the hostfile (``slotsPerWorker`` slots
per worker) and mounts the SSH keys at ``sshAuthMountPath``.

mpi-operator validates these itself (it has no webhook): ``runPolicy.cleanPodPolicy``,
``slotsPerWorker`` and ``sshAuthMountPath`` are required after its defaulting, and
``mpiImplementation`` is OpenMPI, Intel or MPICH.""",
            (
                "slots_per_worker",
                "run_launcher_as_worker",
                Field("run_policy", ref="RunPolicy"),
                Field("mpi_replica_specs", ref="ReplicaSpec"),
                "ssh_auth_mount_path",
                "launcher_creation_policy",
                "mpi_implementation",
            ),
        ),
        Cls(
            "MPIJob",
            "An MPI job of mpi-operator (namespaced). Kueue reads the queue label here.",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="MPIJobSpec"),
            ),
            resource=("MPI_API_VERSION", "MPIJob"),
            path="mpijob:",
        ),
    ),
    reexports=(("wellknown", "MPI_API_VERSION"),),
)
