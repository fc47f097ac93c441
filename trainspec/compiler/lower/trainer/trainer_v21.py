"""The Trainer 2.1 dialect: TrainJobs with ``podTemplateOverrides`` instead of ``runtimePatches``.

Trainer 2.1 predates ``runtimePatches`` (2.2): pod patches become ``podTemplateOverrides`` (one
entry per distinct pod patch, aimed by ``targetJobs``), JobSet-level patch metadata becomes
``spec.labels``/``annotations``, and ``activeDeadlineSeconds`` does not exist (TS522: Trainer 2.1
cannot enforce maxRunTime; Kueue's max-exec-time label stays). JAX (``mlPolicy.jax``) and data
sharding (JobSet ``volumeClaimPolicies``) need 2.2 (TS521). Anything else 2.1 cannot express is a
TS521 at the job, never a silent drop.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.k8s.wellknown import KUEUE_PATCH_MANAGER as _KUEUE_MANAGER

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.targets import Target
    from trainspec.dsl.load.loaded import LoadedSpec
    from trainspec.k8s import TrainJob
    from trainspec.k8s.legacy import TrainJobV21


def runtime_problems(loaded: LoadedSpec) -> list[Diagnostic]:
    """What a runtime asks for that Trainer 2.1 cannot run (TS521)."""
    from trainspec.dsl.spec.models import Framework

    out: list[Diagnostic] = []
    if loaded.spec.spec.framework is Framework.JAX:
        out.append(
            loaded.diagnostic(
                codes.TARGET_UNSUPPORTED,
                ("spec", "framework"),
                "framework jax needs Trainer 2.2+ (mlPolicy.jax); Trainer 2.1 has no JAX runtime support",
            )
        )
    if loaded.spec.spec.data_sharding is not None:
        out.append(
            loaded.diagnostic(
                codes.TARGET_UNSUPPORTED,
                ("spec", "dataSharding"),
                "dataSharding needs Trainer 2.2+: the "
                "shard volume is a JobSet volumeClaimPolicy (JobSet 0.11, Trainer 2.2)",
            )
        )
    return out


def job_problems(plan: JobPlan, target: Target) -> list[Diagnostic]:
    """What a job asks for that Trainer 2.1 cannot run (TS521) or enforce (TS522), at its lines."""
    from trainspec.dsl.spec.models import Framework

    out: list[Diagnostic] = []
    job = plan.resolved.loaded
    # An input runtime says so itself (runtime_problems); a built-in or a cluster's runtime cannot.
    if (plan.resolved.runtime.builtin or plan.resolved.runtime.external) and plan.resolved.framework is Framework.JAX:
        out.append(
            job.diagnostic(
                codes.TARGET_UNSUPPORTED,
                ("spec", "runtime"),
                f"runtime {plan.runtime_name} is a JAX runtime (mlPolicy.jax), which needs Trainer 2.2+",
            )
        )
    if plan.data is not None:
        out.append(
            job.diagnostic(
                codes.TARGET_UNSUPPORTED,
                ("spec", "data"),
                "data sharding needs Trainer 2.2+: the shard "
                "volume is a JobSet volumeClaimPolicy (JobSet 0.11, Trainer 2.2)",
            )
        )
    max_run_time = plan.resolved.job.spec.max_run_time
    if max_run_time is not None:
        by_kueue = (
            "; Kueue still deactivates the Workload after it (kueue.x-k8s.io/max-exec-time-seconds)"
            if target.kueue is not None
            else "; without Kueue nothing enforces it"
        )
        out.append(
            job.diagnostic(
                codes.MAX_RUN_TIME_UNENFORCED,
                ("spec", "maxRunTime"),
                "maxRunTime cannot be enforced by Trainer 2.1 (no activeDeadlineSeconds before 2.2)" + by_kueue,
                severity=Severity.WARNING,
            )
        )
    return out


def trainjob_v21(job: TrainJob) -> TrainJobV21:
    """The v2.1 form of a compiled TrainJob; raise ValueError for what v2.1 cannot express."""
    from trainspec.k8s.legacy import TrainerV21, TrainJobSpecV21, TrainJobV21

    spec = job.spec
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    overrides: list[Any] = []
    for patch in spec.runtime_patches or []:
        if patch.manager == _KUEUE_MANAGER or patch.training_runtime_spec is None:
            continue
        template = patch.training_runtime_spec.template
        if template is None:
            continue
        if template.metadata is not None:  # JobSet-level metadata: v2.1 spec.labels/annotations
            labels.update(template.metadata.labels or {})
            annotations.update(template.metadata.annotations or {})
        overrides.extend(_override(rjob) for rjob in (template.spec.replicated_jobs if template.spec else None) or [])
    trainer = spec.trainer
    return TrainJobV21(
        metadata=job.metadata,
        spec=TrainJobSpecV21(
            runtime_ref=spec.runtime_ref,
            initializer=spec.initializer,
            trainer=TrainerV21(
                image=trainer.image,
                command=trainer.command,
                args=trainer.args,
                env=trainer.env,
                num_nodes=trainer.num_nodes,
                resources_per_node=trainer.resources_per_node,
                num_proc_per_node=trainer.num_proc_per_node,
            )
            if trainer
            else None,
            labels=labels or None,
            annotations=annotations or None,
            pod_template_overrides=_merge_targets(overrides) or None,
            suspend=spec.suspend,
            managed_by=spec.managed_by,
        ),
    )


def _override(rjob: Any) -> Any:
    from trainspec.k8s.legacy import (
        ContainerOverride,
        PodTemplateOverride,
        PodTemplateOverrideSpec,
        PodTemplateOverrideTargetJob as TargetJob,
    )

    template = rjob.template
    if template is not None and template.metadata is not None:
        raise ValueError(f"Job-level metadata of replicatedJob {rjob.name} has no Trainer 2.1 equivalent")
    pod = template.spec.template if template is not None and template.spec is not None else None
    patch = pod.spec if pod is not None else None
    if patch is not None and (patch.security_context is not None or patch.termination_grace_period_seconds is not None):
        raise ValueError("pod securityContext/terminationGracePeriodSeconds patches need Trainer 2.2+")

    def containers(items: Any) -> Any:
        if not items:
            return None
        if any(c.security_context is not None for c in items):
            raise ValueError("container securityContext patches need Trainer 2.2+")
        return [ContainerOverride(name=c.name, env=c.env, volume_mounts=c.volume_mounts) for c in items]

    override_spec = None
    if patch is not None:
        override_spec = PodTemplateOverrideSpec(
            service_account_name=patch.service_account_name,
            node_selector=patch.node_selector,
            affinity=patch.affinity,
            tolerations=patch.tolerations,
            volumes=patch.volumes,
            init_containers=containers(patch.init_containers),
            containers=containers(patch.containers),
            scheduling_gates=patch.scheduling_gates,
            image_pull_secrets=patch.image_pull_secrets,
        )
    return PodTemplateOverride(
        target_jobs=[TargetJob(name=rjob.name)], metadata=pod.metadata if pod is not None else None, spec=override_spec
    )


def _merge_targets(overrides: list[Any]) -> list[Any]:
    """One override per distinct (metadata, spec), aimed at every job that gets it, in first-seen order."""
    merged: list[Any] = []
    for override in overrides:
        same = next((m for m in merged if m.metadata == override.metadata and m.spec == override.spec), None)
        if same is None:
            merged.append(override)
        else:
            merged[merged.index(same)] = replace(same, target_jobs=[*same.target_jobs, *override.target_jobs])
    return merged


__all__ = ["job_problems", "runtime_problems", "trainjob_v21"]
