"""Generator configuration of ``trainspec.k8s.jobset``: the JobSet spec Trainer runtimes embed."""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["JOBSET"]

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
