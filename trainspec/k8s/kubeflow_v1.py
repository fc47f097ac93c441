"""Kubeflow Training Operator v1 (``kubeflow.org/v1``, Training Operator 1.9): PyTorchJob and JAXJob.

Only the sub-trees trainspec emits are modelled. ``RunPolicy``, ``SchedulingPolicy`` and
``ReplicaSpec`` are the operator's common types; mpi-operator's MPIJob (:mod:`trainspec.k8s.mpi`)
has the same shapes and reuses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from trainspec.k8s.base import Model, Resource
from trainspec.k8s.core import PodTemplateSpec
from trainspec.k8s.meta import ObjectMeta
from trainspec.k8s.wellknown import KUBEFLOW_V1_API_VERSION

__all__ = [
    "KUBEFLOW_V1_API_VERSION",
    "ElasticPolicy",
    "JAXJob",
    "JAXJobSpec",
    "PyTorchJob",
    "PyTorchJobSpec",
    "ReplicaSpec",
    "RunPolicy",
    "SchedulingPolicy",
]

CleanPodPolicy = Literal["None", "Running", "All"]
RestartPolicy = Literal["Always", "OnFailure", "Never", "ExitCode"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class SchedulingPolicy(Model):
    """What a gang scheduler (Volcano, scheduler-plugins coscheduling) gets in the job's PodGroup."""

    min_available: int | None = None
    queue: str | None = None
    min_resources: dict[str, str | int] | None = None
    priority_class: str | None = None
    schedule_timeout_seconds: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class RunPolicy(Model):
    """Job-wide policies: pod clean-up, retries, deadline, gang scheduling and Kueue's ``suspend``."""

    clean_pod_policy: CleanPodPolicy | None = None
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    #: Retries before the job is marked failed (pod restarts count, as in a batch Job).
    backoff_limit: int | None = None
    scheduling_policy: SchedulingPolicy | None = None
    #: Created suspended, Kueue starts the job on admission.
    suspend: bool | None = None
    managed_by: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ReplicaSpec(Model):
    """One replica type (Master, Worker, Launcher): how many pods, their template and restart policy."""

    replicas: int | None = None
    template: PodTemplateSpec
    restart_policy: RestartPolicy | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ElasticPolicy(Model):
    """torchrun's elastic launch: the operator turns it into ``PET_NNODES=min:max``, the rendezvous
    endpoint (``<job>-worker-0``) and ``PET_MAX_RESTARTS``."""

    min_replicas: int | None = None
    max_replicas: int | None = None
    #: c10d, etcd or etcd-v2 (the CRD takes any string).
    rdzv_backend: str | None = None
    rdzv_port: int | None = None
    rdzv_host: str | None = None
    rdzv_id: str | None = None
    standalone: bool | None = None
    max_restarts: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PyTorchJobSpec(Model):
    """Master (exactly one) and Workers, or Workers only when elastic; ``nprocPerNode`` is a string
    (``auto``, ``cpu``, ``gpu`` or a number)."""

    run_policy: RunPolicy | None = None
    elastic_policy: ElasticPolicy | None = None
    pytorch_replica_specs: dict[str, ReplicaSpec]
    nproc_per_node: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PyTorchJob(Resource):
    """A PyTorch job of the Training Operator (namespaced). Kueue reads the queue label here."""

    api_version: ClassVar[str] = KUBEFLOW_V1_API_VERSION
    kind: ClassVar[str] = "PyTorchJob"

    metadata: ObjectMeta
    spec: PyTorchJobSpec


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JAXJobSpec(Model):
    """Workers only; the operator sets the JAX coordinator address and process ids."""

    run_policy: RunPolicy | None = None
    jax_replica_specs: dict[str, ReplicaSpec]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class JAXJob(Resource):
    """A JAX job of the Training Operator (namespaced)."""

    api_version: ClassVar[str] = KUBEFLOW_V1_API_VERSION
    kind: ClassVar[str] = "JAXJob"

    metadata: ObjectMeta
    spec: JAXJobSpec
