"""The JobSet create rules on the policies: success and failure policies, coordinator, volume claims.

Part of the rules :func:`.jobset_rules.jobset_findings` runs; the findings, constants and
field readers are in :mod:`.jobset_rule_base`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from trainspec.check._paths import join_path
from trainspec.check.webhooks.jobset_rule_base import (
    COUNTS,
    DEFAULT_RULE_NAME,
    GATE_IN_PLACE_RESTART,
    GATE_RESTART_JOB,
    IN_PLACE_RESTART,
    INDEXED,
    JOB_FAILURE_REASONS,
    NAME,
    PODS,
    RESTART_JOB_ACTIONS,
    RESTART_JOB_MAX_REPLICAS,
    Validation,
    _dict,
    _int,
    _joined,
    _list,
    job_spec,
    pod_spec,
)
from trainspec.k8s.name_rules import label_value_problems, subdomain_problems, too_long
from trainspec.k8s.wellknown import (
    JOBSET_CLAIM_NAME_MAX,
    JOBSET_COORDINATOR_LABEL,
    JOBSET_RULE_NAME_MAX,
    JOBSET_RULE_NAME_PATTERN,
)

_RULE_NAME = re.compile(JOBSET_RULE_NAME_PATTERN)


# The rules on the policies, the coordinator and volume claims (:func:`~trainspec.check.webhooks.jobset_rules.jobset_findings` runs them).

# -- policies ------------------------------------------------------------------------------


def unknown_targets(v: Validation, values: Any, path: str, what: str) -> None:
    for i, target in enumerate(_list(values)):
        if target not in v.names:
            v.add(
                "target",
                join_path(path, i),
                f"{what} names replicatedJob {target!r}, which does not exist",
                hint=f"replicatedJobs: {', '.join(v.names)}",
            )


def success_policy(v: Validation) -> None:
    unknown_targets(
        v,
        _dict(v.spec.get("successPolicy")).get("targetReplicatedJobs"),
        "spec.successPolicy.targetReplicatedJobs",
        "successPolicy",
    )


def failure_policy(v: Validation) -> None:
    policy = v.spec.get("failurePolicy")
    if not isinstance(policy, dict):
        return
    if policy.get("restartStrategy") == IN_PLACE_RESTART and GATE_IN_PLACE_RESTART not in v.gates:
        v.add(
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
        restart_job_action(v, k, rule, base)
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
                v.add("rule-name", join_path(base, "name"), f"failure policy rule name {name!r} {_joined(problems)}")
        unknown_targets(
            v, rule.get("targetReplicatedJobs"), join_path(base, "targetReplicatedJobs"), "failure policy rule"
        )
        for i, reason in enumerate(_list(rule.get("onJobFailureReasons"))):
            if reason not in JOB_FAILURE_REASONS:
                v.add(
                    "failure-reason",
                    join_path(base, "onJobFailureReasons", i),
                    f"{reason!r} is not a Job failure reason",
                    hint=f"one of {', '.join(JOB_FAILURE_REASONS)}",
                )
    for name, indexes in seen.items():
        for k in indexes[1:]:
            v.add(
                "rule-name-unique",
                join_path("spec.failurePolicy.rules", k, "name"),
                f"failure policy rules {indexes} all have the name {name!r}; rule names must be unique",
            )


def restart_job_action(v: Validation, k: int, rule: Mapping[str, Any], base: str) -> None:
    action = rule.get("action")
    if action not in RESTART_JOB_ACTIONS:
        return
    if GATE_RESTART_JOB not in v.gates:
        v.add(
            "gate-restart-job",
            join_path(base, "action"),
            f"failure policy action {action} needs the JobSet feature gate {GATE_RESTART_JOB}, which is off by default",
            hint="enable the gate on the JobSet controller, or use RestartJobSet",
        )
        return
    for index, rjob in enumerate(v.rjobs):
        replicas = _int(rjob.get("replicas"), 1)
        if replicas is not None and replicas > RESTART_JOB_MAX_REPLICAS:
            v.add(
                "restart-job-replicas",
                v.rjob_path(index, "replicas"),
                f"replicatedJob {v.names[index]!r} has {replicas} replicas; with the failure policy "
                f"action {action} (rule {k}) at most {RESTART_JOB_MAX_REPLICAS} are allowed",
            )


def coordinator(v: Validation) -> None:
    coordinator = v.spec.get("coordinator")
    if not isinstance(coordinator, dict):
        return
    coordinator_target(v, coordinator)
    if v.name is None:
        return
    job_index, pod_index = _int(coordinator.get("jobIndex"), 0), _int(coordinator.get("podIndex"), 0)
    if job_index is None or pod_index is None:
        return  # a wrong type is the schema's finding
    subdomain = _dict(v.spec.get("network")).get("subdomain") or v.name
    value = f"{v.name}-{coordinator.get('replicatedJob')}-{job_index}-{pod_index}.{subdomain}"
    problems = label_value_problems(value)
    if problems:
        v.add(
            "coordinator-label",
            "spec.coordinator",
            f"the coordinator label {JOBSET_COORDINATOR_LABEL} would be {value!r}, which {_joined(problems)}",
            NAME,
            hint="shorten the JobSet name, the replicatedJob name or the network subdomain",
        )


def coordinator_target(v: Validation, coordinator: Mapping[str, Any]) -> None:
    target = coordinator.get("replicatedJob")
    if target not in v.names:
        v.add(
            "coordinator",
            "spec.coordinator.replicatedJob",
            f"coordinator replicatedJob {target!r} does not exist",
            hint=f"replicatedJobs: {', '.join(v.names)}",
        )
        return
    rjob = v.rjobs[v.names.index(str(target))]
    replicas, job = _int(rjob.get("replicas"), 1), job_spec(rjob)
    job_index = _int(coordinator.get("jobIndex"), 0)
    if replicas is not None and job_index is not None and not 0 <= job_index < replicas:
        v.add(
            "coordinator-job-index",
            "spec.coordinator.jobIndex",
            f"coordinator jobIndex {job_index} is out of range for replicatedJob {target!r} ({replicas} replicas)",
        )
        return
    completions = _int(job.get("completions"), None)
    if job.get("completionMode", INDEXED) != INDEXED or completions is None:
        v.add(
            "coordinator-indexed",
            "spec.coordinator.replicatedJob",
            f"the coordinator's replicatedJob {target!r} must be an Indexed Job with completions set",
            COUNTS,
        )
        return
    pod_index = _int(coordinator.get("podIndex"), 0)
    if pod_index is not None and not 0 <= pod_index < completions:
        v.add(
            "coordinator-pod-index",
            "spec.coordinator.podIndex",
            f"coordinator podIndex {pod_index} is out of range for replicatedJob {target!r} "
            f"({completions} completions)",
            COUNTS,
        )


def claim_policies(v: Validation) -> None:
    seen: set[str] = set()
    for p, policy in enumerate(_list(v.spec.get("volumeClaimPolicies"))):
        for t, template in enumerate(_list(_dict(policy).get("templates"))):
            path = join_path("spec.volumeClaimPolicies", p, "templates", t, "metadata", "name")
            claim = _dict(_dict(template).get("metadata")).get("name", "")
            if not isinstance(claim, str):
                continue
            if claim in seen:
                v.add("claim-unique", path, f"volumeClaimPolicies template name {claim!r} is used twice")
            seen.add(claim)
            if subdomain_problems(claim):
                v.add(
                    "claim-name",
                    path,
                    f"volumeClaimPolicies template name {claim!r} {_joined(subdomain_problems(claim))}",
                )
            if v.name is not None:
                pvc = f"{claim}-{v.name}"
                long = too_long(pvc, JOBSET_CLAIM_NAME_MAX)
                if long:
                    v.add(
                        "claim-pvc-name",
                        path,
                        f"the PVC name {pvc!r} of volumeClaimPolicies template {claim!r} {long}",
                        NAME,
                        hint="shorten the JobSet name or the template name",
                    )
            claim_mounts(v, claim, path)


def claim_mounts(v: Validation, claim: str, path: str) -> None:
    mounted = False
    for index, rjob in enumerate(v.rjobs):
        pod = pod_spec(rjob)
        for k, volume in enumerate(_list(pod.get("volumes"))):
            if _dict(volume).get("name") == claim:
                v.add(
                    "claim-volume-clash",
                    v.rjob_path(index, "template", "spec", "template", "spec", "volumes", k, "name"),
                    f"pod volume {claim!r} of replicatedJob {v.names[index]!r} clashes with the "
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
        v.add(
            "claim-mounted",
            path,
            f"volumeClaimPolicies template {claim!r} is not mounted by any container or init container",
            PODS,
            hint=f"add a volumeMount named {claim!r}",
        )
