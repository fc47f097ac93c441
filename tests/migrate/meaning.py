"""What a job manifest means, for the migrate round trip: ``meaning(input) == meaning(compiled)``.

The meaning leaves out what trainspec decides itself when it compiles (documented in
docs/migrate.md, "What the round trip keeps"): container names, restartPolicy, cleanPodPolicy,
the split of requests and limits (a request-only or limit-only resource means the same amount),
trainspec's own env (``TRAINSPEC_*``) and Kueue's max-exec-time label (both follow maxRunTime),
an MPIJob's launcherCreationPolicy, a RayJob's head size, ports and start parameters,
submission mode and cluster shutdown. :func:`waived` drops the parts a migration warned about.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from trainspec.compiler.lower.labels import OBSERVABILITY_LABELS
from trainspec.dsl.framework.quantity import Quantity
from trainspec.dsl.kube_facts import MPI_SSH_AUTH_MOUNT_PATH
from trainspec.k8s.wellknown import JOB_LABEL, MAX_EXEC_TIME_LABEL, QUEUE_NAME_LABEL, RUN_LABEL

#: The labels a run object carries for its job (trainspec.compiler.runs): added, not migrated.
RUN_LABELS = (JOB_LABEL, RUN_LABEL)

Meaning = dict[str, Any]


def _q(value: Any) -> str:
    return str(Quantity.parse(value))


def _volume(volume: dict | None) -> Any:
    if volume is None:
        return None
    body = {k: v for k, v in volume.items() if k != "name"}
    empty = body.get("emptyDir")
    if isinstance(empty, dict) and "sizeLimit" in empty:
        body["emptyDir"] = {**empty, "sizeLimit": _q(empty["sizeLimit"])}
    return json.dumps(body, sort_keys=True)


def pod(template: dict, index: int = 0) -> Meaning:
    """The meaning of a pod template's main container and its pod."""
    spec = template.get("spec") or {}
    container = spec["containers"][index]
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    env = {}
    for item in container.get("env") or []:
        if item["name"].startswith("TRAINSPEC_"):
            continue
        env[item["name"]] = (
            json.dumps(item["valueFrom"], sort_keys=True) if "valueFrom" in item else str(item.get("value", ""))
        )
    resources = container.get("resources") or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    metadata = template.get("metadata") or {}
    return {
        "image": container.get("image"),
        "command": container.get("command") or None,
        "args": container.get("args") or None,
        "env": env,
        "resources": {name: _q(limits.get(name, requests.get(name))) for name in {*limits, *requests}},
        "mounts": {m["mountPath"]: _volume(volumes.get(m["name"])) for m in container.get("volumeMounts") or []},
        "nodeSelector": spec.get("nodeSelector") or None,
        "tolerations": spec.get("tolerations") or None,
        "schedulerName": spec.get("schedulerName"),
        "priorityClassName": spec.get("priorityClassName"),
        # trainspec's own pod labels (which job, team, runtime: docs/observability.md) are added, not migrated.
        "labels": {
            k: v for k, v in (metadata.get("labels") or {}).items() if k not in (*OBSERVABILITY_LABELS, RUN_LABEL)
        }
        or None,
        "annotations": metadata.get("annotations") or None,
        "runAsUser": (container.get("securityContext") or {}).get("runAsUser"),
        "sshPort": ((container.get("readinessProbe") or {}).get("tcpSocket") or {}).get("port"),
    }


def _metadata(obj: dict) -> Meaning:
    meta = obj.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in (MAX_EXEC_TIME_LABEL, *RUN_LABELS)}
    # A compiled job object is the job's run, <job>-<run id> (docs/gitops.md): the job is its label.
    job = (meta.get("labels") or {}).get(JOB_LABEL)
    return {
        "name": job or meta.get("name") or (meta.get("generateName") or "").rstrip("-"),
        "namespace": meta.get("namespace") or "default",
        "labels": labels,
        "annotations": meta.get("annotations") or {},
    }


