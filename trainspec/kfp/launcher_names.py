"""Names, labels and field managers of the KFP launcher, and the TrainJob name budget.

The budget is recomputed from the TrainJob alone (the launcher has no JobPlan): JobSet names
pods ``<trainjob>-<rjob>-<replicaIdx>-<podIdx>-xxxxx`` and every one must fit in 63
characters; see ``trainspec.compiler.lower.trainer.name_budget`` for the compiler's exact version.
"""

from __future__ import annotations

import re
from typing import Any

from trainspec.k8s.wellknown import (
    ANCESTOR_LABEL,
    CHECKPOINT_VOLUME,
    COMPILER_PATCH_MANAGER,
    COMPLETION_INDEX_LABEL,
    DATASET_INITIALIZER,
    FIELD_MANAGER,
    JOB_LABEL,
    JOBSET_NAME_LABEL,
    KFP_PATCH_MANAGER,
    KFP_RUN_ID_LABEL,
    MODEL_INITIALIZER,
    NAME_MAX,
    NODE,
    OWNER_FIELD_MANAGER,
    POD_RANDOM_SUFFIX,
    REPLICATED_JOB_LABEL,
    SHARD_VOLUME,
    TRAINER_API_VERSION,
    TRAINER_GROUP,
    TRAINER_VERSION,
)

# The launcher modules read the wellknown names through this module (``N.CHECKPOINT_VOLUME``), so they
# are exported explicitly, with this module's own names.
__all__ = [
    "ANCESTOR_LABEL",
    "CHECKPOINT_VOLUME",
    "COMPILER_PATCH_MANAGER",
    "COMPLETION_INDEX_LABEL",
    "DATASET_INITIALIZER",
    "FIELD_MANAGER",
    "JOBSET_NAME_LABEL",
    "KFP_PATCH_MANAGER",
    "KFP_RUN_ID_LABEL",
    "MODEL_INITIALIZER",
    "NAME_MAX",
    "NODE",
    "OWNER_FIELD_MANAGER",
    "POD_RANDOM_SUFFIX",
    "REPLICATED_JOB_LABEL",
    "JOB_LABEL",
    "SHARD_VOLUME",
    "TRAINER_API_VERSION",
    "TRAINER_GROUP",
    "TRAINER_VERSION",
    "RUN_ID_LABEL",
    "PATCH_MANAGER",
    "TRAINER_RJOB",
    "TRAINER_CONTAINER",
    "RJOB_LABEL",
    "LIMIT",
    "RANDOM_SUFFIX",
    "RUN_ID_CHARS",
    "pod_suffix",
    "name_budget",
    "run_suffix",
    "trainjob_name",
    "label_value",
]

#: Label on every TrainJob the launcher creates: the KFP run that owns it. A retried launcher
#: pod finds its TrainJob by name and re-attaches only when this label matches.
RUN_ID_LABEL = KFP_RUN_ID_LABEL
#: The runtimePatches entry the launcher owns (the compiler owns COMPILER_PATCH_MANAGER, where
#: the checkpoint volume CHECKPOINT_VOLUME lives). Field managers: FIELD_MANAGER for the
#: TrainJob body, OWNER_FIELD_MANAGER for the owner reference added on re-attach.
PATCH_MANAGER = KFP_PATCH_MANAGER

TRAINER_RJOB = NODE
TRAINER_CONTAINER = NODE

#: JobSet pod labels that select the trainer's node-0 pod.
RJOB_LABEL = REPLICATED_JOB_LABEL

LIMIT = NAME_MAX
RANDOM_SUFFIX = POD_RANDOM_SUFFIX
#: How many characters of the run id go into the name: enough to tell runs apart, short enough
#: to leave room for the base name inside a 33-character budget.
RUN_ID_CHARS = 8


def pod_suffix(rjob: str, pods: int) -> str:
    """The longest suffix JobSet appends to the TrainJob name for a pod of ``rjob`` (one replica)."""
    return f"-{rjob}-0-{max(pods - 1, 0)}{RANDOM_SUFFIX}"


def name_budget(trainjob: dict[str, Any]) -> int:
    """The longest TrainJob name whose generated pod and claim names all fit in 63 characters.

    Conservative, because only the TrainJob is known here: the trainer rjob ``node`` with
    ``numNodes`` pods, plus the initializer rjobs when the TrainJob feeds them (the dataset
    initializer leaves 33 characters) and JobSet's ``initializer-<name>`` shared volume.
    """
    spec = trainjob.get("spec") or {}
    nodes = int((spec.get("trainer") or {}).get("numNodes") or 1)
    suffixes = [pod_suffix(TRAINER_RJOB, nodes)]
    initializer = spec.get("initializer") or {}
    if initializer.get("dataset") is not None:
        suffixes.append(pod_suffix(DATASET_INITIALIZER, 1))
    if initializer.get("model") is not None:
        suffixes.append(pod_suffix(MODEL_INITIALIZER, 1))
    budget = min(LIMIT - len(s) for s in suffixes)
    if initializer:  # JobSet names the shared volume's claim <volume>-<jobset>
        budget = min(budget, LIMIT - len(f"{SHARD_VOLUME}-"))
    return budget


def run_suffix(run_id: str) -> str:
    """The run-id part of the name: its first characters, lower-case alphanumerics only."""
    cleaned = re.sub(r"[^a-z0-9]", "", run_id.lower())
    return cleaned[:RUN_ID_CHARS]


def trainjob_name(base: str, run_id: str, trainjob: dict[str, Any]) -> str:
    """``<base>-<run id prefix>``, the base cut so the whole name fits the budget.

    Deterministic for one run, so a retried launcher computes the same name and re-attaches.
    """
    suffix = run_suffix(run_id)
    if not suffix:
        raise ValueError(f"run id {run_id!r} has no letters or digits to name the TrainJob with")
    budget = name_budget(trainjob)
    room = budget - len(suffix) - 1
    if room < 1:
        raise ValueError(f"no room for a TrainJob name in {budget} characters")
    head = base[:room].rstrip("-") or "job"
    # An RFC 1035 label starts with a letter.
    if not head[0].isalpha():
        head = ("j" + head)[:room].rstrip("-")
    return f"{head}-{suffix}"


def label_value(value: str) -> str:
    """``value`` as a valid label value (<= 63 characters of ``[-A-Za-z0-9_.]``, alphanumeric ends)."""
    cleaned = re.sub(r"[^-A-Za-z0-9_.]", "", value)[:LIMIT]
    return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", cleaned)
