"""The ray target's rules: what a RayJob cannot express, and what KubeRay and Kueue refuse.

They run in the ``rules`` pass (``RayDialect.job_rules``), so ``validate`` reports exactly what
``compile`` does.

* **TS521**: a spec feature the ray target cannot express (named in the message): the MPI
  framework and MPI settings, gang schedulers other than Kueue, the data-sharding stage, a
  runtime's initializers, a job without a command.
* **TS530**: Kueue's RayJob rules (``pkg/controller/jobs/rayjob``, ``raycluster``), checked on
  the lowered object for a queued job: a cluster spec and no ``clusterSelector``,
  ``shutdownAfterJobFinishes: true``, no in-tree autoscaling, no worker group named ``head``,
  and the PodSets (head, one per worker group, the submitter in K8sJobMode) within the
  Workload's limit of the target's Kueue version (8 up to 0.17, 10 in 0.18, 18 from 0.19).
* TS301, TS303 in their usual meaning, for what only the ray target has: a single-node job's
  checkpoint volume is still mounted by two pods (head and worker); the ``TRAINSPEC_*``
  variables of the ray contract. KubeRay's 47-character RayJob names are the dialect's name
  budget (TS401 of the target-independent rules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainspec.compiler.lower.ray.ray_job import entrypoint, rayjob
from trainspec.compiler.plan import CheckpointKind, JobPlan
from trainspec.compiler.resolve import related_at
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.spec.models import AccessMode, Framework, Gang
from trainspec.k8s.wellknown import (
    KUEUE_MAX_PODSETS,
    RAY_DEFAULT_SUBMISSION_MODE,
    RAY_ENV,
    RAY_HEAD_PODSET,
)

if TYPE_CHECKING:
    from trainspec.compiler.targets import Target, Version
    from trainspec.k8s.ray import RayJob

TARGET = "target ray (KubeRay RayJob)"
OTHER_TARGETS = "target trainer or training-operator"


def max_podsets(kueue: Version) -> int:
    """How many PodSets a Workload may hold in Kueue ``kueue`` (its spec.podSets maxItems)."""
    limit = KUEUE_MAX_PODSETS[0][2]
    for major, minor, most in KUEUE_MAX_PODSETS:
        if kueue >= (major, minor):
            limit = most
    return limit


def job_problems(plan: JobPlan, target: Target) -> list[Diagnostic]:
    """Every ray-target finding for one planned job, located at the spec lines to change."""
    out = [*_unexpressible(plan), *_contract_env(plan), *_checkpoint(plan)]
    if (
        target.kueue is not None
        and plan.resolved.job.spec.queue
        and not any(d.code == codes.TARGET_UNSUPPORTED for d in out)
    ):
        for path, message in kueue_problems(rayjob(plan), target.kueue):
            out.append(
                plan.resolved.loaded.diagnostic(
                    codes.KUEUE_RAYJOB_RULE,
                    ("spec", "queue"),
                    f"Kueue would reject the RayJob: {path}: {message}",
                    hint="this is a trainspec bug if the spec did not ask for it; please report it",
                )
            )
    return out


def _runtime_diag(plan: JobPlan, path: tuple, message: str, hint: str) -> Diagnostic:
    """At the runtime's line when it is an input spec; a built-in's at the job's ``spec.runtime``."""
    entry = plan.resolved.runtime
    if entry.builtin or entry.external:
        return plan.resolved.loaded.diagnostic(
            codes.TARGET_UNSUPPORTED, ("spec", "runtime"), f"runtime {entry.name}: {message}", hint=hint
        )
    related = (related_at(plan.resolved.loaded, ("spec", "runtime"), f"job {plan.resolved.name} uses it"),)
    return entry.loaded.diagnostic(codes.TARGET_UNSUPPORTED, path, message, hint=hint, related=related)


def _unexpressible(plan: JobPlan) -> list[Diagnostic]:
    resolved = plan.resolved
    runtime = resolved.runtime.spec.spec
    job = resolved.job.spec
    out: list[Diagnostic] = []
    if runtime.framework is Framework.MPI:
        out.append(
            _runtime_diag(
                plan,
                ("spec", "framework"),
                f"framework mpi cannot run on {TARGET}: Ray Train has no MPI launcher",
                f"use {OTHER_TARGETS} (MPIJob) for MPI programs",
            )
        )
    elif runtime.mpi is not None:
        out.append(
            _runtime_diag(
                plan,
                ("spec", "mpi"),
                f"spec.mpi (SSH workers, an mpirun launcher) cannot be expressed on {TARGET}: "
                "Ray Train runs DeepSpeed over torch.distributed in its TorchTrainer",
                "drop spec.mpi from a runtime meant for Ray, or use another target",
            )
        )
    if runtime.gang in (Gang.COSCHEDULING, Gang.VOLCANO):
        out.append(
            _runtime_diag(
                plan,
                ("spec", "gang"),
                f"gang: {runtime.gang.value} cannot be expressed on {TARGET}: KubeRay's gang "
                "scheduling is chosen by the operator's --batch-scheduler flag, not by the RayJob",
                "use gang: kueue (Kueue admits the head and workers together) or gang: none",
            )
        )
    if resolved.runtime.initializers:
        out.append(
            resolved.loaded.diagnostic(
                codes.TARGET_UNSUPPORTED,
                ("spec", "runtime"),
                f"runtime {resolved.runtime.name} runs {', '.join(resolved.runtime.initializers)} before training, "
                f"which {TARGET} cannot express",
                hint="use a Runtime of your own with engine: ray",
            )
        )
    if job.data is not None:
        out.append(
            resolved.loaded.diagnostic(
                codes.TARGET_UNSUPPORTED,
                ("spec", "data"),
                f"the data-sharding stage cannot be expressed on {TARGET}: Ray has no initializer step",
                hint="read the dataset with Ray Data in the training script (ray.data.read_*(...), passed as "
                "datasets= to the trainer): Ray Data splits it across the workers itself",
            )
        )
    if entrypoint(plan) is None:
        out.append(
            resolved.loaded.diagnostic(
                codes.TARGET_UNSUPPORTED,
                ("spec",),
                f"the job has no command: {TARGET} submits one (the RayJob's entrypoint), it cannot run the "
                "image's own",
                hint="set spec.command, e.g. [python, train.py]",
            )
        )
    return out


