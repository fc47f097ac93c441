"""RayJob (``ray.io/v1``, KubeRay 1.7) running Ray Train -> specs.

* The one worker group is the node shape: ``replicas`` (or ``minReplicas``..``maxReplicas``, an
  elastic range) -> ``nodes``, its pod's image, resources, env and volumes as for any trainer pod.
  A RayJob without worker groups trains on its head: the head's pod becomes the one node.
* ``entrypoint`` -> the job's command (split as a shell would); ``runtimeEnvYAML``'s ``env_vars``
  -> env (container env on every pod; nothing else of a runtime env has a place in specs).
* ``activeDeadlineSeconds`` -> ``maxRunTime``, ``backoffLimit`` -> ``restarts.max``, Kueue's
  queue label with ``suspend`` -> ``queue``. The head's size, ports and start parameters are
  trainspec's own (fixed) when compiled.
"""

from __future__ import annotations

import shlex
from typing import Any

from trainspec.compiler.engines import Engine
from trainspec.dsl import codes
from trainspec.dsl.spec.models import Framework
from trainspec.k8s.wellknown import (
    RAY_DEFAULT_SUBMISSION_MODE,
    RAY_HEAD_CONTAINER,
    RAY_HEAD_PORTS,
    RAY_WORKER_CONTAINER,
)
from trainspec.migrate import shared_fields as common
from trainspec.migrate.draft import Draft
from trainspec.migrate.pod_template import MigrationError, compare, find_pod, read_pod
from trainspec.migrate.source import Path, Source

KIND = "RayJob"
_CLUSTER = ("spec", "rayClusterSpec")
_HEAD = (*_CLUSTER, "headGroupSpec")
#: The runtime-env keys a spec carries (as container env).
_ENV_VARS = "env_vars"


def read(src: Source) -> Draft:
    """The draft specs of one RayJob."""
    if src.has(("spec", "clusterSelector")):
        raise MigrationError(
            src.error(
                ("spec", "clusterSelector"),
                "this RayJob runs on an existing RayCluster (clusterSelector): there is no cluster spec to migrate",
                hint="migrate the RayCluster's job with its rayClusterSpec inline",
            )
        )
    if not src.has(_HEAD):
        raise MigrationError(src.error(("spec",), "the RayJob has no rayClusterSpec.headGroupSpec"))
    draft = Draft(src, common.job_name(src), src.get(("metadata", "namespace")), Framework.TORCH, Engine.RAY)
    draft.needs_engine = "its entrypoint is a Ray program, which needs the Ray cluster a RayJob creates"
    common.read_metadata(src, draft)
    groups = src.sequence((*_CLUSTER, "workerGroupSpecs"))
    head = find_pod(src, (*_HEAD, "template"), RAY_HEAD_CONTAINER)
    if groups:
        group = (*_CLUSTER, "workerGroupSpecs", 0)
        worker = find_pod(src, (*group, "template"), RAY_WORKER_CONTAINER)
        read_pod(src, draft, worker)
        _nodes(src, draft, group)
        _start_params(src, (*group, "rayStartParams"))
        src.use((*group, "groupName"))
        for index in range(1, len(groups)):
            src.drop((*_CLUSTER, "workerGroupSpecs", index), "a spec has one node shape (one worker group)")
        _head(src, head.template, worker.template)
    else:
        read_pod(src, draft, head)
        src.warn(
            _HEAD,
            "this RayJob trains on its head pod (no worker groups); its pod becomes the one worker "
            "node, and the compiled head is trainspec's small one",
        )
        draft.set_job(("nodes",), 1, _HEAD)
        src.use((*head.container, "ports"))
    _start_params(src, (*_HEAD, "rayStartParams"))
    _entrypoint(src, draft)
    _runtime_env(src, draft)
    common.read_restarts(src, draft, ("spec", "backoffLimit"))
    common.read_deadline(src, draft, ("spec", "activeDeadlineSeconds"))
    common.read_suspend(src, draft, ("spec", "suspend"))
    common.read_gang(src, draft, None, 0)
    _fixed(src)
    return draft


def _nodes(src: Source, draft: Draft, group: Path) -> None:
    replicas = src.get((*group, "replicas"))
    if replicas is not None:
        replicas = common.int_at(src, (*group, "replicas"), minimum=0)
    low = common.int_at(src, (*group, "minReplicas"), minimum=0, default=replicas if replicas is not None else 1)
    high = common.int_at(src, (*group, "maxReplicas"), minimum=1, default=max(low, replicas or 1))
    count = common.int_at(src, (*group, "replicas"), minimum=0, default=high)
    hosts = src.take((*group, "numOfHosts"))
    if hosts not in (None, 1):
        src.warn(
            (*group, "numOfHosts"),
            "multi-host worker groups (TPU slices) are not modelled",
            code=codes.FIELD_NOT_CARRIED,
        )
    if low == high or (low == 0 and count == high):
        if low != high:
            src.warn(
                (*group, "minReplicas"),
                f"the group scales from 0; the spec runs {count} nodes",
                code=codes.FIELD_NOT_CARRIED,
            )
        draft.set_job(("nodes",), count, (*group, "replicas"))
        return
    draft.set_job(("nodes",), {"min": max(low, 1), "max": high}, (*group, "minReplicas"))
    if count != high:
        src.warn(
            (*group, "replicas"),
            f"an elastic job starts with nodes.max ({high}) workers, which Kueue admits; {count} is not carried",
            code=codes.FIELD_NOT_CARRIED,
        )


