"""Lowering dialects: the target chooses how plans become Kubernetes objects.

As a SQL dialect chooses its generator, a :class:`Dialect` chooses the objects a target gets
and adds the rules only that target has. Everything before lowering (load, resolve, plan, the
target-independent rules) is the same for every target.

* :class:`TrainerDialect`: Kubeflow Trainer 2.2 and 2.3 (``runtimePatches``; both get the same
  objects, the compiler writes the fully merged per-node resources that 2.2 replaces and 2.3
  merges).
* :class:`TrainerV21Dialect`: Kubeflow Trainer 2.1 (``podTemplateOverrides``), see
  :mod:`trainspec.compiler.lower.trainer_v21`.

Every lowered object carries its :class:`~trainspec.compiler.provenance.FieldSources`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainspec.compiler.provenance import FieldSources, SpecRef
from trainspec.dsl.record import TupleRecord

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.targets import Target
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.dsl.sources import LoadedSpec


class Lowered(TupleRecord):
    """One emitted object and where each of its fields came from."""

    obj: Any  # a trainspec.k8s resource
    sources: FieldSources


class LoweringError(Exception):
    """A spec feature the target cannot express: carries the located diagnostic."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class TrainerDialect:
    """Kubeflow Trainer 2.2 / 2.3: TrainJobs with ``runtimePatches``."""

    name = "trainer"
    #: Whether runtimes become objects of their own (Trainer's (Cluster)TrainingRuntime); the
    #: other engines fold the runtime into each job's object.
    emits_runtimes = True

    def __init__(self, target: Target) -> None:
        self.target = target

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.target})"

    # -- target rules: what this target cannot run or enforce -------------------------------------

    def runtime_rules(self, loaded: LoadedSpec) -> list[Diagnostic]:
        return []

    def job_rules(self, plan: JobPlan) -> list[Diagnostic]:
        return []

    # -- lowering ---------------------------------------------------------------------------------

    def lower_runtime(self, loaded: LoadedSpec, used_by: SpecRef | None = None) -> list[Lowered]:
        """The runtime objects of a Runtime spec (the base one and, with dataSharding, ``-sharded``)."""
        from trainspec.compiler.lower.runtime import lower_runtime, runtime_sources

        return [Lowered(obj, runtime_sources(loaded, used_by)) for obj in lower_runtime(loaded.spec)]

    def lower_job(self, plan: JobPlan) -> list[Lowered]:
        """A job's objects in apply order: its checkpoint PVC (if trainspec creates one), its TrainJob."""
        from trainspec.compiler.lower.trainjob import job_sources, lower_job

        return [Lowered(obj, job_sources(plan, obj)) for obj in lower_job(plan)]


class TrainerV21Dialect(TrainerDialect):
    """Kubeflow Trainer 2.1: ``podTemplateOverrides``, no ``activeDeadlineSeconds``, no JAX or sharding."""

    def runtime_rules(self, loaded: LoadedSpec) -> list[Diagnostic]:
        from trainspec.compiler.lower.trainer_v21 import runtime_problems

        return runtime_problems(loaded)

    def job_rules(self, plan: JobPlan) -> list[Diagnostic]:
        from trainspec.compiler.lower.trainer_v21 import job_problems

        return job_problems(plan, self.target)

    def lower_job(self, plan: JobPlan) -> list[Lowered]:
        from trainspec.compiler.lower.trainer_v21 import trainjob_v21
        from trainspec.k8s import TrainJob

        out: list[Lowered] = []
        for lowered in super().lower_job(plan):
            if isinstance(lowered.obj, TrainJob):
                try:
                    lowered = Lowered(trainjob_v21(lowered.obj), lowered.sources)
                except ValueError as exc:  # a patch 2.1 has no field for: refuse rather than drop it
                    raise LoweringError(
                        plan.resolved.loaded.diagnostic(
                            "TS521", (), f"cannot emit for Trainer 2.1: {exc}", hint="target trainer=2.2 or later"
                        )
                    ) from None
            out.append(lowered)
        return out


#: Engines other than Trainer: ``module:class`` of their dialect, imported when a job needs it.
OTHER_ENGINES: dict[str, str] = {
    "ray": "trainspec.compiler.lower.ray:RayDialect",
    "training-operator": "trainspec.compiler.lower.training_operator:TrainingOperatorDialect",
}


def dialect_for(target: Target, engine: str | None = None) -> TrainerDialect:
    """The lowering dialect of ``target`` for ``engine`` (default: the target's own engine)."""
    engine = engine or target.engine
    if engine != "trainer":
        import importlib

        module, _, name = OTHER_ENGINES[engine].partition(":")
        return getattr(importlib.import_module(module), name)(target)
    return TrainerV21Dialect(target) if target.trainer < (2, 2) else TrainerDialect(target)


__all__ = ["OTHER_ENGINES", "Lowered", "LoweringError", "TrainerDialect", "TrainerV21Dialect", "dialect_for"]
