"""mpi-operator's MPIJob (``kubeflow.org/v2beta1``, mpi-operator 0.8): a launcher and SSH workers.

Run policy and replica specs have the Training Operator's shapes (:mod:`trainspec.k8s.kubeflow_v1`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from trainspec.k8s.base import Model, Resource
from trainspec.k8s.kubeflow_v1 import ReplicaSpec, RunPolicy
from trainspec.k8s.meta import ObjectMeta
from trainspec.k8s.wellknown import MPI_API_VERSION

__all__ = ["MPI_API_VERSION", "MPIJob", "MPIJobSpec"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MPIJobSpec(Model):
    """Launcher (exactly one) and Workers; the operator writes the hostfile (``slotsPerWorker`` slots
    per worker) and mounts the SSH keys at ``sshAuthMountPath``.

    mpi-operator validates these itself (it has no webhook): ``runPolicy.cleanPodPolicy``,
    ``slotsPerWorker`` and ``sshAuthMountPath`` are required after its defaulting, and
    ``mpiImplementation`` is OpenMPI, Intel or MPICH.
    """

    slots_per_worker: int | None = None
    run_launcher_as_worker: bool | None = None
    run_policy: RunPolicy | None = None
    mpi_replica_specs: dict[str, ReplicaSpec]
    ssh_auth_mount_path: str | None = None
    launcher_creation_policy: Literal["AtStartup", "WaitForWorkersReady"] | None = None
    mpi_implementation: Literal["OpenMPI", "Intel", "MPICH"] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MPIJob(Resource):
    """An MPI job of mpi-operator (namespaced). Kueue reads the queue label here."""

    api_version: ClassVar[str] = MPI_API_VERSION
    kind: ClassVar[str] = "MPIJob"

    metadata: ObjectMeta
    spec: MPIJobSpec
