"""The trainer engine's dialect: Kubeflow Trainer 2.1, 2.2 and 2.3.

Trainer 2.2 and 2.3 get the same objects (``runtimePatches``; the compiler writes the fully
merged per-node resources that 2.2 replaces and 2.3 merges). Trainer 2.1 gets
``podTemplateOverrides`` (:mod:`.trainer_v21`) and refuses, with a located diagnostic, what it
cannot express (TS521) or enforce (TS522).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainspec.compiler.engines import Engine
from trainspec.compiler.lower.dialects import Dialect, LaunchFacts, Lowered, LoweringError
from trainspec.compiler.lower.labels import JOB_LABEL
from trainspec.dsl import codes
from trainspec.k8s.wellknown import (
    COMPLETION_INDEX_LABEL,
    DATASET_INITIALIZER,
    JOB_INDEX_LABEL,
    JOBSET_NAME_LABEL,
    MODEL_INITIALIZER,
    NAME_MAX,
    NODE,
    REPLICATED_JOB_LABEL,
    SHARD_VOLUME,
    TRAINER_GROUP,
)

if TYPE_CHECKING:
    from trainspec.compiler.lower.dialects import Budget
    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.provenance import SpecRef
    from trainspec.compiler.targets import Target
    from trainspec.dsl.diagnostics import Diagnostic
    from trainspec.dsl.load.loaded import LoadedSpec


class TrainerDialect:
    """TrainJobs on (Cluster)TrainingRuntimes; ``podTemplateOverrides`` when the target is Trainer 2.1."""

    name = Engine.TRAINER
    emits_runtimes = True
    job_kinds: tuple[str, ...] = ("TrainJob",)
    elastic = False  # TrainJobs run a fixed numNodes (elastic torchrun is KEP-2903, still open)
    sharding_stage = True
    ray_head = False
    restarts_field = "JobSet failurePolicy.maxRestarts"
    cluster_commands = True
    kfp_step = True
    local_run = True

    def __init__(self, target: Target) -> None:
        self.target = target

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.target})"

    # -- rules: what Trainer 2.1 cannot run or enforce ----------------------------------------------

    def runtime_rules(self, loaded: LoadedSpec) -> list[Diagnostic]:
        """TS521/TS522 of a runtime on Trainer 2.1; nothing on 2.2 and later."""
        if self.target.runtime_patches:
            return []
        from trainspec.compiler.lower.trainer.trainer_v21 import runtime_problems

        return runtime_problems(loaded)

    def job_rules(self, plan: JobPlan) -> list[Diagnostic]:
        """TS521/TS522 of a job on Trainer 2.1; nothing on 2.2 and later."""
        if self.target.runtime_patches:
            return []
        from trainspec.compiler.lower.trainer.trainer_v21 import job_problems

        return job_problems(plan, self.target)

    # -- lowering -----------------------------------------------------------------------------------

    def lower_runtime(self, loaded: LoadedSpec, used_by: SpecRef | None = None) -> list[Lowered]:
        """The runtime objects of a Runtime spec (the base one and, with dataSharding, ``-sharded``)."""
        from trainspec.compiler.lower.trainer.runtime import lower_runtime, runtime_sources

        return [Lowered(obj, runtime_sources(loaded, used_by)) for obj in lower_runtime(loaded.spec)]

    def lower_job(self, plan: JobPlan) -> list[Lowered]:
        """A job's objects in apply order: its checkpoint PVC (if trainspec creates one), its TrainJob."""
        from trainspec.compiler.lower.trainer.trainjob import job_sources, lower_job

        lowered = [Lowered(obj, job_sources(plan, obj)) for obj in lower_job(plan)]
        return lowered if self.target.runtime_patches else [_as_v21(plan, item) for item in lowered]

    # -- what the rest of trainspec asks ------------------------------------------------------------

    def name_budget(self, plan: JobPlan) -> Budget:
        """JobSet's pod names ``<name>-<rjob>-<replica>-<pod>-xxxxx`` and the shard volume's name."""
        from trainspec.compiler.lower.trainer.name_budget import name_budget

        return name_budget(plan)

    def rank_zero_selector(self, plan: JobPlan) -> tuple[dict[str, str], bool]:
        """Torch and JAX: rank 0 runs in ``node`` Job 0, completion index 0 (JobSet's and the Job
        controller's labels); MPI ranks are placed by mpirun, so every trainer pod of the job."""
        from trainspec.dsl.spec.models import Framework

        base = {JOB_LABEL: plan.resolved.name}
        if plan.resolved.framework in (Framework.TORCH, Framework.JAX):
            return {**base, REPLICATED_JOB_LABEL: NODE, JOB_INDEX_LABEL: "0", COMPLETION_INDEX_LABEL: "0"}, True
        return base, False

    def launch_facts(self, job: Mapping[str, Any]) -> LaunchFacts:
        """A TrainJob's phase from its conditions' *status* (after a resume the last condition is
        ``Suspended=False``), node-0's pod (JobSet's labels), and JobSet's pod-name budget."""
        meta, spec = job.get("metadata") or {}, job.get("spec") or {}
        status = job.get("status") or {}
        true = {c.get("type"): c for c in status.get("conditions") or [] if c.get("status") == "True"}
        phase, reason, message = "Created", "", ""
        for final in ("Failed", "Complete", "Suspended"):
            if final in true:
                phase, reason, message = (
                    final,
                    str(true[final].get("reason") or ""),
                    str(true[final].get("message") or ""),
                )
                break
        else:
            if any((j.get("active") or 0) + (j.get("ready") or 0) > 0 for j in status.get("jobsStatus") or []):
                phase = "Running"
        name = str(meta.get("name") or "")
        return LaunchFacts(
            api_group=TRAINER_GROUP,
            plural="trainjobs",
            phase=phase,
            reason=reason,
            message=message,
            state_path="status.conditions",
            log_selector={JOBSET_NAME_LABEL: name, REPLICATED_JOB_LABEL: NODE, COMPLETION_INDEX_LABEL: "0"},
            log_container=NODE,
            log_label="node-0",
            name_max=_trainjob_name_max(spec),
        )


