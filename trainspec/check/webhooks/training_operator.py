"""Admission rules of the Training Operator's webhooks (PyTorchJob, JAXJob, ``kubeflow.org/v1``)
and mpi-operator's validation (MPIJob, ``kubeflow.org/v2beta1``), re-implemented.

The API server's CRD schemas leave these to the operators (the recorded verdicts accept a
PyTorchJob without a ``pytorch`` container or with ``cleanPodPolicy: Maybe``):

* Training Operator 1.9 webhooks (``pkg/webhooks/pytorch``, ``pkg/webhooks/jax``):
  ``metadata.name`` is a DNS-1035 label; replica specs are set and only of the kind's types
  (PyTorchJob: Master, Worker; JAXJob: Worker); each has containers with images, one of them
  named ``pytorch`` / ``jax``; Master has exactly 1 replica, others at least 1; an
  ``elasticPolicy`` needs Worker replicas; ``elasticPolicy.nProcPerNode`` with ``nprocPerNode``.
* mpi-operator 0.8 (``pkg/apis/kubeflow/validation``, run by its controller: it has no
  webhook, so a bad MPIJob is accepted and then fails): a Launcher with exactly 1 replica,
  Workers with at least 1, ``restartPolicy`` Never or OnFailure, ``cleanPodPolicy`` None,
  Running or All, ``slotsPerWorker`` >= 0, and ``<name>-worker-<last index>`` a DNS-1035 label.

Every finding is TS503 and says which component rejects it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic
from trainspec.k8s.name_rules import dns1035_problems
from trainspec.k8s.wellknown import (
    JAX_CONTAINER,
    KUBEFLOW_GROUP,
    NAME_MAX,
    PYTORCH_CONTAINER,
    REPLICA_LAUNCHER,
    REPLICA_MASTER,
    REPLICA_WORKER,
)

__all__ = ["check_operator_job", "is_operator_job"]

_WEBHOOK = "Training Operator webhook"
_MPI = "MPI Operator controller"
#: kind -> (replica specs field, allowed types, required types, required container, who rejects).
_SHAPES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], str | None, str]] = {
    "PyTorchJob": ("pytorchReplicaSpecs", (REPLICA_MASTER, REPLICA_WORKER), (), PYTORCH_CONTAINER, _WEBHOOK),
    "JAXJob": ("jaxReplicaSpecs", (REPLICA_WORKER,), (), JAX_CONTAINER, _WEBHOOK),
    "MPIJob": ("mpiReplicaSpecs", (REPLICA_LAUNCHER, REPLICA_WORKER), (REPLICA_LAUNCHER,), None, _MPI),
}
#: The apiVersion each kind is checked for (MPIJob v1 is the Training Operator's older API).
_VERSIONS = {"PyTorchJob": "v1", "JAXJob": "v1", "MPIJob": "v2beta1"}


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def is_operator_job(manifest: Mapping[str, Any]) -> bool:
    """A PyTorchJob or JAXJob (kubeflow.org/v1) or an MPIJob (kubeflow.org/v2beta1)."""
    kind = str(manifest.get("kind"))
    return kind in _VERSIONS and manifest.get("apiVersion") == f"{KUBEFLOW_GROUP}/{_VERSIONS[kind]}"


def check_operator_job(manifest: Mapping[str, Any], file: str | None = None) -> list[Diagnostic]:
    """TS503 findings for one operator job; [] for any other manifest."""
    if not is_operator_job(manifest):
        return []
    kind = str(manifest["kind"])
    field, allowed, required, container, who = _SHAPES[kind]
    spec = _dict(manifest.get("spec"))
    specs = _dict(spec.get(field))
    found: list[tuple[str, str]] = []
    name = str(_dict(manifest.get("metadata")).get("name", ""))
    found.extend(("metadata.name", f"{name!r} {problem}") for problem in dns1035_problems(name))
    if not specs:
        found.append((f"spec.{field}", "must be set"))
    found.extend(
        (f"spec.{field}.{rtype}", f"a {rtype} replica spec is required") for rtype in required if rtype not in specs
    )
    if kind == "PyTorchJob":
        found.extend(_elastic(spec, field, specs))
    for rtype, rspec in specs.items():
        found.extend(_replica(kind, f"spec.{field}.{rtype}", str(rtype), _dict(rspec), allowed, container))
    if kind == "MPIJob":
        found.extend(_mpi(spec, name, specs))
    return [
        Diagnostic(code=codes.WEBHOOK_RULE, file=file, path=path, message=f"the {who} rejects this {kind}: {message}")
        for path, message in found
    ]


def _elastic(spec: Mapping[str, Any], field: str, specs: Mapping[str, Any]) -> list[tuple[str, str]]:
    elastic = spec.get("elasticPolicy")
    if not elastic:
        return []
    found = []
    if REPLICA_WORKER not in specs:
        found.append((f"spec.{field}.{REPLICA_WORKER}", "must be configured if elastic policy is used"))
    if _dict(elastic).get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
        found.append(("spec.elasticPolicy.nProcPerNode", "must not be used with spec.nprocPerNode"))
    return found


def _replica(
    kind: str, at: str, rtype: str, rspec: Mapping[str, Any], allowed: tuple[str, ...], container: str | None
) -> list[tuple[str, str]]:
    found = []
    if rtype not in allowed:
        found.append((at, f"replica type {rtype!r} is not one of {', '.join(allowed)}"))
    containers = [
        c for c in _dict(_dict(rspec.get("template")).get("spec")).get("containers") or [] if isinstance(c, Mapping)
    ]
    where = f"{at}.template.spec.containers"
    if not containers:
        found.append((where, "must be specified"))
    found.extend((f"{where}[{i}].image", "must be set") for i, c in enumerate(containers) if not c.get("image"))
    if container is not None and containers and container not in [c.get("name") for c in containers]:
        found.append((where, f"must have a container named {container}"))
    replicas = rspec.get("replicas")
    if rtype in (REPLICA_MASTER, REPLICA_LAUNCHER):
        if (replicas is not None and replicas != 1) or (replicas is None and rtype == REPLICA_MASTER):
            found.append((f"{at}.replicas", "must be 1"))
    elif isinstance(replicas, int) and replicas < 1:
        found.append((f"{at}.replicas", "must be at least 1"))
    if kind == "MPIJob" and rspec.get("restartPolicy") not in (None, "Never", "OnFailure"):
        found.append((f"{at}.restartPolicy", f"{rspec.get('restartPolicy')!r} is not Never or OnFailure"))
    return found


def _mpi(spec: Mapping[str, Any], name: str, specs: Mapping[str, Any]) -> list[tuple[str, str]]:
    found = []
    slots = spec.get("slotsPerWorker")
    if isinstance(slots, int) and slots < 0:
        found.append(("spec.slotsPerWorker", "must be non-negative"))
    policy = _dict(spec.get("runPolicy")).get("cleanPodPolicy")
    if policy is not None and policy not in ("None", "Running", "All"):
        found.append(("spec.runPolicy.cleanPodPolicy", f"{policy!r} is not None, Running or All"))
    workers = _dict(specs.get(REPLICA_WORKER)).get("replicas")
    last = max(workers, 1) - 1 if isinstance(workers, int) else 0
    pod = f"{name}-{REPLICA_WORKER.lower()}-{last}"
    if len(pod) > NAME_MAX:
        found.append(("metadata.name", f"its last worker would be {pod!r}, longer than {NAME_MAX} characters"))
    return found
