"""Lowering dialects: the interface every engine implements, and how the compiler finds one.

As a SQL dialect chooses its generator, a :class:`Dialect` chooses the objects an engine gets,
adds the rules only that engine has, and answers every question the rest of trainspec has
about the engine (its name budget, restart field, rank-0 pod, what the cluster commands and
the Kubeflow Pipelines step do with its jobs). Everything before lowering (load, resolve, plan,
the target-independent rules) is the same for every engine; where a rule depends on the engine,
it asks the dialect.

One folder per engine, each with a ``dialect.py`` that defines ``dialect(target)``:

* :mod:`trainspec.compiler.lower.trainer`: Kubeflow Trainer 2.1, 2.2 and 2.3 (TrainJobs on
  (Cluster)TrainingRuntimes; 2.1 gets ``podTemplateOverrides``);
* :mod:`trainspec.compiler.lower.ray`: KubeRay 1.7 RayJobs;
* :mod:`trainspec.compiler.lower.training_operator`: Training Operator 1.9 and mpi-operator 0.8.

The registry of engines is :mod:`trainspec.compiler.engines`. Pod parts every engine builds
the same way are in :mod:`trainspec.compiler.lower.pod`; every lowered object carries its
:class:`~trainspec.compiler.provenance.FieldSources`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from trainspec.compiler.engines import DIALECT_MODULES, Engine, engine_named
from trainspec.compiler.provenance import FieldSources, SpecRef
from trainspec.dsl.errors import TrainspecError
from trainspec.dsl.record import TupleRecord

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.targets import Target
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.dsl.load.loaded import LoadedSpec


class Lowered(TupleRecord):
    """One emitted object and where each of its fields came from."""

    obj: Any  # a trainspec.k8s resource
    sources: FieldSources


class Budget(TupleRecord):
    """How long a job's name may be (:meth:`Dialect.name_budget`), and the longest derived name
    that sets the limit, as the TS401 message shows it."""

    max_length: int
    reason: str


class LaunchFacts(TupleRecord):
    """What a launcher needs to know of one job object it applied (:meth:`Dialect.launch_facts`).

    Read from the object alone (the launcher has no plan): its REST plural, its state as trainspec
    names it, where that state is, the pod whose log stands for the job, and the longest name the
    object may have so the names its controller derives from it fit.
    """

    #: The object's API group and resource name in the REST API (``trainjobs``, ``rayjobs``,
    #: ``pytorchjobs``): what the launcher's RBAC grants.
    api_group: str
    plural: str
    #: ``Created``, ``Suspended``, ``Running``, ``Complete`` or ``Failed``; the last two are final.
    phase: str
    reason: str
    message: str
    #: Where the object keeps its state, for messages and docs (``status.conditions``).
    state_path: str
    #: The labels of the pod whose log is the job's (its rank 0, or Ray's job submitter), and
    #: that pod's container and the prefix of its lines in the launcher's log.
    log_selector: dict[str, str]
    log_container: str
    log_label: str
    #: The longest name the object may have (its controller derives pod and object names from it).
    name_max: int

    @property
    def done(self) -> bool:
        """Whether the job has finished, either way."""
        return self.phase in ("Complete", "Failed")


class LoweringError(TrainspecError):
    """A spec feature the target cannot express: carries the located diagnostic."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class Dialect(Protocol):
    """What one engine is to the compiler and to the commands that act on its jobs."""

    #: The engine this dialect lowers for.
    name: Engine
    #: The versions it emits for (the Trainer dialect serves 2.1 to 2.3).
    target: Target
    #: Whether runtimes become objects of their own (Trainer's (Cluster)TrainingRuntime); the
    #: other engines fold the runtime into each job's object.
    emits_runtimes: bool
    #: The kinds of the job objects it emits (a checkpoint PVC may come before them).
    job_kinds: tuple[str, ...]
    #: Whether a job may run on a node range (``nodes: {min, max}``).
    elastic: bool
    #: Whether it runs the data-sharding stage (``spec.data``) before the trainers.
    sharding_stage: bool
    #: Whether its jobs have a Ray head, which ``spec.ray`` sizes.
    ray_head: bool
    #: Where the emitted object keeps the runtime's restart budget (``explain`` shows it).
    restarts_field: str
    #: Whether ``submit``/``status``/``logs``/``cancel`` handle its jobs.
    cluster_commands: bool
    #: Whether a job can be a Kubeflow Pipelines step (``trainspec kfp``).
    kfp_step: bool
    #: Whether ``run --local`` can play its controller.
    local_run: bool

    def runtime_rules(self, loaded: LoadedSpec) -> list[Diagnostic]:
        """What the engine cannot run or enforce of a Runtime it emits (TS521, TS522)."""
        ...

    def job_rules(self, plan: JobPlan) -> list[Diagnostic]:
        """What the engine cannot express of a job (TS521) and what its controllers would refuse."""
        ...

    def lower_runtime(self, loaded: LoadedSpec, used_by: SpecRef | None = None) -> list[Lowered]:
        """The objects of a Runtime spec (none when ``emits_runtimes`` is False)."""
        ...

    def lower_job(self, plan: JobPlan) -> list[Lowered]:
        """A job's objects in apply order: its checkpoint PVC (if trainspec creates one), its job object."""
        ...

    def name_budget(self, plan: JobPlan) -> Budget:
        """How long the job's name may be so every name the engine derives from it fits (TS401),
        with the longest of those names as the reason."""
        ...

    def rank_zero_selector(self, plan: JobPlan) -> tuple[dict[str, str], bool]:
        """``(matchLabels, exact)``: the labels that select the job's rank-0 pod, and whether they
        select only that pod (else every trainer pod of the job)."""
        ...

    def launch_facts(self, job: Mapping[str, Any]) -> LaunchFacts:
        """How the Kubeflow Pipelines launcher watches ``job``, one of :attr:`job_kinds` as the API
        server returns it (or as compiled, before it exists): its state now, its log pod, its name
        limit. Pure: the launcher calls it on every poll."""
        ...


def dialect_for_kind(kind: str) -> Dialect | None:
    """The dialect (default versions) whose jobs are objects of ``kind``; None for another kind."""
    for engine in DIALECT_MODULES:
        found = dialect_for(engine=engine)
        if kind in found.job_kinds:
            return found
    return None


def dialect_for(target: Target | None = None, engine: Engine | str | None = None) -> Dialect:
    """The dialect of ``engine`` (default: the target's own) for the versions of ``target``.

    ``target`` None: the default versions, for what does not depend on them (the facts of
    :class:`Dialect`, the name budget, the rank-0 selector).
    """
    import importlib

    from trainspec.compiler.targets import Target

    target = target if target is not None else Target()
    module = importlib.import_module(DIALECT_MODULES[engine_named(engine or target.engine)])
    found: Dialect = module.dialect(target)
    return found


__all__ = ["Budget", "Dialect", "LaunchFacts", "Lowered", "LoweringError", "dialect_for", "dialect_for_kind"]