def _trainjob_name_max(spec: Mapping[str, Any]) -> int:
    """The longest TrainJob name whose JobSet pod names (``<trainjob>-<rjob>-<replica>-<pod>-xxxxx``)
    and shared-volume claim fit in 63 characters, from the TrainJob alone: the trainer rjob with
    ``numNodes`` pods, the initializer rjobs it feeds, and JobSet's ``<volume>-<jobset>`` claim."""
    from trainspec.compiler.lower.trainer.name_budget import pod_suffix

    nodes = int((spec.get("trainer") or {}).get("numNodes") or 1)
    suffixes = [pod_suffix(NODE, 1, nodes)]
    initializer = spec.get("initializer") or {}
    if initializer.get("dataset") is not None:
        suffixes.append(pod_suffix(DATASET_INITIALIZER, 1, 1))
    if initializer.get("model") is not None:
        suffixes.append(pod_suffix(MODEL_INITIALIZER, 1, 1))
    budget = min(NAME_MAX - len(s) for s in suffixes)
    return min(budget, NAME_MAX - len(f"{SHARD_VOLUME}-")) if initializer else budget


def _as_v21(plan: JobPlan, lowered: Lowered) -> Lowered:
    """The TrainJob in Trainer 2.1's shape; a patch 2.1 has no field for is refused, not dropped."""
    from trainspec.compiler.lower.trainer.trainer_v21 import trainjob_v21
    from trainspec.k8s import TrainJob

    if not isinstance(lowered.obj, TrainJob):
        return lowered
    try:
        return Lowered(trainjob_v21(lowered.obj), lowered.sources)
    except ValueError as exc:
        raise LoweringError(
            plan.resolved.loaded.diagnostic(
                codes.TARGET_UNSUPPORTED, (), f"cannot emit for Trainer 2.1: {exc}", hint="target trainer=2.2 or later"
            )
        ) from None


def dialect(target: Target) -> Dialect:
    """The trainer dialect for ``target``'s Trainer version."""
    return TrainerDialect(target)


__all__ = ["TrainerDialect", "dialect"]
