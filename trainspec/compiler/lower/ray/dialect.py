"""The ray engine's dialect: KubeRay 1.7 ``RayJob`` objects that run Ray Train.

``--target ray`` (or ``engine=ray``), a project file's ``spec.target.engine: ray``, or a
Runtime's ``spec.engine: ray`` select it. The runtime never becomes an object of its own: it
folds into each job's RayJob (:mod:`.ray_job`); what a RayJob cannot express and what Kueue's
RayJob integration refuses are diagnostics of the rules pass (:mod:`.ray_rules`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainspec.compiler.engines import Engine
from trainspec.compiler.lower.dialects import Dialect, LaunchFacts, Lowered
from trainspec.compiler.lower.labels import JOB_LABEL
from trainspec.k8s.wellknown import RAY_CLUSTER_NAME_MAX, RAY_GROUP, RAY_JOB_NAME_MAX, RAY_NODE_TYPE_LABEL

if TYPE_CHECKING:
    from trainspec.compiler.lower.dialects import Budget
    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.provenance import SpecRef
    from trainspec.compiler.targets import Target
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.dsl.load.loaded import LoadedSpec

#: The value of KubeRay's node-type label on the worker pods.
_WORKER = "worker"
#: In K8sJobMode KubeRay runs ``ray job submit`` and then follows the driver's log in a Kubernetes
#: Job named after the RayJob, in this container (unless submitterPodTemplate names another).
_SUBMITTER_CONTAINER = "ray-job-submitter"
_JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
#: jobDeploymentStatus values: final ones, and those of a job Kueue (or spec.suspend) holds.
_FINAL = ("Complete", "Failed")
_SUSPENDED = ("Suspended", "Suspending")


class RayDialect:
    """KubeRay ``ray.io/v1`` RayJobs (KubeRay 1.7): one per job, with its checkpoint PVC before it."""

    name = Engine.RAY
    emits_runtimes = False
    job_kinds: tuple[str, ...] = ("RayJob",)
    elastic = True  # a worker group scales between minReplicas and maxReplicas
    sharding_stage = False
    ray_head = True
    restarts_field = "RayJob backoffLimit"
    cluster_commands = False
    kfp_step = True
    local_run = False

    def __init__(self, target: Target) -> None:
        self.target = target

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.target})"

    def runtime_rules(self, loaded: LoadedSpec) -> list[Diagnostic]:
        """Nothing: runtimes fold into jobs, so their findings are reported at each job that uses them."""
        return []

    def job_rules(self, plan: JobPlan) -> list[Diagnostic]:
        """What a RayJob cannot express, and what KubeRay and Kueue's RayJob integration refuse."""
        from trainspec.compiler.lower.ray.ray_rules import job_problems

        return job_problems(plan, self.target)

    def lower_runtime(self, loaded: LoadedSpec, used_by: SpecRef | None = None) -> list[Lowered]:
        """Nothing: the runtime is part of each job's RayJob."""
        return []

    def lower_job(self, plan: JobPlan) -> list[Lowered]:
        """The job's checkpoint PVC (if trainspec creates one), then its RayJob."""
        from trainspec.compiler.lower.field_sources import claim_sources
        from trainspec.compiler.lower.ray.ray_job import lower_job, rayjob_sources
        from trainspec.k8s.ray import RayJob

        return [
            Lowered(obj, rayjob_sources(plan, obj) if isinstance(obj, RayJob) else claim_sources(plan))
            for obj in lower_job(plan)
        ]

    def name_budget(self, plan: JobPlan) -> Budget:
        """KubeRay's: the RayJob is ``<name>-<run>``, its RayCluster that and 6 characters more."""
        from trainspec.compiler.lower.dialects import Budget
        from trainspec.compiler.runs import suffix_length

        run = suffix_length(plan)  # the RayJob is <name>-<run id> (compiler.runs)
        named = "<name>-<run>" if run else "<name>"
        return Budget(
            RAY_JOB_NAME_MAX - run,
            f"a RayJob named {named} and its RayCluster {named}-xxxxx (KubeRay accepts at most "
            f"{RAY_JOB_NAME_MAX} and {RAY_CLUSTER_NAME_MAX} characters)",
        )

    def rank_zero_selector(self, plan: JobPlan) -> tuple[dict[str, str], bool]:
        """Ray places Ray Train's workers itself: every worker pod of the job."""
        return {JOB_LABEL: plan.resolved.name, RAY_NODE_TYPE_LABEL: _WORKER}, False

    def launch_facts(self, job: Mapping[str, Any]) -> LaunchFacts:
        """A RayJob is done when ``jobDeploymentStatus`` is Complete or Failed (a failed Ray job with
        retries left goes to Retrying, not Failed); it succeeded when ``jobStatus`` is SUCCEEDED too
        (a FAILED or STOPPED Ray job under a Complete deployment is a failure). The log is the
        submitter's, which follows the driver's."""
        status = job.get("status") or {}
        deployment, ray_status = str(status.get("jobDeploymentStatus") or ""), str(status.get("jobStatus") or "")
        reason, message = str(status.get("reason") or ""), str(status.get("message") or "")
        if deployment in _FINAL:
            phase = "Complete" if deployment == "Complete" and ray_status == "SUCCEEDED" else "Failed"
            if phase == "Failed" and not reason:
                reason = f"jobStatus {ray_status or 'unknown'}"
        elif deployment in _SUSPENDED:
            phase = "Suspended"
        else:
            phase = "Running" if deployment in ("Running", "Retrying") else "Created"
        submitter = ((job.get("spec") or {}).get("submitterPodTemplate") or {}).get("spec") or {}
        containers = submitter.get("containers") or [{}]
        return LaunchFacts(
            api_group=RAY_GROUP,
            plural="rayjobs",
            phase=phase,
            reason=reason,
            message=message,
            state_path="status.jobDeploymentStatus, status.jobStatus",
            log_selector={_JOB_NAME_LABEL: str((job.get("metadata") or {}).get("name") or "")},
            log_container=str(containers[0].get("name") or _SUBMITTER_CONTAINER),
            log_label="driver",
            name_max=RAY_JOB_NAME_MAX,
        )


def dialect(target: Target) -> Dialect:
    """The ray dialect (one KubeRay version: ``target`` only carries the Kueue version)."""
    return RayDialect(target)


__all__ = ["RayDialect", "dialect"]
