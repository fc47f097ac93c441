"""Batch (``batch/v1``) Job pieces, as embedded in JobSet replicatedJobs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trainspec.k8s.base import Model
from trainspec.k8s.core import PodTemplateSpec
from trainspec.k8s.meta import ObjectMeta

__all__ = [
    "JobSpec",
    "JobTemplateSpec",
    "PodFailurePolicy",
    "PodFailurePolicyOnExitCodesRequirement",
    "PodFailurePolicyOnPodConditionsPattern",
    "PodFailurePolicyRule",
]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodFailurePolicyOnExitCodesRequirement(Model):
    """Matches a pod failure by a container's exit code."""

    container_name: str | None = None
    operator: Literal["In", "NotIn"]
    values: list[int]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodFailurePolicyOnPodConditionsPattern(Model):
    """Matches a pod failure by a pod condition (e.g. ``DisruptionTarget``)."""

    type: str
    status: Literal["True", "False", "Unknown"] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodFailurePolicyRule(Model):
    """What to do with a matching pod failure. Needs pod ``restartPolicy: Never``."""

    action: Literal["FailJob", "FailIndex", "Ignore", "Count"]
    on_exit_codes: PodFailurePolicyOnExitCodesRequirement | None = None
    on_pod_conditions: list[PodFailurePolicyOnPodConditionsPattern] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PodFailurePolicy(Model):
    """Per-Job handling of pod failures; the first matching rule wins."""

    rules: list[PodFailurePolicyRule]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JobSpec(Model):
    """A Job specification.

    For ancestor-labelled rjobs the Trainer controller overwrites ``parallelism`` and
    ``completions`` from ``numNodes``; JobSet defaults ``completion_mode`` to ``Indexed`` (node
    rank = completion index).
    """

    parallelism: int | None = None
    completions: int | None = None
    completion_mode: Literal["NonIndexed", "Indexed"] | None = None
    backoff_limit: int | None = None
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    active_deadline_seconds: int | None = None
    ttl_seconds_after_finished: int | None = None
    pod_replacement_policy: Literal["TerminatingOrFailed", "Failed"] | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    template: PodTemplateSpec


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JobTemplateSpec(Model):
    """Job metadata + spec, the template of a JobSet replicatedJob.

    Labels here land on the Job, not on its pods: the Trainer ancestor label
    (``trainer.kubeflow.org/trainjob-ancestor-step``) belongs here, NOT in the pod template.
    """

    metadata: ObjectMeta | None = None
    spec: JobSpec
