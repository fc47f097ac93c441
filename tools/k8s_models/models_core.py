"""Generator configuration of ``trainspec.k8s.core``: containers and pods, plus the volume and scheduling parts."""

from __future__ import annotations

from tools.k8s_models.models_core_scheduling import SCHEDULING_CLASSES
from tools.k8s_models.models_core_volumes import CLAIM_CLASSES, VOLUME_CLASSES
from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["CORE"]

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
        *VOLUME_CLASSES,
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
        *SCHEDULING_CLASSES,
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
        *CLAIM_CLASSES,
    ),
    preamble="""#: A resource quantity. An int is emitted as a YAML int (``nvidia.com/gpu: 8``); strings carry
#: suffixed forms (``1600Gi``, ``500m``). Both are what the API server accepts (int-or-string).
Quantity = str | int""",
    exports=("AccessMode", "Quantity"),
)
