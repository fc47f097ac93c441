"""Names, labels and field managers of the KFP launcher, and the TrainJob name budget.

The budget is recomputed from the TrainJob alone (the launcher has no JobPlan): JobSet names
pods ``<trainjob>-<rjob>-<replicaIdx>-<podIdx>-xxxxx`` and every one must fit in 63
characters; see ``trainspec.compiler.names`` for the compiler's exact version.
"""

from __future__ import annotations

import re
from typing import Any

#: Label on every TrainJob the launcher creates: the KFP run that owns it. A retried launcher
#: pod finds its TrainJob by name and re-attaches only when this label matches.
RUN_ID_LABEL = "trainspec.dev/kfp-run-id"
#: The runtimePatches entry the launcher owns (the compiler owns ``trainspec.dev/compiler``).
PATCH_MANAGER = "trainspec.dev/kfp"
#: The compiler's runtimePatches entry, where the checkpoint volume lives.
COMPILER_PATCH_MANAGER = "trainspec.dev/compiler"
#: The compiler's checkpoint volume name (``trainspec.compiler.lower.checkpoint.VOLUME``).
CHECKPOINT_VOLUME = "checkpoints"
#: Server-side apply field managers: the TrainJob body, and the owner reference added on re-attach
#: (a separate manager, so applying it never drops fields the first apply set).
FIELD_MANAGER = "trainspec"
OWNER_FIELD_MANAGER = "trainspec-kfp-owner"

TRAINER_GROUP = "trainer.kubeflow.org"
TRAINER_VERSION = "v1alpha1"
TRAINER_API_VERSION = f"{TRAINER_GROUP}/{TRAINER_VERSION}"
TRAINER_RJOB = "node"
TRAINER_CONTAINER = "node"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"

#: JobSet pod labels that select the trainer's node-0 pod.
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
RJOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"

LIMIT = 63
RANDOM_SUFFIX = "-xxxxx"
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
        suffixes.append(pod_suffix("dataset-initializer", 1))
    if initializer.get("model") is not None:
        suffixes.append(pod_suffix("model-initializer", 1))
    budget = min(LIMIT - len(s) for s in suffixes)
    if initializer:
        budget = min(budget, LIMIT - len("initializer-"))
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
