"""Lower a planned deepspeed or mpi job to an mpi-operator 0.8 MPIJob (``kubeflow.org/v2beta1``).

The ``Launcher`` runs the job's command (``mpirun``, ``deepspeed``) and the ``Worker`` pods an SSH
daemon (the runtime's ``mpi.workerCommand``). The operator writes the hostfile with
``slotsPerWorker`` (= processes per node) slots per worker and mounts the SSH keys at
``sshAuthMountPath``. With ``mpi.runLauncherAsNode`` (the default, as in Trainer's MPI runtimes)
the launcher is one of the nodes: it gets a node's resources and ``runLauncherAsWorker``, and
there are ``nodes - 1`` workers. The launcher is created once the workers are ready
(``launcherCreationPolicy: WaitForWorkersReady``, Trainer's ``dependsOn: Ready``).
"""

from __future__ import annotations

from trainspec.compiler.lower.training_operator import operator_pod as pods
from trainspec.compiler.plan import JobPlan
from trainspec.dsl.spec.models import Mpi
from trainspec.k8s import MPIJob, MPIJobSpec, Probe, ReplicaSpec, TCPSocketAction
from trainspec.k8s.wellknown import LAUNCHER, MPI_WORKER_CONTAINER, REPLICA_LAUNCHER, REPLICA_WORKER

#: trainspec's spec has no choice of MPI; Trainer's MPI runtimes are Open MPI too.
MPI_IMPLEMENTATION = "OpenMPI"


def mpi_settings(plan: JobPlan) -> Mpi:
    return plan.resolved.runtime.spec.spec.mpi or Mpi()


def worker_count(plan: JobPlan) -> int:
    """Worker pods: one per node, less the launcher when it counts as a node."""
    nodes = plan.resolved.nodes.value
    return nodes - 1 if mpi_settings(plan).run_launcher_as_node else nodes


def mpijob(plan: JobPlan) -> MPIJob:
    """The MPIJob of a deepspeed or mpi job."""
    mpi = mpi_settings(plan)
    command, args = pods.command_of(plan)
    restart = pods.restart_policy(plan)
    launcher = pods.container(plan, LAUNCHER, command=command, args=args, resources=mpi.run_launcher_as_node)
    replicas = {
        REPLICA_LAUNCHER: ReplicaSpec(
            replicas=1, template=pods.pod_template(plan, launcher), restart_policy="OnFailure"
        )
    }
    workers = worker_count(plan)
    if workers > 0:
        probe = Probe(tcp_socket=TCPSocketAction(port=mpi.ssh_port), initial_delay_seconds=5) if mpi.ssh_port else None
        worker = pods.container(
            plan, MPI_WORKER_CONTAINER, command=list(mpi.worker_command), args=None, readiness_probe=probe
        )
        replicas[REPLICA_WORKER] = ReplicaSpec(
            replicas=workers, template=pods.pod_template(plan, worker), restart_policy=restart
        )
    restarts = plan.resolved.runtime.spec.spec.restarts
    return MPIJob(
        metadata=pods.job_metadata(plan),
        spec=MPIJobSpec(
            slots_per_worker=plan.resolved.procs_per_node.value,
            run_launcher_as_worker=True if mpi.run_launcher_as_node else None,
            # The launcher is a batch Job: without a limit it would retry 6 times (the Job default).
            run_policy=pods.run_policy(plan, workers + 1, backoff=restarts.max if restarts else 0),
            mpi_replica_specs=replicas,
            ssh_auth_mount_path=mpi.ssh_auth_mount_path,
            launcher_creation_policy="WaitForWorkersReady" if workers > 0 else None,
            mpi_implementation=MPI_IMPLEMENTATION,
        ),
    )
