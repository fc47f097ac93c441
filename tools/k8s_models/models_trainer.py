"""Generator configuration of ``trainspec.k8s.trainer``: Kubeflow Trainer's TrainJob and training runtimes."""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["TRAINER"]

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
