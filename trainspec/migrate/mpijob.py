"""MPIJob (``kubeflow.org/v2beta1``, mpi-operator 0.8) -> specs (framework deepspeed or mpi).

* The ``Launcher`` runs the job's command (``mpirun``, ``deepspeed``); the ``Worker`` pods are
  the node shape (image, resources, env) and their command (an SSH daemon) becomes the runtime's
  ``mpi.workerCommand``, their readiness probe's port ``mpi.sshPort``.
* ``nodes`` = Workers, plus the launcher with ``runLauncherAsWorker: true``
  (``mpi.runLauncherAsNode``); ``slotsPerWorker`` -> ``procsPerNode``;
  ``sshAuthMountPath`` and the containers' ``runAsUser`` -> ``mpi``.
"""

from __future__ import annotations

from trainspec.compiler.engines import Engine
from trainspec.dsl import codes
from trainspec.dsl.spec.models import Framework, Mpi
from trainspec.k8s.wellknown import REPLICA_LAUNCHER, REPLICA_WORKER
from trainspec.migrate import shared_fields as common
from trainspec.migrate.draft import Draft
from trainspec.migrate.pod_template import MigrationError, compare, find_pod, read_command, read_pod
from trainspec.migrate.source import Path, Source

KIND = "MPIJob"
_SPECS = ("spec", "mpiReplicaSpecs")
#: The MPI implementation trainspec's MPIJobs (and Trainer's MPI runtimes) use.
EMITTED_IMPLEMENTATION = "OpenMPI"
#: The readiness probe's delay trainspec emits with ``mpi.sshPort``.
PROBE_DELAY = 5


def read(src: Source) -> Draft:
    """The draft specs of one MPIJob."""
    replicas = src.mapping(_SPECS)
    unknown = sorted(set(replicas) - {REPLICA_LAUNCHER, REPLICA_WORKER})
    if unknown or REPLICA_LAUNCHER not in replicas:
        raise MigrationError(
            src.error(
                _SPECS, "an MPIJob has a Launcher and Workers" + (f", not {', '.join(unknown)}" if unknown else "")
            )
        )
    launcher_tpl = (*_SPECS, REPLICA_LAUNCHER, "template")
    launcher = find_pod(src, launcher_tpl)
    command = [
        str(w) for w in (src.sequence((*launcher.container, "command")) + src.sequence((*launcher.container, "args")))
    ]
    framework = Framework.DEEPSPEED if any("deepspeed" in word for word in command[:3]) else Framework.MPI
    draft = Draft(src, common.job_name(src), src.get(("metadata", "namespace")), framework, Engine.TRAINING_OPERATOR)
    common.read_metadata(src, draft)
    as_node = src.take(("spec", "runLauncherAsWorker")) is True
    has_workers = REPLICA_WORKER in replicas
    if has_workers:
        worker = find_pod(src, (*_SPECS, REPLICA_WORKER, "template"))
        read_pod(src, draft, worker)
        # The workers' argv is the SSH daemon, not the job's command: it is the runtime's mpi.workerCommand.
        argv = [*draft.job.pop("command", []), *draft.job.pop("args", [])]
        for key in ("command", "args"):
            draft.origins.pop(("TrainingJob", "spec", key), None)
        _worker_command(src, draft, worker.container, argv)
        _probe(src, draft, worker.container)
        _run_as(src, draft, worker.template, worker.container)
        read_command(src, draft, launcher)
        _launcher(src, draft, launcher_tpl, launcher.container, worker.template, as_node)
    else:
        read_pod(src, draft, launcher)  # a launcher alone is the job's only node
        _run_as(src, draft, launcher.template, launcher.container)
    workers = common.int_at(src, (*_SPECS, REPLICA_WORKER, "replicas"), default=1) if has_workers else 0
    common.int_at(src, (*_SPECS, REPLICA_LAUNCHER, "replicas"), minimum=1, default=1)
    nodes = workers + (1 if as_node or not has_workers else 0)
    draft.set_job(("nodes",), nodes, (*_SPECS, REPLICA_WORKER if has_workers else REPLICA_LAUNCHER, "replicas"))
    if not as_node and has_workers:
        draft.set_runtime(("mpi", "runLauncherAsNode"), False, ("spec", "runLauncherAsWorker"))
    _slots(src, draft)
    _mpi_settings(src, draft)
    run = ("spec", "runPolicy")
    common.read_restarts(src, draft, (*run, "backoffLimit"))
    if src.get((*run, "backoffLimit")) is None:
        src.warn(
            (*run, "backoffLimit"),
            "without a restart budget the compiled MPIJob has backoffLimit 0: its "
            "launcher is not retried (the operator's default would retry it 6 times)",
            hint="set spec.restarts.max on the runtime to retry",
        )
    common.read_deadline(src, draft, (*run, "activeDeadlineSeconds"))
    common.read_suspend(src, draft, (*run, "suspend"))
    common.read_clean_pod_policy(src, (*run, "cleanPodPolicy"), "Running")
    common.read_gang(src, draft, (*run, "schedulingPolicy"), workers + 1)
    for rtype in replicas:
        src.use((*_SPECS, rtype, "restartPolicy"))  # trainspec chooses it (OnFailure launcher, budgeted workers)
    src.use(("spec", "launcherCreationPolicy"))
    return draft


