"""The ray target: KubeRay 1.7 ``RayJob`` objects that run Ray Train.

``--target ray`` (or ``engine=ray``), a project file's ``spec.target.engine: ray``, or a
Runtime's ``spec.engine: ray`` select it. The runtime never becomes an object of its own: it
folds into each job's RayJob (:mod:`trainspec.compiler.lower.ray_job`); what a RayJob cannot
express and what Kueue's RayJob integration refuses are diagnostics of the rules pass
(:mod:`trainspec.compiler.lower.ray_rules`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainspec.compiler.lower.dialects import Lowered, TrainerDialect

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.provenance import SpecRef
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.dsl.sources import LoadedSpec


class RayDialect(TrainerDialect):
    """KubeRay ``ray.io/v1`` RayJobs (KubeRay 1.7): one per job, with its checkpoint PVC before it."""

    name = "ray"
    emits_runtimes = False

    def runtime_rules(self, loaded: LoadedSpec) -> list[Diagnostic]:
        # Runtimes fold into jobs: their findings are reported at each job that uses them.
        return []

    def job_rules(self, plan: JobPlan) -> list[Diagnostic]:
        from trainspec.compiler.lower.ray_rules import job_problems

        return job_problems(plan, self.target)

    def lower_runtime(self, loaded: LoadedSpec, used_by: SpecRef | None = None) -> list[Lowered]:
        return []

    def lower_job(self, plan: JobPlan) -> list[Lowered]:
        """The job's checkpoint PVC (if trainspec creates one), then its RayJob."""
        from trainspec.compiler.lower.ray_job import lower_job, rayjob_sources
        from trainspec.compiler.lower.trainjob import job_sources
        from trainspec.k8s.ray import RayJob

        return [
            Lowered(obj, rayjob_sources(plan, obj) if isinstance(obj, RayJob) else job_sources(plan, obj))
            for obj in lower_job(plan)
        ]


__all__ = ["RayDialect"]