def _run_policy(run: dict) -> Meaning:
    return {
        "backoffLimit": run.get("backoffLimit"),
        "deadline": run.get("activeDeadlineSeconds"),
        "suspend": bool(run.get("suspend")),
        "schedulingPolicy": run.get("schedulingPolicy"),
    }


def meaning(obj: dict) -> Meaning:
    """The meaning of a PyTorchJob, MPIJob or RayJob."""
    found = {"PyTorchJob": _pytorchjob, "MPIJob": _mpijob, "RayJob": _rayjob}[obj["kind"]](obj)
    # A queued job is suspended until Kueue admits it: Kueue's webhook suspends it at creation, so
    # trainspec writes no suspend of its own (docs/gitops.md). Both forms mean "held for Kueue".
    if "suspend" in found:
        found["suspend"] = bool(found["suspend"]) or QUEUE_NAME_LABEL in found["labels"]
    return found


def _pytorchjob(obj: dict) -> Meaning:
    spec = obj["spec"]
    replicas = spec["pytorchReplicaSpecs"]
    elastic = spec.get("elasticPolicy")
    nproc = spec.get("nprocPerNode")
    return {
        **_metadata(obj),
        **_run_policy(spec.get("runPolicy") or {}),
        "replicas": {t: r.get("replicas", 1) for t, r in replicas.items()},
        "pods": {t: pod(r["template"], _main(r["template"], "pytorch")) for t, r in replicas.items()},
        "nproc": None if nproc is None else str(nproc),
        "elastic": None
        if elastic is None
        else {k: elastic.get(k) for k in ("minReplicas", "maxReplicas", "maxRestarts", "rdzvBackend")},
    }


def _main(template: dict, name: str) -> int:
    names = [c.get("name") for c in template["spec"]["containers"]]
    return names.index(name) if name in names else 0


def _mpijob(obj: dict) -> Meaning:
    spec = obj["spec"]
    replicas = spec["mpiReplicaSpecs"]
    pods = {t: pod(r["template"]) for t, r in replicas.items()}
    for p in pods.values():
        # The workers' argv is what runs (a workerCommand compiles to the command alone).
        p["argv"] = [*(p.pop("command") or []), *(p.pop("args") or [])]
    return {
        **_metadata(obj),
        **_run_policy(spec.get("runPolicy") or {}),
        "replicas": {t: r.get("replicas", 1) for t, r in replicas.items()},
        "pods": pods,
        "slots": spec.get("slotsPerWorker", 1),
        "sshAuthMountPath": spec.get("sshAuthMountPath", MPI_SSH_AUTH_MOUNT_PATH),
        "runLauncherAsWorker": bool(spec.get("runLauncherAsWorker")),
        "mpiImplementation": spec.get("mpiImplementation", "OpenMPI"),
    }


def _rayjob(obj: dict) -> Meaning:
    spec = obj["spec"]
    cluster = spec["rayClusterSpec"]
    groups = cluster.get("workerGroupSpecs") or []
    head = cluster["headGroupSpec"]["template"]
    if groups:
        group = groups[0]
        worker, count = group["template"], (group.get("replicas"), group.get("minReplicas"), group.get("maxReplicas"))
    else:
        worker, count = head, (1, 1, 1)
    env_vars: dict = {}
    return {
        **_metadata(obj),
        "backoffLimit": spec.get("backoffLimit"),
        "deadline": spec.get("activeDeadlineSeconds"),
        "suspend": bool(spec.get("suspend")),
        "entrypoint": shlex.split(spec.get("entrypoint") or ""),
        "head_image": head["spec"]["containers"][0]["image"],
        "workers": count,
        "worker_pod": pod(worker),
        "runtime_env": env_vars,
    }


#: A warning at a manifest field waives these parts of the meaning (the migration said it changes them).
_CONTAINER_FIELD = {
    "command": "command",
    "args": "args",
    "env": "env",
    "resources": "resources",
    "volumeMounts": "mounts",
    "image": "image",
    "readinessProbe": "sshPort",
    "securityContext": "runAsUser",
}


