"""PyTorchJob (``kubeflow.org/v1``, Training Operator 1.9) -> specs.

* ``Master`` (1) + ``Worker`` (n) replicas -> ``nodes: n + 1``; Worker replicas only, with an
  ``elasticPolicy`` -> ``nodes: {min, max, maxRestarts}``; the Master's pod is the node shape
  (the Workers' must match it).
* ``nprocPerNode`` (a number) -> ``procsPerNode``; ``auto``/``gpu`` with GPUs is the default.
* ``runPolicy``: ``backoffLimit`` -> runtime ``restarts.max``, ``activeDeadlineSeconds`` ->
  ``maxRunTime``, ``suspend`` with Kueue's queue label -> ``queue``, ``schedulingPolicy`` -> the gang.
"""

from __future__ import annotations

from trainspec.compiler.engines import Engine
from trainspec.dsl import codes
from trainspec.dsl.spec.models import Framework
from trainspec.k8s.wellknown import ELASTIC_RDZV_BACKEND, PYTORCH_CONTAINER, REPLICA_MASTER, REPLICA_WORKER
from trainspec.migrate import shared_fields as common
from trainspec.migrate.draft import Draft
from trainspec.migrate.pod_template import MigrationError, compare, find_pod, read_pod
from trainspec.migrate.source import Source

KIND = "PyTorchJob"
_SPECS = ("spec", "pytorchReplicaSpecs")
#: What the operator does when a replica type gives no restartPolicy.
OPERATOR_RESTART_DEFAULT = "OnFailure"


def read(src: Source) -> Draft:
    """The draft specs of one PyTorchJob."""
    replicas = src.mapping(_SPECS)
    unknown = sorted(set(replicas) - {REPLICA_MASTER, REPLICA_WORKER})
    if unknown or not replicas:
        raise MigrationError(
            src.error(_SPECS, f"a PyTorchJob has Master and Worker replicas, not {', '.join(unknown) or 'none'}")
        )
    primary = REPLICA_MASTER if REPLICA_MASTER in replicas else REPLICA_WORKER
    draft = Draft(
        src, common.job_name(src), src.get(("metadata", "namespace")), Framework.TORCH, Engine.TRAINING_OPERATOR
    )
    common.read_metadata(src, draft)
    pod = find_pod(src, (*_SPECS, primary, "template"), PYTORCH_CONTAINER)
    read_pod(src, draft, pod)
    elastic = src.mapping(("spec", "elasticPolicy"))
    pods = _nodes(src, draft, replicas, elastic)
    _procs(src, draft)
    run = ("spec", "runPolicy")
    common.read_restarts(src, draft, (*run, "backoffLimit"))
    common.read_deadline(src, draft, (*run, "activeDeadlineSeconds"))
    common.read_suspend(src, draft, (*run, "suspend"))
    common.read_clean_pod_policy(src, (*run, "cleanPodPolicy"), "Running")
    common.read_gang(src, draft, (*run, "schedulingPolicy"), pods)
    _restart_policy(src, draft, replicas, bool(elastic))
    if REPLICA_MASTER in replicas and REPLICA_WORKER in replicas:
        compare(
            src,
            (*_SPECS, REPLICA_WORKER, "template"),
            (*_SPECS, REPLICA_MASTER, "template"),
            (REPLICA_MASTER, REPLICA_WORKER),
        )
    return draft


def _nodes(src: Source, draft: Draft, replicas: dict, elastic: dict) -> int:
    """``nodes`` from the replica counts (or the elastic range); the pods Kueue admits."""
    master = (
        common.int_at(src, (*_SPECS, REPLICA_MASTER, "replicas"), minimum=1, default=1)
        if REPLICA_MASTER in replicas
        else 0
    )
    if master > 1:
        raise MigrationError(
            src.error(
                (*_SPECS, REPLICA_MASTER, "replicas"),
                "a PyTorchJob has exactly one Master (the operator's webhook refuses more)",
            )
        )
    workers = common.int_at(src, (*_SPECS, REPLICA_WORKER, "replicas"), default=1) if REPLICA_WORKER in replicas else 0
    if elastic:
        return _elastic(src, draft, elastic, master, workers)
    if not master:
        src.warn(
            (*_SPECS, REPLICA_WORKER),
            "a fixed-size job compiles to one Master and nodes - 1 Workers (torchrun's rank 0 runs on the Master)",
        )
    nodes = master + workers
    draft.set_job(("nodes",), nodes, (*_SPECS, REPLICA_WORKER if workers else REPLICA_MASTER, "replicas"))
    return nodes


