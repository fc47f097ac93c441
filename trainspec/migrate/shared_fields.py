"""What every job kind shares: metadata and Kueue's labels, the run policy, the gang policy."""

from __future__ import annotations

from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.framework.types import Duration
from trainspec.k8s.wellknown import (
    COSCHEDULING_SCHEDULER,
    MAX_EXEC_TIME_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
    VOLCANO_SCHEDULER,
)
from trainspec.migrate.draft import Draft
from trainspec.migrate.pod_template import MigrationError
from trainspec.migrate.source import Path, Source

#: Annotations kubectl and controllers keep on live objects: state, not something to create.
_TOOL_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def job_name(src: Source) -> str:
    """``metadata.name``, else ``generateName`` without its trailing dash (a spec has a fixed name)."""
    name = src.take(("metadata", "name"))
    if isinstance(name, str) and name:
        return name
    prefix = src.get(("metadata", "generateName"))
    if isinstance(prefix, str) and prefix.strip("-"):
        fixed = prefix.rstrip("-")
        src.warn(
            ("metadata", "generateName"),
            f"a spec has a fixed name: the job is named {fixed!r} (the API "
            "server would have added a random suffix to every submission)",
        )
        return fixed
    raise MigrationError(src.error(("metadata",), "the manifest has no metadata.name (nor generateName)"))


def read_metadata(src: Source, draft: Draft) -> None:
    """Kueue's labels into queue, priority and maxRunTime; other labels and annotations onto the job."""
    for key, value in src.mapping(("metadata", "labels")).items():
        path = ("metadata", "labels", key)
        if key == QUEUE_NAME_LABEL:
            draft.set_job(("queue",), str(value), path)
        elif key == PRIORITY_CLASS_LABEL:
            draft.set_job(("priority",), str(value), path)
        elif key == MAX_EXEC_TIME_LABEL:
            continue  # read with activeDeadlineSeconds (read_deadline)
        else:
            draft.labels[str(key)] = "" if value is None else str(value)
        src.use(path)
    src.use(("metadata", "labels"), ("metadata", "namespace"))
    for key, value in src.mapping(("metadata", "annotations")).items():
        path = ("metadata", "annotations", key)
        if key in _TOOL_ANNOTATIONS:
            src.use(path)
            continue
        draft.annotations[str(key)] = "" if value is None else str(value)
        src.use(path)
    src.use(("metadata", "annotations"))


def read_deadline(src: Source, draft: Draft, path: Path) -> None:
    """``activeDeadlineSeconds`` (and Kueue's max-exec-time label) -> maxRunTime; trainspec sets both."""
    deadline = src.take(path)
    label_path = ("metadata", "labels", MAX_EXEC_TIME_LABEL)
    label = src.take(label_path)
    seconds = deadline if isinstance(deadline, int) and not isinstance(deadline, bool) and deadline > 0 else None
    if deadline is not None and seconds is None:
        raise MigrationError(src.error(path, "activeDeadlineSeconds must be a positive whole number of seconds"))
    if label is not None:
        text = str(label)
        if not text.isdigit() or int(text) <= 0:
            src.drop(label_path, "Kueue ignores a max-exec-time that is not a positive number of seconds")
        elif seconds is None:
            seconds = int(text)
            src.warn(label_path, f"maxRunTime {Duration(seconds)} also sets activeDeadlineSeconds when compiled")
        elif int(text) != seconds:
            src.warn(
                label_path,
                f"differs from activeDeadlineSeconds ({seconds}); a spec has one deadline, "
                f"maxRunTime, and sets both from it",
                code=codes.FIELD_NOT_CARRIED,
            )
    if seconds is not None:
        draft.set_job(("maxRunTime",), str(Duration(seconds)), path if deadline is not None else label_path)