def _start_params(src: Source, path: Path) -> None:
    params = src.mapping(path)
    src.use(path)
    for key in params:
        if key in ("num-gpus", "num-cpus"):
            continue  # trainspec sets them from the node's resources (and keeps Ray work off the head)
        src.drop(
            (*path, key),
            "trainspec sets rayStartParams itself (num-cpus: 0 on the head, num-gpus for GPUs KubeRay does not count)",
        )


def _head(src: Source, head: Path, worker: Path) -> None:
    """The head is trainspec's when compiled: its size and ports are fixed, the rest follows the workers."""
    container = (*head, "spec", "containers", 0)
    ports = src.sequence((*container, "ports"))
    given = {p.get("name"): p.get("containerPort") for p in ports if isinstance(p, dict)}
    src.use((*container, "ports"))
    if given and given != RAY_HEAD_PORTS:
        src.warn(
            (*container, "ports"),
            f"the compiled head exposes {', '.join(map(str, RAY_HEAD_PORTS.values()))} (GCS, dashboard, client) only",
            code=codes.FIELD_NOT_CARRIED,
        )
    if src.has((*container, "resources")):
        src.warn(
            (*container, "resources"),
            "the compiled head has trainspec's fixed size (2 CPUs, 8Gi, no GPU): "
            "it runs the driver and the GCS, never training workers",
            code=codes.FIELD_NOT_CARRIED,
        )
    skip = frozenset({("spec", "containers", 0, key) for key in ("ports", "resources", "name")})
    compare(src, head, worker, ("Ray worker", "Ray head"), skip=skip)


def _entrypoint(src: Source, draft: Draft) -> None:
    path = ("spec", "entrypoint")
    text = src.take(path)
    if text is None:
        return
    try:
        words = shlex.split(str(text))
    except ValueError as exc:
        raise MigrationError(src.error(path, f"the entrypoint is not a shell command line: {exc}")) from None
    if words:
        draft.set_job(("command",), words, path)


def _runtime_env(src: Source, draft: Draft) -> None:
    path = ("spec", "runtimeEnvYAML")
    text = src.take(path)
    if text is None:
        return
    env = _parse_runtime_env(src, path, text)
    for key in env:
        if key != _ENV_VARS:
            src.warn(
                path,
                f"runtimeEnvYAML {key} is not carried: a spec's image must hold the code and packages "
                "(specs have no Ray runtime environment)",
                code=codes.FIELD_NOT_CARRIED,
                hint="build them into the runtime's image",
            )
    variables = env.get(_ENV_VARS) or {}
    if not isinstance(variables, dict):
        src.drop(path, "runtimeEnvYAML env_vars is not a mapping")
        return
    for name, value in sorted(variables.items()):
        if name in draft.job.get("env", {}):
            continue  # the container's own value wins, as in Ray
        draft.set_job(("env", str(name)), "" if value is None else str(value), path)
    if variables:
        src.warn(
            path,
            "runtimeEnvYAML env_vars become container env on every pod of the job (the same for the "
            "training workers, which inherit it)",
        )


def _parse_runtime_env(src: Source, path: Path, text: Any) -> dict[str, Any]:
    from trainspec.dsl.load.strict_yaml import load_text

    docs, problems = load_text(str(text), f"{src.file} ({path[-1]})")
    if [p for p in problems if p.is_error and p.code != codes.YAML11_IMPLICIT] or len(docs) != 1:
        src.drop(path, "runtimeEnvYAML is not one YAML mapping")
        return {}
    return docs[0].data


def _fixed(src: Source) -> None:
    """Fields trainspec sets itself on every RayJob it compiles."""
    mode = src.take(("spec", "submissionMode"))
    if mode not in (None, RAY_DEFAULT_SUBMISSION_MODE):
        src.warn(
            ("spec", "submissionMode"),
            f"trainspec submits in {RAY_DEFAULT_SUBMISSION_MODE}; {mode} is not carried",
            code=codes.FIELD_NOT_CARRIED,
        )
    shutdown = src.take(("spec", "shutdownAfterJobFinishes"))
    if shutdown is not True:
        src.warn(
            ("spec", "shutdownAfterJobFinishes") if shutdown is not None else ("spec",),
            "compiled RayJobs delete their Ray cluster when the job finishes (shutdownAfterJobFinishes: true; "
            "Kueue requires it)",
        )
    version = src.take((*_CLUSTER, "rayVersion"))
    if version is not None:
        src.warn(
            (*_CLUSTER, "rayVersion"),
            f"rayVersion {version} is not carried (KubeRay reads the version from the image)",
            code=codes.FIELD_NOT_CARRIED,
        )


__all__ = ["KIND", "read"]
