"""The JobSet admission webhook's create rules, re-implemented (kubernetes-sigs/jobset
``pkg/webhooks/jobset_webhook.go``, ``ValidateCreate`` after the mutating ``Default``).

:func:`jobset_findings` takes a JobSet spec and the name the webhook validates it under and
returns every :class:`Finding`, with paths relative to the JobSet object. The wrappers in
:mod:`.jobset_trainer` turn findings into diagnostics for plain JobSets, for the JobSet
templates of Trainer runtimes and for the JobSet Trainer builds for a TrainJob.

The mutating webhook runs first, so its defaults apply: completionMode ``Indexed``, failure
policy rules without a name become ``failurePolicyRule<index>``; the CRD defaults too
(``replicas: 1``, ``groupName: default``). Rules the webhook decides from the live cluster
(a volumeClaimPolicies PVC that already exists must match) are not decidable here.

Feature-gated rules follow the JobSet defaults (``InPlaceRestart``, ``RestartJob`` and
``ElasticJobSet`` are alpha, off): pass ``gates`` to say which the cluster turned on.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from trainspec.check._paths import join_path
from trainspec.check.webhooks.jobset_names import domain_prefixed_path_problems
from trainspec.dsl.diagnostics import Severity
from trainspec.k8s.name_rules import dns1035_problems, label_value_problems, subdomain_problems, too_long
from trainspec.k8s.wellknown import (
    INT32_MAX,
    JOBSET_CLAIM_NAME_MAX,
    JOBSET_COORDINATOR_LABEL,
    JOBSET_MANAGED_BY_MAX,
    JOBSET_RULE_NAME_MAX,
    JOBSET_RULE_NAME_PATTERN,
    NAME_MAX,
    POD_RANDOM_SUFFIX,
)

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

_RULE_NAME = re.compile(JOBSET_RULE_NAME_PATTERN)


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


class _Rules:
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

    def run(self) -> list[Finding]:
        self.network()
        self.managed_by()
        for index, rjob in enumerate(self.rjobs):
            self.replicated_job(index, rjob)
        self.success_policy()
        self.failure_policy()
        self.coordinator()
        self.claim_policies()
        return self.out

    # -- JobSet-wide fields --------------------------------------------------------------------

    def network(self) -> None:
        subdomain = _dict(self.spec.get("network")).get("subdomain")
        if not isinstance(subdomain, str) or not subdomain:
            return
        # The subdomain also names the headless Service, so it must be an RFC 1035 label too.
        problems = list(dict.fromkeys(subdomain_problems(subdomain) + dns1035_problems(subdomain)))
        if problems:
            self.add(
                "network-subdomain", "spec.network.subdomain", f"network subdomain {subdomain!r} {_joined(problems)}"
            )

    def managed_by(self) -> None:
        manager = self.spec.get("managedBy")
        if not isinstance(manager, str):
            return
        problems = domain_prefixed_path_problems(manager)
        long = too_long(manager, JOBSET_MANAGED_BY_MAX)
        if long:
            problems.append(long)
        if problems:
            self.add("managed-by", "spec.managedBy", f"managedBy {manager!r} {_joined(problems)}")

    # -- each replicatedJob --------------------------------------------------------------------

    def replicated_job(self, index: int, rjob: dict[str, Any]) -> None:
        name = self.names[index]
        job = job_spec(rjob)
        replicas = _int(rjob.get("replicas"), 1)
        parallelism = _int(job.get("parallelism"), 1)
        if replicas is not None and parallelism is not None and replicas * parallelism > INT32_MAX:
            self.add(
                "pod-count",
                self.rjob_path(index, "replicas"),
                f"replicatedJob {name!r} has replicas x parallelism = {replicas} x {parallelism}, more "
                f"than {INT32_MAX}",
                COUNTS,
            )
        group = rjob.get("groupName", DEFAULT_GROUP_NAME)
        if isinstance(group, str) and dns1035_problems(group):
            self.add(
                "group-name",
                self.rjob_path(index, "groupName"),
                f"groupName {group!r} of replicatedJob {name!r} {_joined(dns1035_problems(group))}",
            )
        self.generated_names(index, name, replicas, job)
        self.depends_on(index, rjob)
        self.in_place_restart(index, name, job)

    def generated_names(self, index: int, rjob: str, replicas: int | None, job: Mapping[str, Any]) -> None:
        """Job names ``<jobset>-<rjob>-<jobIndex>`` and, for Indexed Jobs with completions, pod
        names ``<job>-<podIndex>-<5 random>``, at their largest indexes, must be RFC 1035 labels."""
        if self.name is None or replicas is None:
            return
        job_name = f"{self.name}-{rjob}-{replicas - 1}"
        length = too_long(job_name, NAME_MAX)  # said below, with the budget
        problems = [f"job name {job_name!r} {p}" for p in dns1035_problems(job_name) if p != length]
        longest = job_name
        completions = _int(job.get("completions"), None)
        if job.get("completionMode", INDEXED) == INDEXED and completions is not None:
            longest = f"{job_name}-{completions - 1}{POD_RANDOM_SUFFIX}"
        if len(longest) > NAME_MAX:
            what = "job name" if longest == job_name else "pod name"
            room = max(NAME_MAX - (len(longest) - len(self.name)), 0)
            problems.append(
                f"{what} {longest!r} is {len(longest)} characters, the maximum is {NAME_MAX}; the "
                f"JobSet name may have at most {room} characters here"
            )
        if problems:
            self.add(
                "generated-names",
                self.rjob_path(index, "name"),
                f"names generated for replicatedJob {rjob!r}: {_joined(problems)}",
                NAME,
                hint="shorten the JobSet name or the replicatedJob name",
            )

    def depends_on(self, index: int, rjob: Mapping[str, Any]) -> None:
        depends = rjob.get("dependsOn")
        if index == 0 and depends is not None:
            self.add(
                "depends-on-first",
                self.rjob_path(0, "dependsOn"),
                f"dependsOn is not allowed on the first replicatedJob ({self.names[0]!r})",
            )
            return
        for k, dep in enumerate(_list(depends)):
            target = _dict(dep).get("name")
            path = self.rjob_path(index, "dependsOn", k, "name")
            if target == self.names[index]:
                # The webhook accepts it, but the controller waits for the replicatedJob itself.
                self.out.append(
                    Finding(
                        "depends-on-self",
                        path,
                        f"replicatedJob {target!r} depends on itself: the JobSet webhook accepts it, but the JobSet "
                        "controller never creates its Jobs",
                        severity=Severity.WARNING,
                    )
                )
            elif target in self.names[:index]:
                continue
            elif target in self.names:
                self.add(
                    "depends-on",
                    path,
                    f"dependsOn must reference an earlier replicatedJob: {target!r} is not "
                    f"before {self.names[index]!r}",
                )
            else:
                self.add(
                    "depends-on",
                    path,
                    f"dependsOn references unknown replicatedJob {target!r}",
                    hint=f"replicatedJobs: {', '.join(self.names)}",
                )

    def in_place_restart(self, index: int, name: str, job: Mapping[str, Any]) -> None:
        if _dict(self.spec.get("failurePolicy")).get("restartStrategy") != IN_PLACE_RESTART:
            return
        if GATE_IN_PLACE_RESTART not in self.gates:
            return  # refused once, in failure_policy
        if _int(job.get("backoffLimit"), None) != INT32_MAX:
            self.add(
                "in-place-backoff",
                self.rjob_path(index, "template", "spec", "backoffLimit"),
                f"replicatedJob {name!r}: backoffLimit must be {INT32_MAX} with in-place restart",
            )
        if job.get("podReplacementPolicy") != "Failed":
            self.add(
                "in-place-replacement",
                self.rjob_path(index, "template", "spec", "podReplacementPolicy"),
                f"replicatedJob {name!r}: podReplacementPolicy must be Failed with in-place restart",
            )
        completions, parallelism = _int(job.get("completions"), None), _int(job.get("parallelism"), None)
        if completions is None or parallelism is None or completions != parallelism:
            self.add(
                "in-place-completions",
                self.rjob_path(index, "template", "spec", "completions"),
                f"replicatedJob {name!r}: completions and parallelism must be set and equal with in-place restart",
                COUNTS,
            )

    # -- policies ------------------------------------------------------------------------------

    def unknown_targets(self, values: Any, path: str, what: str) -> None:
        for i, target in enumerate(_list(values)):
            if target not in self.names:
                self.add(
                    "target",
                    join_path(path, i),
                    f"{what} names replicatedJob {target!r}, which does not exist",
                    hint=f"replicatedJobs: {', '.join(self.names)}",
                )

    def success_policy(self) -> None:
        self.unknown_targets(
            _dict(self.spec.get("successPolicy")).get("targetReplicatedJobs"),
            "spec.successPolicy.targetReplicatedJobs",
            "successPolicy",
        )

    def failure_policy(self) -> None:
        policy = self.spec.get("failurePolicy")
        if not isinstance(policy, dict):
            return
        if policy.get("restartStrategy") == IN_PLACE_RESTART and GATE_IN_PLACE_RESTART not in self.gates:
            self.add(
                "gate-in-place-restart",
                "spec.failurePolicy.restartStrategy",
                f"restartStrategy {IN_PLACE_RESTART} needs the JobSet feature gate {GATE_IN_PLACE_RESTART}, "
                "which is off by default",
                hint="enable the gate on the JobSet controller, or use Recreate",
            )
        rules = [r if isinstance(r, dict) else {} for r in _list(policy.get("rules"))]
        seen: dict[str, list[int]] = {}
        for k, rule in enumerate(rules):
            base = join_path("spec.failurePolicy.rules", k)
            self.restart_job_action(k, rule, base)
            name = rule.get("name")
            name = DEFAULT_RULE_NAME.format(k) if name in (None, "") else name  # the mutating webhook's default
            if isinstance(name, str):
                seen.setdefault(name, []).append(k)
                problems = [p for p in (too_long(name, JOBSET_RULE_NAME_MAX),) if p]
                if not _RULE_NAME.match(name):
                    problems.append(
                        "must start with a letter, hold only letters, digits, '_', ',' and ':', "
                        "and end with a letter, digit or '_'"
                    )
                if problems:
                    self.add(
                        "rule-name", join_path(base, "name"), f"failure policy rule name {name!r} {_joined(problems)}"
                    )
            self.unknown_targets(
                rule.get("targetReplicatedJobs"), join_path(base, "targetReplicatedJobs"), "failure policy rule"
            )
            for i, reason in enumerate(_list(rule.get("onJobFailureReasons"))):
                if reason not in JOB_FAILURE_REASONS:
                    self.add(
                        "failure-reason",
                        join_path(base, "onJobFailureReasons", i),
                        f"{reason!r} is not a Job failure reason",
                        hint=f"one of {', '.join(JOB_FAILURE_REASONS)}",
                    )
        for name, indexes in seen.items():
            for k in indexes[1:]:
                self.add(
                    "rule-name-unique",
                    join_path("spec.failurePolicy.rules", k, "name"),
                    f"failure policy rules {indexes} all have the name {name!r}; rule names must be unique",
                )

    def restart_job_action(self, k: int, rule: Mapping[str, Any], base: str) -> None:
        action = rule.get("action")
        if action not in RESTART_JOB_ACTIONS:
            return
        if GATE_RESTART_JOB not in self.gates:
            self.add(
                "gate-restart-job",
                join_path(base, "action"),
                f"failure policy action {action} needs the JobSet feature gate {GATE_RESTART_JOB}, which is "
                "off by default",
                hint="enable the gate on the JobSet controller, or use RestartJobSet",
            )
            return
        for index, rjob in enumerate(self.rjobs):
            replicas = _int(rjob.get("replicas"), 1)
            if replicas is not None and replicas > RESTART_JOB_MAX_REPLICAS:
                self.add(
                    "restart-job-replicas",
                    self.rjob_path(index, "replicas"),
                    f"replicatedJob {self.names[index]!r} has {replicas} replicas; with the failure policy "
                    f"action {action} (rule {k}) at most {RESTART_JOB_MAX_REPLICAS} are allowed",
                )

    def coordinator(self) -> None:
        coordinator = self.spec.get("coordinator")
        if not isinstance(coordinator, dict):
            return
        self.coordinator_target(coordinator)
        if self.name is None:
            return
        job_index, pod_index = _int(coordinator.get("jobIndex"), 0), _int(coordinator.get("podIndex"), 0)
        if job_index is None or pod_index is None:
            return  # a wrong type is the schema's finding
        subdomain = _dict(self.spec.get("network")).get("subdomain") or self.name
        value = f"{self.name}-{coordinator.get('replicatedJob')}-{job_index}-{pod_index}.{subdomain}"
        problems = label_value_problems(value)
        if problems:
            self.add(
                "coordinator-label",
                "spec.coordinator",
                f"the coordinator label {JOBSET_COORDINATOR_LABEL} would be {value!r}, which {_joined(problems)}",
                NAME,
                hint="shorten the JobSet name, the replicatedJob name or the network subdomain",
            )

    def coordinator_target(self, coordinator: Mapping[str, Any]) -> None:
        target = coordinator.get("replicatedJob")
        if target not in self.names:
            self.add(
                "coordinator",
                "spec.coordinator.replicatedJob",
                f"coordinator replicatedJob {target!r} does not exist",
                hint=f"replicatedJobs: {', '.join(self.names)}",
            )
            return
        rjob = self.rjobs[self.names.index(str(target))]
        replicas, job = _int(rjob.get("replicas"), 1), job_spec(rjob)
        job_index = _int(coordinator.get("jobIndex"), 0)
        if replicas is not None and job_index is not None and not 0 <= job_index < replicas:
            self.add(
                "coordinator-job-index",
                "spec.coordinator.jobIndex",
                f"coordinator jobIndex {job_index} is out of range for replicatedJob {target!r} ({replicas} replicas)",
            )
            return
        completions = _int(job.get("completions"), None)
        if job.get("completionMode", INDEXED) != INDEXED or completions is None:
            self.add(
                "coordinator-indexed",
                "spec.coordinator.replicatedJob",
                f"the coordinator's replicatedJob {target!r} must be an Indexed Job with completions set",
                COUNTS,
            )
            return
        pod_index = _int(coordinator.get("podIndex"), 0)
        if pod_index is not None and not 0 <= pod_index < completions:
            self.add(
                "coordinator-pod-index",
                "spec.coordinator.podIndex",
                f"coordinator podIndex {pod_index} is out of range for replicatedJob {target!r} "
                f"({completions} completions)",
                COUNTS,
            )

    def claim_policies(self) -> None:
        seen: set[str] = set()
        for p, policy in enumerate(_list(self.spec.get("volumeClaimPolicies"))):
            for t, template in enumerate(_list(_dict(policy).get("templates"))):
                path = join_path("spec.volumeClaimPolicies", p, "templates", t, "metadata", "name")
                claim = _dict(_dict(template).get("metadata")).get("name", "")
                if not isinstance(claim, str):
                    continue
                if claim in seen:
                    self.add("claim-unique", path, f"volumeClaimPolicies template name {claim!r} is used twice")
                seen.add(claim)
                if subdomain_problems(claim):
                    self.add(
                        "claim-name",
                        path,
                        f"volumeClaimPolicies template name {claim!r} {_joined(subdomain_problems(claim))}",
                    )
                if self.name is not None:
                    pvc = f"{claim}-{self.name}"
                    long = too_long(pvc, JOBSET_CLAIM_NAME_MAX)
                    if long:
                        self.add(
                            "claim-pvc-name",
                            path,
                            f"the PVC name {pvc!r} of volumeClaimPolicies template {claim!r} {long}",
                            NAME,
                            hint="shorten the JobSet name or the template name",
                        )
                self.claim_mounts(claim, path)

    def claim_mounts(self, claim: str, path: str) -> None:
        mounted = False
        for index, rjob in enumerate(self.rjobs):
            pod = pod_spec(rjob)
            for v, volume in enumerate(_list(pod.get("volumes"))):
                if _dict(volume).get("name") == claim:
                    self.add(
                        "claim-volume-clash",
                        self.rjob_path(index, "template", "spec", "template", "spec", "volumes", v, "name"),
                        f"pod volume {claim!r} of replicatedJob {self.names[index]!r} clashes with the "
                        "volumeClaimPolicies template of the same name",
                        PODS,
                    )
            mounted = mounted or any(
                _dict(m).get("name") == claim
                for field in ("initContainers", "containers")
                for c in _list(pod.get(field))
                for m in _list(_dict(c).get("volumeMounts"))
            )
        if not mounted:
            self.add(
                "claim-mounted",
                path,
                f"volumeClaimPolicies template {claim!r} is not mounted by any container or init container",
                PODS,
                hint=f"add a volumeMount named {claim!r}",
            )


def jobset_findings(spec: Mapping[str, Any], name: str | None, *, gates: Collection[str] = ()) -> list[Finding]:
    """Every create rule of the JobSet webhook that ``spec`` breaks.

    ``name`` is the name the JobSet is validated under (see
    :func:`.jobset_names.name_for_validation`); None skips the rules about generated names.
    ``gates`` are the JobSet feature gates the cluster turned on (``ALPHA_GATES``).
    """
    return _Rules(spec, name, gates).run()


__all__ = ["ALPHA_GATES", "COUNTS", "Finding", "NAME", "PODS", "TEMPLATE", "jobset_findings"]
