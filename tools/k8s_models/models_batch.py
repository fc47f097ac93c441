"""Generator configuration of ``trainspec.k8s.batch``: the Job pieces JobSet replicatedJobs embed."""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["BATCH"]

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
