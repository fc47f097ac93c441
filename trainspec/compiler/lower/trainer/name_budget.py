"""The Trainer dialect's name budget: how long a TrainJob name may be so every generated name fits.

JobSet names pods ``<trainjob>-<rjob>-<replicaIdx>-<podIdx>-<5 random>`` and requires each to
be at most 63 characters; JobSet's volumeClaimPolicies name the shard volume
``initializer-<trainjob>``, also at most 63.
"""

from __future__ import annotations

from trainspec.compiler.lower.dialects import Budget
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.runs import suffix_length
from trainspec.k8s.wellknown import NAME_MAX, POD_RANDOM_SUFFIX, SHARD_VOLUME

LIMIT = NAME_MAX
RANDOM_SUFFIX = len(POD_RANDOM_SUFFIX)  # "-abcde"
SHARD_CLAIM_PREFIX = f"{SHARD_VOLUME}-"  # JobSet names a volumeClaimPolicies claim <volume>-<jobset>


def pod_suffix(rjob: str, replicas: int, pods: int) -> str:
    """The longest suffix JobSet adds to the TrainJob name for pods of ``rjob``."""
    return f"-{rjob}-{replicas - 1}-{max(pods - 1, 0)}" + "x" * RANDOM_SUFFIX


def name_budget(plan: JobPlan) -> Budget:
    """How long the job's name may be: every name derived from its run object must fit.

    The run object is ``<name>-<run id>`` (compiler.runs) unless the job says ``runs: replace``.
    """
    run = suffix_length(plan)
    shown = "-<run>" if run else ""
    candidates = [
        Budget(
            LIMIT - run - len(pod_suffix(r.name, r.replicas, r.pods)),
            f"pod names like <name>{shown}{pod_suffix(r.name, r.replicas, r.pods)[:-RANDOM_SUFFIX]}-xxxxx",
        )
        for r in plan.rjobs
    ]
    candidates.append(Budget(LIMIT - run, f"the RFC 1035 limit for <name>{shown}" if run else "the RFC 1035 limit"))
    if plan.data is not None:
        candidates.append(
            Budget(LIMIT - run - len(SHARD_CLAIM_PREFIX), f"the shard volume {SHARD_CLAIM_PREFIX}<name>{shown}")
        )
    return min(candidates, key=lambda b: b.max_length)
