"""What the JobSet create rules share: their constants, :class:`Finding`, field readers and rule state.

The rules themselves are in :mod:`.jobset_job_rules` (JobSet-wide fields and each
replicatedJob) and :mod:`.jobset_policy_rules` (success and failure policies, coordinator,
volume claims); :func:`.jobset_rules.jobset_findings` runs them in the webhook's order.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from trainspec.check._paths import join_path
from trainspec.dsl.diagnostics import Severity

#: JobSet feature gates that are off by default and guard create rules.
GATE_IN_PLACE_RESTART = "InPlaceRestart"
GATE_RESTART_JOB = "RestartJob"
GATE_ELASTIC = "ElasticJobSet"
ALPHA_GATES = (GATE_IN_PLACE_RESTART, GATE_RESTART_JOB, GATE_ELASTIC)
#: Failure policy actions that need the RestartJob gate, and the replicas they allow (the
#: status keeps at most this many job restarts per replicatedJob).
RESTART_JOB_ACTIONS = ("RestartJob", "RestartJobAndIgnoreMaxRestarts")
RESTART_JOB_MAX_REPLICAS = 1024
IN_PLACE_RESTART = "InPlaceRestart"
#: The Job condition reasons a failure policy rule may match (batch/v1 JobReason*).
JOB_FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
INDEXED = "Indexed"
#: CRD default of replicatedJobs[].groupName; the mutating webhook's rule-name default.
DEFAULT_GROUP_NAME = "default"
DEFAULT_RULE_NAME = "failurePolicyRule{}"

#: What a finding depends on, so callers can tell template problems from instance problems:
#: the spec alone, the JobSet name, pod counts (which Trainer sets), or pod volumes and mounts.
TEMPLATE, NAME, COUNTS, PODS = "template", "name", "counts", "pods"


@dataclass(frozen=True)
class Finding:
    """One rule the webhook would refuse: ``path`` is relative to the JobSet object.

    ``message`` says what is wrong without naming the component (callers say which JobSet it
    is); a WARNING names the component itself.
    """

    rule: str
    path: str
    message: str
    depends: str = TEMPLATE
    severity: Severity = Severity.ERROR
    hint: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        """Identity across two variants of the same JobSet (same rule, same field)."""
        return self.rule, self.path


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any, default: int | None) -> int | None:
    """An integer field (None, or ``default`` when absent; a wrong type is the schema's finding)."""
    if value is None:
        return default
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def job_spec(rjob: Mapping[str, Any]) -> dict[str, Any]:
    """``replicatedJobs[i].template.spec`` (the Job spec)."""
    return _dict(_dict(rjob.get("template")).get("spec"))


def pod_spec(rjob: Mapping[str, Any]) -> dict[str, Any]:
    """``replicatedJobs[i].template.spec.template.spec`` (the pod spec)."""
    return _dict(_dict(job_spec(rjob).get("template")).get("spec"))


def _joined(problems: list[str]) -> str:
    return "; ".join(problems)


class Validation:
    """One JobSet's validation: what the rules read and the findings they add (in order)."""

    def __init__(self, spec: Mapping[str, Any], name: str | None, gates: Collection[str]) -> None:
        self.spec, self.name, self.gates = spec, name, frozenset(gates)
        self.rjobs = [r for r in _list(spec.get("replicatedJobs")) if isinstance(r, dict)]
        # A missing or malformed name is the schema's finding; Go sees it as "".
        self.names = [r["name"] if isinstance(r.get("name"), str) else "" for r in self.rjobs]
        self.out: list[Finding] = []

    def add(self, rule: str, path: str, message: str, depends: str = TEMPLATE, **kw: Any) -> None:
        self.out.append(Finding(rule, path, message, depends, **kw))

    def rjob_path(self, index: int, *parts: str | int) -> str:
        return join_path("spec.replicatedJobs", index, *parts)


__all__ = ["ALPHA_GATES", "COUNTS", "NAME", "PODS", "TEMPLATE", "Finding", "Validation", "job_spec", "pod_spec"]