def _worker_command(src: Source, draft: Draft, container: Path, argv: list[str]) -> None:
    default = Mpi().worker_command
    if not argv:
        src.warn(
            container,
            f"the workers run their image's entrypoint; a spec's workers run mpi.workerCommand "
            f"({' '.join(default)} unless set)",
            hint="set spec.mpi.workerCommand on the runtime",
        )
    elif not src.get((*container, "command")):
        # args alone run after the image's entrypoint; a workerCommand replaces it
        draft.set_runtime(("mpi", "workerCommand"), argv, (*container, "args"))
        src.warn(
            (*container, "args"),
            "the workers' args become mpi.workerCommand, which compiles to their command "
            "(the image's entrypoint, if any, no longer runs first)",
        )
    elif argv != default:
        draft.set_runtime(("mpi", "workerCommand"), argv, (*container, "command"))


def _probe(src: Source, draft: Draft, container: Path) -> None:
    probe = src.mapping((*container, "readinessProbe"))
    port = probe.get("tcpSocket", {}).get("port") if isinstance(probe.get("tcpSocket"), dict) else None
    if (
        not isinstance(port, int)
        or set(probe) - {"tcpSocket", "initialDelaySeconds"}
        or set(probe["tcpSocket"]) != {"port"}
    ):
        return  # left over: TS540
    draft.set_runtime(("mpi", "sshPort"), port, (*container, "readinessProbe", "tcpSocket", "port"))
    src.use((*container, "readinessProbe"))
    delay = probe.get("initialDelaySeconds")
    if delay != PROBE_DELAY:
        src.warn(
            (*container, "readinessProbe", "initialDelaySeconds")
            if delay is not None
            else (*container, "readinessProbe"),
            f"trainspec's probe of mpi.sshPort waits {PROBE_DELAY} s before the first check",
        )


def _run_as(src: Source, draft: Draft, template: Path, container: Path) -> None:
    security = src.mapping((*container, "securityContext"))
    user = security.get("runAsUser")
    if isinstance(user, int) and set(security) == {"runAsUser"}:
        draft.set_runtime(("mpi", "runAsUser"), user, (*container, "securityContext", "runAsUser"))
        src.use((*container, "securityContext"))
        group = src.get((*template, "spec", "securityContext", "fsGroup"))
        if group == user and set(src.mapping((*template, "spec", "securityContext"))) == {"fsGroup"}:
            src.use((*template, "spec", "securityContext"))


def _launcher(src: Source, draft: Draft, launcher: Path, container: Path, worker: Path, as_node: bool) -> None:
    """The launcher's pod must be the workers' shape, except its command, resources and name."""
    skip: set[Path] = {("spec", "containers", 0, key) for key in ("command", "args", "name")}
    skip |= {("spec", "containers", 0, "readinessProbe")}
    resources = src.mapping((*container, "resources"))
    if not as_node:
        skip.add(("spec", "containers", 0, "resources"))
        if resources:
            src.warn(
                (*container, "resources"),
                "a launcher that is not a node gets no resources of its own in specs (mpi.runLauncherAsNode: false)",
                code=codes.FIELD_NOT_CARRIED,
            )
    index = container[-1]
    if index != 0:
        skip = {tuple(index if p == 0 else p for p in path) for path in skip}
    compare(src, launcher, worker, (REPLICA_WORKER, REPLICA_LAUNCHER), skip=frozenset(skip))


def _slots(src: Source, draft: Draft) -> None:
    slots = src.take(("spec", "slotsPerWorker"))
    gpus = draft.runtime.get("resourcesPerNode", {}).get("gpu")
    if slots is None:
        return
    if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
        raise MigrationError(src.error(("spec", "slotsPerWorker"), "slotsPerWorker must be a whole number >= 1"))
    if slots != (gpus or 1):
        draft.set_job(("procsPerNode",), slots, ("spec", "slotsPerWorker"))


def _mpi_settings(src: Source, draft: Draft) -> None:
    path = ("spec", "sshAuthMountPath")
    mount = src.take(path)
    if isinstance(mount, str) and mount != Mpi().ssh_auth_mount_path:
        draft.set_runtime(("mpi", "sshAuthMountPath"), mount, path)
    implementation = src.take(("spec", "mpiImplementation"))
    if implementation not in (None, EMITTED_IMPLEMENTATION):
        src.warn(
            ("spec", "mpiImplementation"),
            f"specs compile to {EMITTED_IMPLEMENTATION} (as Trainer's MPI "
            f"runtimes do); {implementation} is not carried",
            code=codes.FIELD_NOT_CARRIED,
            hint="keep this job's manifest, or build the image with Open MPI",
        )


__all__ = ["KIND", "read"]
