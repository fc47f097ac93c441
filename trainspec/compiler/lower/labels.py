"""Label and annotation keys trainspec writes, and the ones it reads from upstream projects.

The short names lowering code uses (``L.QUEUE_NAME``); every value is defined once, in
:mod:`trainspec.k8s.wellknown`. Also the labels every trainer pod carries (:func:`pod_labels`),
the same for every engine, so GPU metrics and the job's own metrics join to the job (each
dialect's ``rank_zero_selector`` picks its rank-0 pod by them and the engine's own labels).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainspec.k8s.wellknown import (
    ANCESTOR_DATASET,
    ANCESTOR_LABEL,
    ANCESTOR_TRAINER,
    COMPILER_PATCH_MANAGER,
    FRAMEWORK_LABEL,
    JOB_LABEL,
    JOB_NAMESPACE_LABEL,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    MAX_EXEC_TIME_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
    RUN_LABEL,
    RUNTIME_LABEL,
    TEAM_LABEL,
    TOPOLOGY_PREFERRED,
    TOPOLOGY_REQUIRED,
    TRAINER_GROUP,
    VOLCANO_QUEUE_LABEL,
)

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan

MANAGED_BY = MANAGED_BY_LABEL
MANAGER = MANAGED_BY_VALUE
#: The runtimePatches entry trainspec owns on every TrainJob (Kueue owns its own entry).
PATCH_MANAGER = COMPILER_PATCH_MANAGER

FRAMEWORK = FRAMEWORK_LABEL
ANCESTOR = ANCESTOR_LABEL

QUEUE_NAME = QUEUE_NAME_LABEL
PRIORITY_CLASS = PRIORITY_CLASS_LABEL
MAX_EXEC_TIME = MAX_EXEC_TIME_LABEL

VOLCANO_QUEUE = VOLCANO_QUEUE_LABEL

API_GROUP = TRAINER_GROUP

#: The pod labels that join metrics to a job, in the order docs/observability.md lists them.
OBSERVABILITY_LABELS = (JOB_LABEL, JOB_NAMESPACE_LABEL, TEAM_LABEL, RUNTIME_LABEL)


def pod_labels(plan: JobPlan) -> dict[str, str]:
    """The labels trainspec puts on every trainer pod of ``plan``'s job, whatever the engine.

    They are written over the job's own ``podLabels`` (a job cannot pass for another job on a
    dashboard); a job that sets one gets the TS436 warning (:mod:`trainspec.compiler.observability.observability_rules`).
    """
    from trainspec.compiler.observability.settings import settings

    resolved = plan.resolved
    # Every value is a valid label value: job and Runtime names are RFC 1035 labels, a namespace
    # an RFC 1123 label, the team a LabelValue, and a runtime only resolves when it is a Runtime
    # among the inputs or a catalog entry (short names such as torchtune-llama3.2-1b).
    from trainspec.compiler.runs import PLACEHOLDER

    return {
        JOB_LABEL: resolved.name,
        JOB_NAMESPACE_LABEL: resolved.namespace,
        TEAM_LABEL: settings(plan).team,
        RUNTIME_LABEL: resolved.runtime.name,
        RUN_LABEL: PLACEHOLDER,  # the run id (compiler.runs puts it in place)
    }


__all__ = [
    "ANCESTOR",
    "ANCESTOR_DATASET",
    "ANCESTOR_TRAINER",
    "API_GROUP",
    "FRAMEWORK",
    "JOB_LABEL",
    "MANAGED_BY",
    "MANAGER",
    "MAX_EXEC_TIME",
    "OBSERVABILITY_LABELS",
    "PATCH_MANAGER",
    "PRIORITY_CLASS",
    "QUEUE_NAME",
    "TOPOLOGY_PREFERRED",
    "TOPOLOGY_REQUIRED",
    "VOLCANO_QUEUE",
    "pod_labels",
]
