"""Generator configuration of ``trainspec.k8s.mpi``: mpi-operator's MPIJob."""

from __future__ import annotations

from tools.k8s_models.vocabulary import Cls, Field, Module

__all__ = ["MPI"]

MPI = Module(
    name="mpi",
    doc="""mpi-operator's MPIJob (``kubeflow.org/v2beta1``, mpi-operator 0.8): a launcher and SSH workers.

Run policy and replica specs have the Training Operator's shapes (:mod:`trainspec.k8s.kubeflow_v1`).""",
    classes=(
        Cls(
            "MPIJobSpec",
            """Launcher (exactly one) and Workers; the operator writes the hostfile (``slotsPerWorker`` slots
per worker) and mounts the SSH keys at ``sshAuthMountPath``.

mpi-operator validates these itself (it has no webhook): ``runPolicy.cleanPodPolicy``,
``slotsPerWorker`` and ``sshAuthMountPath`` are required after its defaulting, and
``mpiImplementation`` is OpenMPI, Intel or MPICH.""",
            (
                "slots_per_worker",
                "run_launcher_as_worker",
                Field("run_policy", ref="RunPolicy"),
                Field("mpi_replica_specs", ref="ReplicaSpec"),
                "ssh_auth_mount_path",
                "launcher_creation_policy",
                "mpi_implementation",
            ),
        ),
        Cls(
            "MPIJob",
            "An MPI job of mpi-operator (namespaced). Kueue reads the queue label here.",
            (
                Field("metadata", ref="ObjectMeta"),
                Field("spec", ref="MPIJobSpec"),
            ),
            resource=("MPI_API_VERSION", "MPIJob"),
            path="mpijob:",
        ),
    ),
    reexports=(("wellknown", "MPI_API_VERSION"),),
)
