"""Names, labels and field managers of the KFP launcher, and the job object's name budget.

The budget is recomputed from the job object alone (the launcher has no JobPlan) by the job's
dialect (:meth:`~trainspec.compiler.lower.dialects.Dialect.launch_facts`): for a TrainJob, JobSet
names pods ``<trainjob>-<rjob>-<replicaIdx>-<podIdx>-xxxxx`` and every one must fit in 63
characters; see ``trainspec.compiler.lower.trainer.name_budget`` for the compiler's exact version.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from trainspec.compiler.lower.dialects import Dialect, LaunchFacts

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
    "dialect_of",
    "facts_of",
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


def dialect_of(job: Mapping[str, Any]) -> Dialect:
    """The dialect of the engine whose job object ``job`` is (by its kind; a kind-less dict is a
    TrainJob); ValueError for an object no engine emits."""
    from trainspec.compiler.lower.dialects import dialect_for_kind

    kind = str(job.get("kind") or "TrainJob")
    found = dialect_for_kind(kind)
    if found is None or not found.kfp_step:
        raise ValueError(f"the launcher runs the job objects trainspec compiles, not {job.get('apiVersion')}/{kind}")
    return found


def facts_of(job: Mapping[str, Any]) -> LaunchFacts:
    """What the job's dialect says of ``job`` now: its state, log pod and name limit."""
    return dialect_of(job).launch_facts(job)


def name_budget(trainjob: Mapping[str, Any]) -> int:
    """The longest name the job object may have so every name its controller derives fits.

    For a TrainJob, conservative because only the TrainJob is known here: the trainer rjob
    ``node`` with ``numNodes`` pods, plus the initializer rjobs when the TrainJob feeds them (the
    dataset initializer leaves 33 characters) and JobSet's ``initializer-<name>`` shared volume.
    """
    return facts_of(trainjob).name_max


def run_suffix(run_id: str) -> str:
    """The run-id part of the name: its first characters, lower-case alphanumerics only."""
    cleaned = re.sub(r"[^a-z0-9]", "", run_id.lower())
    return cleaned[:RUN_ID_CHARS]


def trainjob_name(base: str, run_id: str, trainjob: Mapping[str, Any]) -> str:
    """``<base>-<run id prefix>``, the base cut so the whole name fits the budget.

    Deterministic for one run, so a retried launcher computes the same name and re-attaches.
    """
    suffix = run_suffix(run_id)
    if not suffix:
        raise ValueError(
            f"run id {run_id!r} has no letters or digits to name the {trainjob.get('kind') or 'TrainJob'} with"
        )
    budget = name_budget(trainjob)
    room = budget - len(suffix) - 1
    if room < 1:
        raise ValueError(f"no room for a {trainjob.get('kind') or 'TrainJob'} name in {budget} characters")
    head = base[:room].rstrip("-") or "job"
    # An RFC 1035 label starts with a letter.
    if not head[0].isalpha():
        head = ("j" + head)[:room].rstrip("-")
    return f"{head}-{suffix}"


def label_value(value: str) -> str:
    """``value`` as a valid label value (<= 63 characters of ``[-A-Za-z0-9_.]``, alphanumeric ends)."""
    cleaned = re.sub(r"[^-A-Za-z0-9_.]", "", value)[:LIMIT]
    return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", cleaned)
