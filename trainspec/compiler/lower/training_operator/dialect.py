"""The ``training-operator`` target: Kubeflow Training Operator 1.9 and mpi-operator 0.8 jobs.

A job becomes, by its runtime's framework:

* ``torch`` -> ``PyTorchJob`` (``kubeflow.org/v1``), elastic when ``nodes`` is a range;
* ``jax`` -> ``JAXJob`` (``kubeflow.org/v1``);
* ``deepspeed`` and ``mpi`` -> ``MPIJob`` (``kubeflow.org/v2beta1``, mpi-operator's: the v1
  operator's own MPIJob v1 is the older API of the same CRD name).

There are no runtime objects: each job's object carries its runtime (``emits_runtimes`` is
False). A job's output file holds its checkpoint PVC (if trainspec creates one), then the job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from trainspec.compiler.engines import Engine
from trainspec.compiler.lower.dialects import Dialect, LaunchFacts, Lowered
from trainspec.compiler.lower.field_sources import claim_sources, metadata_sources
from trainspec.compiler.lower.labels import JOB_LABEL
from trainspec.compiler.provenance import FieldSources, Origin, SpecRef
from trainspec.dsl.spec.models import Framework
from trainspec.k8s.wellknown import (
    KUBEFLOW_GROUP,
    NAME_MAX,
    REPLICA_INDEX_LABEL,
    REPLICA_LAUNCHER,
    REPLICA_MASTER,
    REPLICA_TYPE_LABEL,
    REPLICA_WORKER,
)

if TYPE_CHECKING:
    from trainspec.compiler.lower.dialects import Budget
    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.targets import Target
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.dsl.load.loaded import LoadedSpec

__all__ = ["TrainingOperatorDialect", "dialect", "lower_object", "object_sources"]

#: The operators' pod label naming the job object (beside the replica type and index).
_JOB_NAME_LABEL = "training.kubeflow.org/job-name"
#: Where each kind keeps its replicas, and the replica types whose first pod's log stands for the job.
_REPLICAS = {"PyTorchJob": "pytorchReplicaSpecs", "JAXJob": "jaxReplicaSpecs", "MPIJob": "mpiReplicaSpecs"}
_LOG_REPLICAS = (REPLICA_LAUNCHER, REPLICA_MASTER, REPLICA_WORKER)


class TrainingOperatorDialect:
    """PyTorchJob / JAXJob (Training Operator 1.9) and MPIJob (mpi-operator 0.8); runtimes fold into jobs."""

    name = Engine.TRAINING_OPERATOR
    emits_runtimes = False
    job_kinds: tuple[str, ...] = ("PyTorchJob", "JAXJob", "MPIJob")
    elastic = True  # a PyTorchJob's elasticPolicy (the other kinds refuse a range: TS521)
    sharding_stage = False
    ray_head = False
    restarts_field = "runPolicy.backoffLimit"
    cluster_commands = False
    kfp_step = True
    local_run = False

    def __init__(self, target: Target) -> None:
        self.target = target

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.target})"

    def runtime_rules(self, loaded: LoadedSpec) -> list[Diagnostic]:
        """Nothing: a runtime is checked through the jobs that use it."""
        return []

    def job_rules(self, plan: JobPlan) -> list[Diagnostic]:
        """What the operators cannot express (TS521) and Kueue's integration (TS520)."""
        from trainspec.compiler.lower.training_operator.operator_rules import job_problems

        return job_problems(plan, self.target)

    def lower_runtime(self, loaded: LoadedSpec, used_by: SpecRef | None = None) -> list[Lowered]:
        """Nothing: the runtime is part of each job's object."""
        return []

    def lower_job(self, plan: JobPlan) -> list[Lowered]:
        """The job's objects in apply order: its checkpoint PVC (if trainspec creates one), its job object."""
        from trainspec.compiler.lower import checkpoint

        resolved = plan.resolved
        out: list[Lowered] = []
        if plan.checkpoint is not None:
            pvc = checkpoint.claim(plan.checkpoint, resolved.name, resolved.namespace)
            if pvc is not None:
                out.append(Lowered(pvc, claim_sources(plan)))
        obj = lower_object(plan)
        out.append(Lowered(obj, object_sources(plan, obj)))
        return out

    def name_budget(self, plan: JobPlan) -> Budget:
        """The operators name pods and their headless Services ``<job>-<replica type>-<index>``."""
        from trainspec.compiler.lower.dialects import Budget
        from trainspec.compiler.lower.training_operator.operator_rules import kind_of, longest_pod_name

        longest = longest_pod_name(plan)
        return Budget(
            NAME_MAX - (len(longest) - len(plan.resolved.name)),
            f"the {kind_of(plan.resolved.framework)} pod and Service {longest!r} (the operator names them "
            "<job>-<replica type>-<index>)",
        )

    def rank_zero_selector(self, plan: JobPlan) -> tuple[dict[str, str], bool]:
        """PyTorchJob: the Master; JAXJob: Worker 0. An elastic PyTorchJob's ranks are the
        rendezvous's, MPI's are mpirun's: every trainer pod of the job."""
        framework = plan.resolved.framework
        base = {JOB_LABEL: plan.resolved.name}
        if framework is Framework.TORCH and plan.elastic is None:
            return {**base, REPLICA_TYPE_LABEL: REPLICA_MASTER.lower()}, True
        if framework is Framework.JAX:
            return {**base, REPLICA_TYPE_LABEL: REPLICA_WORKER.lower(), REPLICA_INDEX_LABEL: "0"}, True
        return base, False

    def launch_facts(self, job: Mapping[str, Any]) -> LaunchFacts:
        """Phase from the ``Failed``/``Succeeded``/``Suspended``/``Running`` conditions' status (the
        operators' JobStatus); the log of the MPI launcher, the PyTorchJob's Master, else Worker 0;
        the name so that ``<job>-<type>-<index>`` (an MPI launcher: ``<job>-launcher``) fits."""
        meta, spec = job.get("metadata") or {}, job.get("spec") or {}
        true = {
            c.get("type"): c for c in (job.get("status") or {}).get("conditions") or [] if c.get("status") == "True"
        }
        phase, reason, message = "Created", "", ""
        for condition, named in (("Failed", "Failed"), ("Succeeded", "Complete"), ("Suspended", "Suspended")):
            if condition in true:
                phase, reason = named, str(true[condition].get("reason") or "")
                message = str(true[condition].get("message") or "")
                break
        else:
            phase = "Running" if "Running" in true or "Restarting" in true else "Created"
        replicas: Mapping[str, Any] = spec.get(_REPLICAS.get(str(job.get("kind")), "")) or {}
        rtype = next((r for r in _LOG_REPLICAS if r in replicas), REPLICA_WORKER)
        pod = (((replicas.get(rtype) or {}).get("template") or {}).get("spec") or {}).get("containers") or [{}]
        selector = {_JOB_NAME_LABEL: str(meta.get("name") or ""), REPLICA_TYPE_LABEL: rtype.lower()}
        if rtype != REPLICA_LAUNCHER:
            selector[REPLICA_INDEX_LABEL] = "0"
        most = int(((spec.get("elasticPolicy") or {}).get("maxReplicas")) or 0)
        suffixes = [
            f"-{r.lower()}" if r == REPLICA_LAUNCHER else f"-{r.lower()}-{max(int(v.get('replicas') or 1), most) - 1}"
            for r, v in replicas.items()
        ]
        return LaunchFacts(
            api_group=KUBEFLOW_GROUP,
            plural=f"{str(job.get('kind')).lower()}s",
            phase=phase,
            reason=reason,
            message=message,
            state_path="status.conditions",
            log_selector=selector,
            log_container=str(pod[0].get("name") or ""),
            log_label=f"{rtype.lower()}-0" if rtype != REPLICA_LAUNCHER else "launcher",
            name_max=NAME_MAX - max((len(s) for s in suffixes), default=0),
        )


