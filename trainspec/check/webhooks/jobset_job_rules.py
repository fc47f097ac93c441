"""The JobSet create rules on JobSet-wide fields and on each replicatedJob (names, counts, dependsOn).

Part of the rules :func:`.jobset_rules.jobset_findings` runs; the findings, constants and
field readers are in :mod:`.jobset_rule_base`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainspec.check.webhooks.jobset_names import domain_prefixed_path_problems
from trainspec.check.webhooks.jobset_rule_base import (
    COUNTS,
    DEFAULT_GROUP_NAME,
    GATE_IN_PLACE_RESTART,
    IN_PLACE_RESTART,
    INDEXED,
    NAME,
    Finding,
    Validation,
    _dict,
    _int,
    _joined,
    _list,
    job_spec,
)
from trainspec.dsl.diagnostics import Severity
from trainspec.k8s.name_rules import dns1035_problems, subdomain_problems, too_long
from trainspec.k8s.wellknown import INT32_MAX, JOBSET_MANAGED_BY_MAX, NAME_MAX, POD_RANDOM_SUFFIX

# The rules on JobSet-wide fields and on each replicatedJob (:func:`~trainspec.check.webhooks.jobset_rules.jobset_findings` runs them).

# -- JobSet-wide fields --------------------------------------------------------------------


def network(v: Validation) -> None:
    subdomain = _dict(v.spec.get("network")).get("subdomain")
    if not isinstance(subdomain, str) or not subdomain:
        return
    # The subdomain also names the headless Service, so it must be an RFC 1035 label too.
    problems = list(dict.fromkeys(subdomain_problems(subdomain) + dns1035_problems(subdomain)))
    if problems:
        v.add("network-subdomain", "spec.network.subdomain", f"network subdomain {subdomain!r} {_joined(problems)}")


def managed_by(v: Validation) -> None:
    manager = v.spec.get("managedBy")
    if not isinstance(manager, str):
        return
    problems = domain_prefixed_path_problems(manager)
    long = too_long(manager, JOBSET_MANAGED_BY_MAX)
    if long:
        problems.append(long)
    if problems:
        v.add("managed-by", "spec.managedBy", f"managedBy {manager!r} {_joined(problems)}")


# -- each replicatedJob --------------------------------------------------------------------


def replicated_job(v: Validation, index: int, rjob: dict[str, Any]) -> None:
    name = v.names[index]
    job = job_spec(rjob)
    replicas = _int(rjob.get("replicas"), 1)
    parallelism = _int(job.get("parallelism"), 1)
    if replicas is not None and parallelism is not None and replicas * parallelism > INT32_MAX:
        v.add(
            "pod-count",
            v.rjob_path(index, "replicas"),
            f"replicatedJob {name!r} has replicas x parallelism = {replicas} x {parallelism}, more than {INT32_MAX}",
            COUNTS,
        )
    group = rjob.get("groupName", DEFAULT_GROUP_NAME)
    if isinstance(group, str) and dns1035_problems(group):
        v.add(
            "group-name",
            v.rjob_path(index, "groupName"),
            f"groupName {group!r} of replicatedJob {name!r} {_joined(dns1035_problems(group))}",
        )
    generated_names(v, index, name, replicas, job)
    depends_on(v, index, rjob)
    in_place_restart(v, index, name, job)


def generated_names(v: Validation, index: int, rjob: str, replicas: int | None, job: Mapping[str, Any]) -> None:
    """Job names ``<jobset>-<rjob>-<jobIndex>`` and, for Indexed Jobs with completions, pod
    names ``<job>-<podIndex>-<5 random>``, at their largest indexes, must be RFC 1035 labels."""
    if v.name is None or replicas is None:
        return
    job_name = f"{v.name}-{rjob}-{replicas - 1}"
    length = too_long(job_name, NAME_MAX)  # said below, with the budget
    problems = [f"job name {job_name!r} {p}" for p in dns1035_problems(job_name) if p != length]
    longest = job_name
    completions = _int(job.get("completions"), None)
    if job.get("completionMode", INDEXED) == INDEXED and completions is not None:
        longest = f"{job_name}-{completions - 1}{POD_RANDOM_SUFFIX}"
    if len(longest) > NAME_MAX:
        what = "job name" if longest == job_name else "pod name"
        room = max(NAME_MAX - (len(longest) - len(v.name)), 0)
        problems.append(
            f"{what} {longest!r} is {len(longest)} characters, the maximum is {NAME_MAX}; the "
            f"JobSet name may have at most {room} characters here"
        )
    if problems:
        v.add(
            "generated-names",
            v.rjob_path(index, "name"),
            f"names generated for replicatedJob {rjob!r}: {_joined(problems)}",
            NAME,
            hint="shorten the JobSet name or the replicatedJob name",
        )


def depends_on(v: Validation, index: int, rjob: Mapping[str, Any]) -> None:
    depends = rjob.get("dependsOn")
    if index == 0 and depends is not None:
        v.add(
            "depends-on-first",
            v.rjob_path(0, "dependsOn"),
            f"dependsOn is not allowed on the first replicatedJob ({v.names[0]!r})",
        )
        return
    for k, dep in enumerate(_list(depends)):
        target = _dict(dep).get("name")
        path = v.rjob_path(index, "dependsOn", k, "name")
        if target == v.names[index]:
            # The webhook accepts it, but the controller waits for the replicatedJob itself.
            v.out.append(
                Finding(
                    "depends-on-v",
                    path,
                    f"replicatedJob {target!r} depends on itself: the JobSet webhook accepts it, but the JobSet "
                    "controller never creates its Jobs",
                    severity=Severity.WARNING,
                )
            )
        elif target in v.names[:index]:
            continue
        elif target in v.names:
            v.add(
                "depends-on",
                path,
                f"dependsOn must reference an earlier replicatedJob: {target!r} is not before {v.names[index]!r}",
            )
        else:
            v.add(
                "depends-on",
                path,
                f"dependsOn references unknown replicatedJob {target!r}",
                hint=f"replicatedJobs: {', '.join(v.names)}",
            )


def in_place_restart(v: Validation, index: int, name: str, job: Mapping[str, Any]) -> None:
    if _dict(v.spec.get("failurePolicy")).get("restartStrategy") != IN_PLACE_RESTART:
        return
    if GATE_IN_PLACE_RESTART not in v.gates:
        return  # refused once, in failure_policy
    if _int(job.get("backoffLimit"), None) != INT32_MAX:
        v.add(
            "in-place-backoff",
            v.rjob_path(index, "template", "spec", "backoffLimit"),
            f"replicatedJob {name!r}: backoffLimit must be {INT32_MAX} with in-place restart",
        )
    if job.get("podReplacementPolicy") != "Failed":
        v.add(
            "in-place-replacement",
            v.rjob_path(index, "template", "spec", "podReplacementPolicy"),
            f"replicatedJob {name!r}: podReplacementPolicy must be Failed with in-place restart",
        )
    completions, parallelism = _int(job.get("completions"), None), _int(job.get("parallelism"), None)
    if completions is None or parallelism is None or completions != parallelism:
        v.add(
            "in-place-completions",
            v.rjob_path(index, "template", "spec", "completions"),
            f"replicatedJob {name!r}: completions and parallelism must be set and equal with in-place restart",
            COUNTS,
        )