def read_suspend(src: Source, draft: Draft, path: Path) -> None:
    """A queued job is created suspended (Kueue unsuspends it); a spec cannot suspend any other."""
    suspend = src.take(path)
    if suspend is True and "queue" not in draft.job:
        src.warn(
            path,
            "a spec creates only queued jobs suspended (Kueue unsuspends them): without a "
            "kueue.x-k8s.io/queue-name label this job starts at once",
            code=codes.FIELD_NOT_CARRIED,
        )


def read_restarts(src: Source, draft: Draft, path: Path) -> None:
    limit = src.take(path)
    if limit is None:
        return
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise MigrationError(src.error(path, "backoffLimit must be a whole number >= 0"))
    draft.set_runtime(("restarts", "max"), limit, path)


def read_clean_pod_policy(src: Source, path: Path, emitted: str) -> None:
    policy = src.take(path)
    if policy is not None and policy != emitted:
        src.warn(
            path,
            f"trainspec emits cleanPodPolicy {emitted} (running pods are deleted when the job finishes, "
            f"so leftover workers free their GPUs); {policy} is not carried",
            code=codes.FIELD_NOT_CARRIED,
        )


def read_gang(src: Source, draft: Draft, policy: Path | None, pods: int) -> None:
    """The gang: a Volcano or coscheduling PodGroup (schedulerName, schedulingPolicy), Kueue, or none."""
    scheduling = draft.runtime.get("scheduling", {})
    scheduler = scheduling.get("schedulerName")
    sched_policy = src.mapping(policy) if policy is not None else {}
    gang = None
    if scheduler == VOLCANO_SCHEDULER or (sched_policy and "queue" in sched_policy):
        gang = "volcano"
    elif scheduler == COSCHEDULING_SCHEDULER or sched_policy:
        gang = "coscheduling"
    if gang is not None:
        draft.set_runtime(("gang",), gang, policy if policy is not None and sched_policy else ())
        if scheduler == (VOLCANO_SCHEDULER if gang == "volcano" else COSCHEDULING_SCHEDULER):
            del scheduling["schedulerName"]  # the gang's own scheduler: compiling sets it again
    elif "queue" not in draft.job:
        # No queue and no gang scheduler: the pods were never gang-scheduled, and Kueue (the
        # default gang) would warn that they are not.
        draft.set_runtime(("gang",), "none", ())
    if policy is None or not sched_policy:
        return
    src.use(policy)
    minimum = sched_policy.get("minAvailable")
    if minimum is not None and minimum != pods:
        src.warn(
            (*policy, "minAvailable"),
            f"trainspec gangs all {pods} pods of the job (minAvailable {pods}); {minimum} is not carried",
            code=codes.FIELD_NOT_CARRIED,
        )
    queue = sched_policy.get("queue")
    if isinstance(queue, str) and queue != "default":
        draft.set_runtime(("scheduling", "volcanoQueue"), queue, (*policy, "queue"))
    timeout = sched_policy.get("scheduleTimeoutSeconds")
    if isinstance(timeout, int) and timeout > 0:
        if gang == "coscheduling":
            draft.set_runtime(
                ("scheduling", "gangTimeout"), str(Duration(timeout)), (*policy, "scheduleTimeoutSeconds")
            )
        else:
            src.drop((*policy, "scheduleTimeoutSeconds"), "a gang timeout applies to coscheduling only")
    for key in sorted(set(sched_policy) - {"minAvailable", "queue", "scheduleTimeoutSeconds"}):
        src.drop((*policy, key), "the spec's gang policy has no such setting")


def int_at(src: Source, path: Path, *, minimum: int = 0, default: int | None = None) -> int:
    """A whole number at ``path`` (taken), or TS543."""
    value: Any = src.take(path, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise MigrationError(src.error(path, f"{path[-1]} must be a whole number >= {minimum}"))
    return value


__all__ = [
    "int_at",
    "job_name",
    "read_clean_pod_policy",
    "read_deadline",
    "read_gang",
    "read_metadata",
    "read_restarts",
    "read_suspend",
]
