"""Generator configuration of the platform-neutral models: meta, core, batch (Job) and JobSet.

Docstrings here are trainspec's own words about how the compiler uses each type; no upstream
``description`` is copied. See :mod:`tools.k8s_models.vocabulary` for the vocabulary.
"""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["BATCH", "CORE", "JOBSET", "META"]

META = Module(
    name="meta",
    doc="Object metadata (meta/v1).",
    classes=(
        Cls(
            "OwnerReference",
            "A reference to the owning object (garbage collection follows it).",
            (
                "api_version",
                "kind",
                "name",
                "uid",
                "controller",
                "block_owner_deletion",
            ),
            path="manual:OwnerReference",
        ),
        Cls(
            "ObjectMeta",
            """Standard object metadata.

Inside templates embedded in a CRD (JobSet template, Job template, pod template, PVC
templates) the CRD schema keeps only name, namespace, labels, annotations and finalizers;
the other fields are pruned there, so set them on top-level objects only.""",
            (
                "name",
                "generate_name",
                "namespace",
                "labels",
                "annotations",
                Field("owner_references", ref="OwnerReference"),
                "finalizers",
            ),
            path="manual:ObjectMeta",
        ),
    ),
)


CORE = Module(
    name="core",
    doc="""Core (``v1``) types: containers, pods, volumes, scheduling constraints and PVCs.

Only the fields trainspec emits are modelled. Field order follows the Kubernetes API types,
with ``name`` first in list items; the serialiser keeps it.""",
    classes=(
        Cls(
            "LocalObjectReference",
            "A reference to an object in the same namespace, by name (e.g. an image pull secret).",
            (Field("name", required=True),),
        ),
        Cls(
            "ObjectFieldSelector",
            """Selects a pod field (the node rank is the annotation
``batch.kubernetes.io/job-completion-index``).""",
            (
                "api_version",
                "field_path",
            ),
        ),
        Cls(
            "ResourceFieldSelector",
            "Selects a container resource (limits/requests) to expose as env.",
            (
                "container_name",
                "resource",
                "divisor",
            ),
        ),
        Cls(
            "ConfigMapKeySelector",
            "One key of a ConfigMap.",
            (
                Field("name", required=True),
                "key",
                "optional",
            ),
        ),
        Cls(
            "SecretKeySelector",
            "One key of a Secret.",
            (
                Field("name", required=True),
                "key",
                "optional",
            ),
        ),
        Cls(
            "EnvVarSource",
            "Where an env var's value comes from (set exactly one).",
            (
                Field("field_ref", ref="ObjectFieldSelector"),
                Field("resource_field_ref", ref="ResourceFieldSelector"),
                Field("config_map_key_ref", ref="ConfigMapKeySelector"),
                Field("secret_key_ref", ref="SecretKeySelector"),
            ),
        ),
        Cls(
            "EnvVar",
            "An environment variable: a literal ``value`` or a ``value_from`` source.",
            (
                "name",
                "value",
                Field("value_from", ref="EnvVarSource"),
            ),
        ),
        Cls(
            "ConfigMapEnvSource",
            "All keys of a ConfigMap as env vars.",
            (
                Field("name", required=True),
                "optional",
            ),
        ),
        Cls(
            "SecretEnvSource",
            "All keys of a Secret as env vars.",
            (
                Field("name", required=True),
                "optional",
            ),
        ),
        Cls(
            "EnvFromSource",
            "An ``envFrom`` entry (set one of ``config_map_ref`` / ``secret_ref``).",
            (
                "prefix",
                Field("config_map_ref", ref="ConfigMapEnvSource"),
                Field("secret_ref", ref="SecretEnvSource"),
            ),
        ),
        Cls(
            "ResourceRequirements",
            "Container requests and limits (extended resources like GPUs need requests == limits).",
            (
                "requests",
                "limits",
            ),
        ),
        Cls(
            "VolumeResourceRequirements",
            "PVC size: ``requests: {storage: 100Gi}``.",
            (
                "requests",
                "limits",
            ),
        ),
        Cls(
            "VolumeMount",
            "Mounts a pod volume (by name) into a container.",
            (
                "name",
                "mount_path",
                "read_only",
                "sub_path",
                "sub_path_expr",
            ),
        ),
        Cls(
            "KeyToPath",
            "Projects one Secret/ConfigMap key to a relative file path.",
            (
                "key",
                "path",
                "mode",
            ),
        ),
        Cls(
            "EmptyDirVolumeSource",
            'Scratch space; ``medium="Memory"`` gives a tmpfs (the usual /dev/shm for NCCL loaders).',
            (
                "medium",
                "size_limit",
            ),
        ),
        Cls(
            "PersistentVolumeClaimVolumeSource",
            "Mounts an existing PVC.",
            (
                "claim_name",
                "read_only",
            ),
        ),
        Cls(
            "SecretVolumeSource",
            "Mounts a Secret as files.",
            (
                Field("secret_name", required=True),
                Field("items", ref="KeyToPath"),
                "default_mode",
                "optional",
            ),
        ),
        Cls(
            "ConfigMapVolumeSource",
            "Mounts a ConfigMap as files.",
            (
                Field("name", required=True),
                Field("items", ref="KeyToPath"),
                "default_mode",
                "optional",
            ),
        ),
        Cls(
            "Volume",
            "A pod volume: a name plus exactly one source.",
            (
                "name",
                Field("empty_dir", ref="EmptyDirVolumeSource"),
                Field("persistent_volume_claim", ref="PersistentVolumeClaimVolumeSource"),
                Field("secret", ref="SecretVolumeSource"),
                Field("config_map", ref="ConfigMapVolumeSource"),
            ),
        ),
        Cls(
            "Capabilities",
            "Linux capabilities to add or drop (``drop: [ALL]`` for the restricted profile).",
            (
                "add",
                "drop",
            ),
        ),
        Cls(
            "SeccompProfile",
            "Seccomp profile (``type: RuntimeDefault`` for the restricted profile).",
            (
                "type",
                "localhost_profile",
            ),
        ),
        Cls(
            "SecurityContext",
            "Container-level security settings (override the pod-level ones).",
            (
                Field("capabilities", ref="Capabilities"),
                "privileged",
                "run_as_user",
                "run_as_group",
                "run_as_non_root",
                "read_only_root_filesystem",
                "allow_privilege_escalation",
                Field("seccomp_profile", ref="SeccompProfile"),
            ),
        ),
        Cls(
            "PodSecurityContext",
            "Pod-level security settings (``fs_group`` makes mounted volumes group-writable).",
            (
                "run_as_user",
                "run_as_group",
                "run_as_non_root",
                "supplemental_groups",
                "fs_group",
                "fs_group_change_policy",
                Field("seccomp_profile", ref="SeccompProfile"),
            ),
        ),
        Cls(
            "Toleration",
            "Lets pods schedule onto nodes with a matching taint.",
            (
                "key",
                "operator",
                "value",
                "effect",
                "toleration_seconds",
            ),
        ),
        Cls(
            "NodeSelectorRequirement",
            "``key operator values``, e.g. ``nvidia.com/gpu.product In [H100-SXM]``.",
            (
                "key",
                "operator",
                "values",
            ),
        ),
        Cls(
            "NodeSelectorTerm",
            "Requirements ANDed together (terms in a list are ORed).",
            (
                Field("match_expressions", ref="NodeSelectorRequirement"),
                Field("match_fields", ref="NodeSelectorRequirement"),
            ),
        ),
        Cls(
            "NodeSelector",
            "The required node-affinity rule: any one of the terms must match.",
            (Field("node_selector_terms", ref="NodeSelectorTerm"),),
        ),
        Cls(
            "PreferredSchedulingTerm",
            "A weighted (1-100) soft node preference.",
            (
                "weight",
                Field("preference", ref="NodeSelectorTerm"),
            ),
        ),
        Cls(
            "NodeAffinity",
            "Hard and soft node constraints.",
            (
                Field("required_during_scheduling_ignored_during_execution", ref="NodeSelector"),
                Field("preferred_during_scheduling_ignored_during_execution", ref="PreferredSchedulingTerm"),
            ),
        ),
        Cls(
            "Affinity",
            "Pod affinity rules; only node affinity is modelled (pod (anti-)affinity is not emitted).",
            (Field("node_affinity", ref="NodeAffinity"),),
        ),
        Cls(
            "PodSchedulingGate",
            "A gate that keeps the pod unschedulable until removed (Kueue uses these).",
            ("name",),
        ),
        Cls(
            "ContainerPort",
            "A port the container listens on (informational, but names it for probes/services).",
            (
                "name",
                "container_port",
                "protocol",
            ),
        ),
        Cls(
            "TCPSocketAction",
            "Probe by opening a TCP connection to ``port`` (a number or a named port).",
            (
                "port",
                "host",
            ),
        ),
        Cls(
            "Probe",
            "A readiness/liveness probe; only the TCP handler is modelled.",
            (
                Field("tcp_socket", ref="TCPSocketAction"),
                "initial_delay_seconds",
                "period_seconds",
                "timeout_seconds",
                "success_threshold",
                "failure_threshold",
            ),
        ),
        Cls(
            "Container",
            "A container of a pod (also used for init containers).",
            (
                "name",
                "image",
                Field("image_pull_policy", alias="PullPolicy"),
                "command",
                "args",
                "working_dir",
                Field("env", ref="EnvVar"),
                Field("env_from", ref="EnvFromSource"),
                Field("ports", ref="ContainerPort"),
                Field("resources", ref="ResourceRequirements"),
                Field("volume_mounts", ref="VolumeMount"),
                Field("readiness_probe", ref="Probe"),
                Field("security_context", ref="SecurityContext"),
                Field("restart_policy", comment='Only for init containers: "Always" turns one into a native sidecar.'),
            ),
        ),
        Cls(
            "PodSpec",
            "A pod specification.",
            (
                Field("init_containers", ref="Container"),
                Field("containers", ref="Container"),
                Field("volumes", ref="Volume"),
                Field("restart_policy", alias="RestartPolicy"),
                "termination_grace_period_seconds",
                "service_account_name",
                "automount_service_account_token",
                Field("security_context", ref="PodSecurityContext"),
                Field("image_pull_secrets", ref="LocalObjectReference"),
                "scheduler_name",
                "priority_class_name",
                "node_selector",
                Field("affinity", ref="Affinity"),
                Field("tolerations", ref="Toleration"),
                Field("scheduling_gates", ref="PodSchedulingGate"),
            ),
        ),
        Cls(
            "PodTemplateSpec",
            "Pod metadata + spec, as embedded in a Job.",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="PodSpec", required=True),
            ),
        ),
        Cls(
            "PersistentVolumeClaimSpec",
            "What storage a PVC asks for.",
            (
                Field("access_modes", alias="AccessMode"),
                Field("resources", ref="VolumeResourceRequirements"),
                "volume_name",
                "storage_class_name",
                "volume_mode",
            ),
        ),
        Cls(
            "PersistentVolumeClaimTemplate",
            """A PVC without apiVersion/kind, as embedded in JobSet ``volumeClaimPolicies[].templates``.

The metadata must not set a namespace there (CEL rule); JobSet names the claim
``<metadata.name>-<jobset name>``.""",
            (
                Field("metadata", ref="ObjectMeta", required=True),
                Field("spec", ref="PersistentVolumeClaimSpec", required=True),
            ),
        ),
        Cls(
            "PersistentVolumeClaim",
            "A standalone PVC (top-level ``v1`` resource).",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="PersistentVolumeClaimSpec"),
            ),
            resource=('"v1"', "PersistentVolumeClaim"),
        ),
    ),
    preamble="""#: A resource quantity. An int is emitted as a YAML int (``nvidia.com/gpu: 8``); strings carry
#: suffixed forms (``1600Gi``, ``500m``). Both are what the API server accepts (int-or-string).
Quantity = str | int""",
    exports=("AccessMode", "Quantity"),
)