def _contract_env(plan: JobPlan) -> list[Diagnostic]:
    resolved = plan.resolved
    fields = (("env", resolved.job.spec.env), ("secretEnv", resolved.job.spec.secret_env))
    return [
        resolved.loaded.diagnostic(
            codes.RESERVED_ENV,
            ("spec", field, name),
            f"{name} is set by trainspec on {TARGET} (the in-pod contract trainspec.stages.ray reads)",
            hint="remove it; trainspec derives it from nodes, procsPerNode and resourcesPerNode",
            at_key=True,
        )
        for field, values in fields
        for name in values
        if name in RAY_ENV
    ]


def _checkpoint(plan: JobPlan) -> list[Diagnostic]:
    """A single-node job still mounts its checkpoint volume twice: head (the driver) and worker."""
    ckpt, spec = plan.checkpoint, plan.resolved.job.spec.checkpoint  # the plan's comes from the spec's
    nodes = plan.resolved.nodes.value
    if ckpt is None or spec is None or ckpt.kind is CheckpointKind.URI or (isinstance(nodes, int) and nodes > 1):
        return []  # nodes > 1 on a ReadWriteOnce volume is the target-independent TS301
    mode = spec.access_mode if ckpt.kind is CheckpointKind.VOLUME else spec.claim_access_mode
    if mode not in (AccessMode.READ_WRITE_ONCE, AccessMode.READ_WRITE_ONCE_POD):
        return []
    field = "accessMode" if ckpt.kind is CheckpointKind.VOLUME else "claimAccessMode"
    return [
        plan.resolved.loaded.diagnostic(
            codes.RWO_MULTI_NODE,
            ("spec", "checkpoint", field),
            f"on {TARGET} the head (Ray Train's controller) and the worker pods all mount the checkpoint volume, "
            f"but it is {mode.value}: pods on different nodes cannot share it",
            severity=Severity.ERROR if mode is AccessMode.READ_WRITE_ONCE_POD else Severity.WARNING,
            hint="use ReadWriteMany storage, or checkpoint.uri for object storage",
        )
    ]


def kueue_problems(job: RayJob | dict[str, Any], kueue: Version) -> list[tuple[str, str]]:
    """(field path, message) for each rule of Kueue's RayJob webhook that ``job`` breaks.

    ``job`` is a lowered RayJob or a manifest dict (so the checker and ``migrate`` can reuse it).
    """
    from trainspec.k8s import to_dict

    body = job if isinstance(job, dict) else to_dict(job)
    spec = body.get("spec") or {}
    cluster = spec.get("rayClusterSpec")
    out: list[tuple[str, str]] = []
    if spec.get("clusterSelector") and cluster is not None:
        return [
            (
                "spec.clusterSelector",
                ("a Kueue-managed job must not use an existing cluster (clusterSelector together with rayClusterSpec)"),
            )
        ]
    if cluster is None:
        return [] if spec.get("clusterSelector") else [("spec.rayClusterSpec", "required for Kueue-managed jobs")]
    if spec.get("shutdownAfterJobFinishes") is not True:
        out.append(("spec.shutdownAfterJobFinishes", "must be true: a finished cluster would keep its quota"))
    if cluster.get("enableInTreeAutoscaling"):
        out.append(
            (
                "spec.rayClusterSpec.enableInTreeAutoscaling",
                "no autoscaling for Kueue-managed jobs (unless workload slicing is enabled)",
            )
        )
    groups = cluster.get("workerGroupSpecs") or []
    for index, group in enumerate(groups):
        if group.get("groupName") == RAY_HEAD_PODSET:
            out.append(
                (
                    f"spec.rayClusterSpec.workerGroupSpecs[{index}].groupName",
                    f"{RAY_HEAD_PODSET!r} is reserved for the head group",
                )
            )
    submitter = (spec.get("submissionMode") or RAY_DEFAULT_SUBMISSION_MODE) == RAY_DEFAULT_SUBMISSION_MODE
    podsets = 1 + len(groups) + (1 if submitter else 0)
    limit = max_podsets(kueue)
    if podsets > limit:
        parts = f"head, {len(groups)} worker group(s)" + (" and the submitter Job (K8sJobMode)" if submitter else "")
        out.append(
            (
                "spec.rayClusterSpec.workerGroupSpecs",
                f"{podsets} PodSets ({parts}); a Workload of Kueue {kueue[0]}.{kueue[1]} holds at most {limit}",
            )
        )
    return out


__all__ = ["job_problems", "kueue_problems", "max_podsets"]