def _elastic(src: Source, draft: Draft, elastic: dict, master: int, workers: int) -> int:
    base = ("spec", "elasticPolicy")
    if master:
        src.warn(
            (*_SPECS, REPLICA_MASTER),
            "an elastic job compiles to Workers only (the c10d rendezvous "
            "needs no Master); the Master counts as one more node",
            code=codes.FIELD_CHANGED,
        )
    low = common.int_at(src, (*base, "minReplicas"), minimum=1, default=1)
    high = common.int_at(src, (*base, "maxReplicas"), minimum=1, default=max(low, workers + master))
    if workers + master != high:
        src.warn(
            (*_SPECS, REPLICA_WORKER, "replicas"),
            f"an elastic job starts with nodes.max ({high}) Workers, "
            f"which Kueue admits; {workers + master} is not carried",
            code=codes.FIELD_NOT_CARRIED,
        )
    value: dict = {"min": low, "max": high}
    restarts = src.take((*base, "maxRestarts"))
    if isinstance(restarts, int) and not isinstance(restarts, bool) and restarts >= 0:
        if restarts != 3:
            value["maxRestarts"] = restarts
    elif restarts is None:
        src.warn(base, "no maxRestarts: the spec's default budget, 3, is compiled into elasticPolicy.maxRestarts")
    backend = src.take((*base, "rdzvBackend"))
    if backend not in (None, ELASTIC_RDZV_BACKEND):
        src.warn(
            (*base, "rdzvBackend"),
            f"trainspec's elastic jobs use the {ELASTIC_RDZV_BACKEND} rendezvous "
            f"the operator hosts on the first Worker; {backend} (and its host and port) is not carried",
            code=codes.FIELD_NOT_CARRIED,
        )
        src.use((*base, "rdzvHost"), (*base, "rdzvPort"))
    draft.set_job(("nodes",), value, base)
    if src.get(("spec", "runPolicy", "backoffLimit")) is None:
        src.warn(
            ("spec", "runPolicy", "backoffLimit"),
            f"an elastic job compiles with runPolicy.backoffLimit "
            f"{value.get('maxRestarts', 3)} (its maxRestarts), so its pods do not restart forever",
        )
    draft.needs_engine = "elastic training (a node range) runs only as a PyTorchJob with an elasticPolicy"
    return high


def _procs(src: Source, draft: Draft) -> None:
    path: tuple[str, ...] = ("spec", "nprocPerNode")
    raw = src.take(path)
    if raw is None:
        raw = src.take(("spec", "elasticPolicy", "nProcPerNode"))  # deprecated spelling
        path = ("spec", "elasticPolicy", "nProcPerNode")
    if raw is None:
        return
    text = str(raw)
    gpus = draft.runtime.get("resourcesPerNode", {}).get("gpu")
    if text.isdigit() and int(text) > 0:
        if int(text) != (gpus or 1):
            draft.set_job(("procsPerNode",), int(text), path)
    elif text in ("auto", "gpu") and gpus:
        return  # one process per GPU: the spec's default
    else:
        src.warn(
            path,
            f"nprocPerNode {text!r} depends on the node; a spec sets a number (default: the GPUs per node, else 1)",
            code=codes.FIELD_NOT_CARRIED,
        )


def _restart_policy(src: Source, draft: Draft, replicas: dict, elastic: bool) -> None:
    """Pods restart in place (OnFailure) exactly when the spec has a restart budget or is elastic."""
    budget = "restarts" in draft.runtime or elastic
    said: set[str] = set()
    for rtype in replicas:
        path = (*_SPECS, rtype, "restartPolicy")
        policy = src.take(path) or OPERATOR_RESTART_DEFAULT
        if not isinstance(policy, str):
            src.drop(path, "restartPolicy is not a string")
            continue
        if policy in said:
            continue  # the same policy on every replica type: one warning says it
        said.add(policy)
        if policy == "OnFailure" and not budget:
            src.warn(
                path,
                "pods restart in place without limit here (no runPolicy.backoffLimit); a spec restarts "
                "only within a budget, and has none, so failed pods fail the job (restartPolicy Never)",
                hint="set spec.restarts.max on the runtime to restart within a budget",
            )
        elif policy not in ("OnFailure", "Never") or (policy == "Never" and budget):
            src.warn(
                path,
                f"restartPolicy {policy} is not carried: specs restart failed pods in place (OnFailure) "
                "when they have a restart budget or are elastic, else never",
                code=codes.FIELD_NOT_CARRIED,
            )


__all__ = ["KIND", "read"]