BATCH = Module(
    name="batch",
    doc="Batch (``batch/v1``) Job pieces, as embedded in JobSet replicatedJobs.",
    classes=(
        Cls(
            "PodFailurePolicyOnExitCodesRequirement",
            "Matches a pod failure by a container's exit code.",
            (
                "container_name",
                "operator",
                "values",
            ),
        ),
        Cls(
            "PodFailurePolicyOnPodConditionsPattern",
            "Matches a pod failure by a pod condition (e.g. ``DisruptionTarget``).",
            (
                "type",
                "status",
            ),
        ),
        Cls(
            "PodFailurePolicyRule",
            "What to do with a matching pod failure. Needs pod ``restartPolicy: Never``.",
            (
                "action",
                Field("on_exit_codes", ref="PodFailurePolicyOnExitCodesRequirement"),
                Field("on_pod_conditions", ref="PodFailurePolicyOnPodConditionsPattern"),
            ),
        ),
        Cls(
            "PodFailurePolicy",
            "Per-Job handling of pod failures; the first matching rule wins.",
            (Field("rules", ref="PodFailurePolicyRule"),),
        ),
        Cls(
            "JobSpec",
            """A Job specification.

For ancestor-labelled rjobs the Trainer controller overwrites ``parallelism`` and
``completions`` from ``numNodes``; JobSet defaults ``completion_mode`` to ``Indexed`` (node
rank = completion index).""",
            (
                "parallelism",
                "completions",
                "completion_mode",
                "backoff_limit",
                "backoff_limit_per_index",
                "max_failed_indexes",
                "active_deadline_seconds",
                "ttl_seconds_after_finished",
                "pod_replacement_policy",
                Field("pod_failure_policy", ref="PodFailurePolicy"),
                Field("template", ref="PodTemplateSpec"),
            ),
        ),
        Cls(
            "JobTemplateSpec",
            """Job metadata + spec, the template of a JobSet replicatedJob.

Labels here land on the Job, not on its pods: the Trainer ancestor label
(``trainer.kubeflow.org/trainjob-ancestor-step``) belongs here, NOT in the pod template.""",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="JobSpec", required=True),
            ),
            path="jobset:spec.replicatedJobs[].template",
        ),
    ),
)