def dialect(target: Target) -> Dialect:
    """The training-operator dialect (one operator version: ``target`` only carries the Kueue version)."""
    return TrainingOperatorDialect(target)


def lower_object(plan: JobPlan) -> Any:
    """The PyTorchJob, JAXJob or MPIJob of one job."""
    framework = plan.resolved.framework
    if framework in (Framework.DEEPSPEED, Framework.MPI):
        from trainspec.compiler.lower.training_operator.mpijob import mpijob

        return mpijob(plan)
    from trainspec.compiler.lower.training_operator.pytorchjob import jaxjob, pytorchjob

    return jaxjob(plan) if framework is Framework.JAX else pytorchjob(plan)


def object_sources(plan: JobPlan, obj: Any) -> FieldSources:
    """What lowering set in the job object, field by field, and from which spec field."""

    resolved = plan.resolved
    job, runtime = resolved.loaded, resolved.runtime.loaded

    def at(*path: str) -> SpecRef:
        return SpecRef(job, path)

    sources = metadata_sources(job)
    for path, ref in (
        (("spec", "runPolicy"), SpecRef(runtime, ("spec", "restarts"))),
        (("spec", "runPolicy", "suspend"), at("spec", "queue")),
        (("spec", "runPolicy", "activeDeadlineSeconds"), at("spec", "maxRunTime")),
        (("spec", "runPolicy", "schedulingPolicy"), SpecRef(runtime, ("spec", "gang"))),
        (("spec", "elasticPolicy"), at("spec", "nodes")),
        (("spec", "slotsPerWorker"), resolved.procs_per_node.ref),
        (("spec", "sshAuthMountPath"), SpecRef(runtime, ("spec", "mpi", "sshAuthMountPath"))),
        (("spec", "runLauncherAsWorker"), SpecRef(runtime, ("spec", "mpi", "runLauncherAsNode"))),
    ):
        sources.set(path, ref)
    sources.set(("spec", "nprocPerNode"), resolved.procs_per_node)
    by_kind: dict[str, Callable[[], tuple[str, Any]]] = {
        "PyTorchJob": lambda: ("pytorchReplicaSpecs", obj.spec.pytorch_replica_specs),
        "JAXJob": lambda: ("jaxReplicaSpecs", obj.spec.jax_replica_specs),
        "MPIJob": lambda: ("mpiReplicaSpecs", obj.spec.mpi_replica_specs),
    }
    field, replicas = by_kind[obj.kind]()
    for rtype in replicas:
        _record_replica(sources, ("spec", field, rtype), plan, at)
    return sources


def _record_replica(sources: FieldSources, base: tuple, plan: JobPlan, at: Any) -> None:
    resolved = plan.resolved
    pod = (*base, "template")
    container = (*pod, "spec", "containers", 0)
    sources.set(base, at("spec", "runtime"))
    sources.set((*base, "replicas"), resolved.nodes)
    sources.set((*pod, "metadata", "labels"), at("spec", "podLabels"))
    sources.set((*pod, "metadata", "annotations"), at("spec", "podAnnotations"))
    sources.set((*pod, "spec", "volumes"), at("spec", "checkpoint"))
    sources.set((*container, "image"), resolved.image)
    sources.set((*container, "command"), resolved.command)
    sources.set((*container, "args"), at("spec", "args"))
    sources.set((*container, "env"), at("spec", "env"))
    sources.set((*container, "volumeMounts"), at("spec", "checkpoint"))
    job_resources = [v for v in resolved.resources.values() if v.origin is Origin.JOB]
    sources.set(
        (*container, "resources"),
        job_resources[0] if job_resources else SpecRef(resolved.runtime.loaded, ("spec", "resourcesPerNode")),
    )
