"""Runtimes compiled TrainJobs reference but trainspec does not emit (external runtimes).

A job may name a runtime the cluster already has: one Kubeflow Trainer installs
(``torch-distributed``, ...) or another team's (a ``Runtime`` with ``spec.external: true``).
trainspec resolves and checks the job against what it knows of that runtime, but the object
itself is the cluster's. The manifest checker (``trainspec check``) is told these runtimes
exist, by name, so it does not report them missing; where their definition is given
(``--cluster`` with the cluster's runtimes), the checker reads that definition instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainspec.compiler.plan import JobPlan
from trainspec.dsl.spec.models import Scope


def external_runtime_names(plans: Iterable[JobPlan]) -> list[str]:
    """Known-runtime names for the webhook checker: ``name`` for a ClusterTrainingRuntime,
    ``namespace/name`` for a TrainingRuntime; sorted, one each."""
    names: set[str] = set()
    for plan in plans:
        entry = plan.resolved.runtime
        if not entry.external:
            continue
        runtime = entry.spec
        if runtime.spec.scope is Scope.NAMESPACE:
            names.add(f"{runtime.metadata.namespace}/{plan.runtime_name}")
        else:
            names.add(plan.runtime_name)
    return sorted(names)


__all__ = ["external_runtime_names"]
