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

The rules are split by what they read: JobSet-wide fields and each replicatedJob in
:mod:`.jobset_job_rules`, the policies, coordinator and volume claims in
:mod:`.jobset_policy_rules`; :class:`Finding`, the constants and the shared field readers are
in :mod:`.jobset_rule_base`, with :class:`~.jobset_rule_base.Validation`, the one JobSet under
validation that every rule reads and adds its findings to. This module runs them in the webhook's
order.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from trainspec.check.webhooks import jobset_job_rules as jobs, jobset_policy_rules as policies
from trainspec.check.webhooks.jobset_rule_base import Finding, Validation


def jobset_findings(spec: Mapping[str, Any], name: str | None, *, gates: Collection[str] = ()) -> list[Finding]:
    """Every create rule of the JobSet webhook that ``spec`` breaks.

    ``name`` is the name the JobSet is validated under (see
    :func:`.jobset_names.name_for_validation`); None skips the rules about generated names.
    ``gates`` are the JobSet feature gates the cluster turned on (``ALPHA_GATES``).
    """
    v = Validation(spec, name, gates)
    jobs.network(v)
    jobs.managed_by(v)
    for index, rjob in enumerate(v.rjobs):
        jobs.replicated_job(v, index, rjob)
    policies.success_policy(v)
    policies.failure_policy(v)
    policies.coordinator(v)
    policies.claim_policies(v)
    return v.out


__all__ = ["jobset_findings"]