def waived(diagnostics: list, kind: str, *, head_only: bool = False) -> set[tuple[str, ...]]:
    """The meaning keys the migration's warnings are about (each a key path into :func:`meaning`).

    ``head_only``: a RayJob without worker groups, whose head pod is the meaning's worker pod.
    """
    out: set[tuple[str, ...]] = set()
    for diag in diagnostics:
        parts = [p for p in re.split(r"[.\[\]]+", diag.path) if p]
        if head_only and parts[:3] == ["spec", "rayClusterSpec", "headGroupSpec"] and len(parts) > 3:
            parts = ["spec", "rayClusterSpec", "workerGroupSpecs", "0", *parts[3:]]
        out |= _waive(parts, kind)
    return out


def _waive(parts: list[str], kind: str) -> set[tuple[str, ...]]:
    if not parts:
        return set()
    if kind == "RayJob":
        return _waive_ray(parts)
    field = "pytorchReplicaSpecs" if kind == "PyTorchJob" else "mpiReplicaSpecs"
    if parts[:2] == ["spec", field] and len(parts) >= 3:
        rtype = parts[2]
        if len(parts) == 3:
            return {("replicas",), ("pods",)}  # a replica type that changes shape (Master <-> Workers)
        if parts[3] == "replicas":
            return {("replicas", rtype)}
        if "containers" in parts:
            rest = parts[parts.index("containers") + 2 :]
            if not rest:
                return {("pods", rtype, "command"), ("pods", rtype, "args"), ("pods", rtype, "argv")}
            key = _CONTAINER_FIELD.get(rest[0])
            return (
                {("pods", rtype, key), ("pods", rtype, "argv")}
                if key in ("command", "args")
                else {("pods", rtype, key)}
                if key
                else set()
            )
        if "volumes" in parts:
            return {("pods", rtype, "mounts")}
        if "spec" in parts[3:]:
            sub = parts[parts.index("spec", 3) + 1 :] if parts.index("spec", 3) + 1 < len(parts) else []
            return {("pods", rtype, sub[0])} if sub else {("pods", rtype)}
    if parts[:3] == ["spec", "runPolicy", "backoffLimit"]:
        return {("backoffLimit",)}
    if parts[:2] == ["spec", "elasticPolicy"]:
        return {("elastic",), ("replicas",)}
    if parts[:2] == ["spec", "nprocPerNode"]:
        return {("nproc",)}
    if parts[:2] == ["spec", "mpiImplementation"]:
        return {("mpiImplementation",)}
    if parts[:2] == ["metadata", "generateName"]:
        return {("name",)}
    return set()


def _waive_ray(parts: list[str]) -> set[tuple[str, ...]]:
    if parts[:3] == ["spec", "rayClusterSpec", "headGroupSpec"]:
        if len(parts) == 3:  # a head-only RayJob: its pod is the worker's
            return {("workers",)}
        return {("head_image",)} if parts[-1] == "image" else set()
    if parts[:3] == ["spec", "rayClusterSpec", "workerGroupSpecs"]:
        if len(parts) > 4 and parts[4] in ("replicas", "minReplicas", "maxReplicas"):
            return {("workers",)}
        if "containers" in parts:
            rest = parts[parts.index("containers") + 2 :]
            key = _CONTAINER_FIELD.get(rest[0]) if rest else None
            return {("worker_pod", key)} if key else set()
        if "volumes" in parts:
            return {("worker_pod", "mounts")}
    if parts[:2] == ["spec", "runtimeEnvYAML"]:
        return {("worker_pod", "env")}
    if parts[:2] == ["metadata", "generateName"]:
        return {("name",)}
    return set()


def without(value: Meaning, paths: set[tuple[str, ...]]) -> Meaning:
    """``value`` without the key paths (a path ending at a dict key removes that key)."""
    out = json.loads(json.dumps(value))
    for path in paths:
        _remove(out, list(path))
    return out


def _remove(node: Any, path: list[str]) -> None:
    if not isinstance(node, dict) or not path:
        return
    if len(path) == 1:
        node.pop(path[0], None)
        return
    _remove(node.get(path[0]), path[1:])
