"""JobSet (``jobset.x-k8s.io/v1alpha2``) spec pieces, as embedded in Trainer runtimes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from trainspec.k8s.base import Model
from trainspec.k8s.batch import JobTemplateSpec
from trainspec.k8s.core import PersistentVolumeClaimTemplate

__all__ = [
    "Coordinator",
    "DependsOn",
    "FailurePolicy",
    "FailurePolicyRule",
    "JobSetSpec",
    "Network",
    "ReplicatedJob",
    "StartupPolicy",
    "SuccessPolicy",
    "VolumeClaimPolicy",
    "VolumeRetentionPolicy",
]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class DependsOn(Model):
    """Start this rjob only once rjob ``name`` reaches ``status``.

    Only earlier rjobs may be named, never on the first rjob, at most 5 entries; mutually
    exclusive with ``startupPolicy: InOrder``.
    """

    name: str
    status: Literal["Ready", "Complete"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ReplicatedJob(Model):
    """A group of identical Jobs named ``<jobset>-<name>-<index>``.

    Ancestor-labelled rjobs must keep ``replicas`` at 1 (the Trainer webhook enforces it);
    multi-node runs scale through the Job's parallelism/completions instead.
    """

    name: str
    group_name: str | None = None
    replicas: int | None = None
    depends_on: list[DependsOn] | None = None
    template: JobTemplateSpec


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Network(Model):
    """Pod DNS: hostnames ``<jobset>-<rjob>-<jobIdx>-<podIdx>.<subdomain>``. Immutable."""

    # The wire name is not the derived camelCase ("enableDnsHostnames").
    enable_dns_hostnames: bool | None = field(default=None, metadata={"wire": "enableDNSHostnames"})
    subdomain: str | None = None
    publish_not_ready_addresses: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class SuccessPolicy(Model):
    """When the JobSet counts as complete; target ``node`` so initializers don't decide it."""

    operator: Literal["All", "Any"]
    target_replicated_jobs: list[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class FailurePolicyRule(Model):
    """A failure rule; the first matching rule wins, no match means RestartJobSet."""

    name: str
    action: Literal[
        "FailJobSet",
        "RestartJobSet",
        "RestartJobSetAndIgnoreMaxRestarts",
        "RestartJob",
        "RestartJobAndIgnoreMaxRestarts",
    ]
    on_job_failure_reasons: list[str] | None = None
    on_job_failure_message_patterns: list[str] | None = None
    target_replicated_jobs: list[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class FailurePolicy(Model):
    """How often and how the whole JobSet is restarted on a Job failure. Immutable."""

    max_restarts: int | None = None
    restart_strategy: Literal["Recreate", "BlockingRecreate", "InPlaceRestart"] | None = None
    rules: list[FailurePolicyRule] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class StartupPolicy(Model):
    """Deprecated rjob start ordering; prefer ``depends_on``."""

    startup_policy_order: Literal["AnyOrder", "InOrder"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Coordinator(Model):
    """Stamps a stable coordinator endpoint label on every pod."""

    replicated_job: str
    job_index: int | None = None
    pod_index: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class VolumeRetentionPolicy(Model):
    """What happens to the shared PVCs when the JobSet is deleted (``Retain`` keeps checkpoints)."""

    when_deleted: Literal["Delete", "Retain"] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class VolumeClaimPolicy(Model):
    """Shared PVCs created by JobSet, one per template, named ``<claim>-<jobset>``.

    Some container must mount a volume of the claim's name, and no rjob may declare a
    ``volumes[]`` entry with that name. Immutable.
    """

    templates: list[PersistentVolumeClaimTemplate]
    retention_policy: VolumeRetentionPolicy | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JobSetSpec(Model):
    """A JobSet specification (the runtime's ``template.spec``)."""

    network: Network | None = None
    replicated_jobs: list[ReplicatedJob] | None = None
    success_policy: SuccessPolicy | None = None
    failure_policy: FailurePolicy | None = None
    startup_policy: StartupPolicy | None = None
    coordinator: Coordinator | None = None
    volume_claim_policies: list[VolumeClaimPolicy] | None = None
    ttl_seconds_after_finished: int | None = None
    suspend: bool | None = None
    managed_by: str | None = None