JOBSET = Module(
    name="jobset",
    doc="JobSet (``jobset.x-k8s.io/v1alpha2``) spec pieces, as embedded in Trainer runtimes.",
    classes=(
        Cls(
            "DependsOn",
            """Start this rjob only once rjob ``name`` reaches ``status``.

Only earlier rjobs may be named, never on the first rjob, at most 5 entries; mutually
exclusive with ``startupPolicy: InOrder``.""",
            (
                "name",
                "status",
            ),
        ),
        Cls(
            "ReplicatedJob",
            """A group of identical Jobs named ``<jobset>-<name>-<index>``.

Ancestor-labelled rjobs must keep ``replicas`` at 1 (the Trainer webhook enforces it);
multi-node runs scale through the Job's parallelism/completions instead.""",
            (
                "name",
                "group_name",
                "replicas",
                Field("depends_on", ref="DependsOn"),
                Field("template", ref="JobTemplateSpec"),
            ),
        ),
        Cls(
            "Network",
            "Pod DNS: hostnames ``<jobset>-<rjob>-<jobIdx>-<podIdx>.<subdomain>``. Immutable.",
            (
                "enable_dns_hostnames",
                "subdomain",
                "publish_not_ready_addresses",
            ),
        ),
        Cls(
            "SuccessPolicy",
            "When the JobSet counts as complete; target ``node`` so initializers don't decide it.",
            (
                "operator",
                "target_replicated_jobs",
            ),
        ),
        Cls(
            "FailurePolicyRule",
            "A failure rule; the first matching rule wins, no match means RestartJobSet.",
            (
                "name",
                "action",
                "on_job_failure_reasons",
                "on_job_failure_message_patterns",
                "target_replicated_jobs",
            ),
        ),
        Cls(
            "FailurePolicy",
            "How often and how the whole JobSet is restarted on a Job failure. Immutable.",
            (
                "max_restarts",
                "restart_strategy",
                Field("rules", ref="FailurePolicyRule"),
            ),
        ),
        Cls(
            "StartupPolicy",
            "Deprecated rjob start ordering; prefer ``depends_on``.",
            ("startup_policy_order",),
        ),
        Cls(
            "Coordinator",
            "Stamps a stable coordinator endpoint label on every pod.",
            (
                "replicated_job",
                "job_index",
                "pod_index",
            ),
        ),
        Cls(
            "VolumeRetentionPolicy",
            "What happens to the shared PVCs when the JobSet is deleted (``Retain`` keeps checkpoints).",
            ("when_deleted",),
        ),
        Cls(
            "VolumeClaimPolicy",
            """Shared PVCs created by JobSet, one per template, named ``<claim>-<jobset>``.

Some container must mount a volume of the claim's name, and no rjob may declare a
``volumes[]`` entry with that name. Immutable.""",
            (
                Field("templates", ref="PersistentVolumeClaimTemplate", required=True),
                Field("retention_policy", ref="VolumeRetentionPolicy"),
            ),
        ),
        Cls(
            "JobSetSpec",
            "A JobSet specification (the runtime's ``template.spec``).",
            (
                Field("network", ref="Network"),
                Field("replicated_jobs", ref="ReplicatedJob"),
                Field("success_policy", ref="SuccessPolicy"),
                Field("failure_policy", ref="FailurePolicy"),
                Field("startup_policy", ref="StartupPolicy"),
                Field("coordinator", ref="Coordinator"),
                Field("volume_claim_policies", ref="VolumeClaimPolicy"),
                "ttl_seconds_after_finished",
                "suspend",
                "managed_by",
            ),
            path="jobset:spec",
        ),
    ),
)
