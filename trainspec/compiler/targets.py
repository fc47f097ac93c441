"""Target versions: which Kubeflow Trainer and Kueue the manifests are for.

The target comes from ``--target trainer=2.3,kueue=0.19`` (fields given there win), else the
project file's ``spec.target``, else the newest supported pair (Trainer 2.3, Kueue 0.19).

* **Trainer 2.2 and 2.3** get the same output. The 2.3 additions (runtime snapshot,
  ``torch.envInjection``, ``terminationGracePeriodSeconds`` in patches, the storageUri CEL rule,
  ``resourcesPerNode`` merged instead of replaced) are either unused by the compiler or already
  covered: the compiler writes the fully merged per-node resources.
* **Trainer 2.1** is a post-lowering transform of the typed objects: ``runtimePatches``
  become ``podTemplateOverrides`` (one entry per distinct pod patch, aimed by ``targetJobs``),
  JobSet-level patch metadata becomes ``spec.labels``/``annotations``, ``activeDeadlineSeconds``
  is dropped (TS522: Trainer 2.1 cannot enforce maxRunTime; Kueue's max-exec-time label stays).
  JAX (``mlPolicy.jax``) and data sharding (JobSet ``volumeClaimPolicies``) need 2.2 (TS521).
* **The version matrix** (TS520): Kueue 0.14 speaks the Trainer v2.0 API (podSpecOverrides),
  0.15-0.16 v2.1 (podTemplateOverrides), 0.17+ v2.2+ (runtimePatches). Trainer 2.1 with Kueue
  >= 0.17 is admitted but never started; Trainer >= 2.2 with Kueue < 0.17 likewise.

Importing this module is cheap (the argument parser uses :func:`parse_target_option`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from trainspec.dsl.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from trainspec.compiler.pipeline import CompileResult
    from trainspec.k8s import TrainJob
    from trainspec.k8s.legacy import TrainJobV21

Version = tuple[int, int]
SUPPORTED_TRAINER: tuple[Version, ...] = ((2, 1), (2, 2), (2, 3))
KNOWN_KUEUE: tuple[Version, Version] = ((0, 14), (0, 19))
DEFAULT_TRAINER: Version = (2, 3)
DEFAULT_KUEUE: Version = (0, 19)
MATRIX = ("Kueue 0.14 speaks the Trainer v2.0 API (podSpecOverrides), 0.15-0.16 the v2.1 API "
          "(podTemplateOverrides), 0.17 and later v2.2+ (runtimePatches)")
OPTION = "--target"
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")
_KUEUE_MANAGER = "kueue.x-k8s.io/manager"


def _fmt(version: Version | None) -> str:
    return "none" if version is None else f"{version[0]}.{version[1]}"


@dataclass(frozen=True)
class Target:
    """The Trainer and Kueue minor versions to emit for (``kueue`` None: no Kueue)."""

    trainer: Version = DEFAULT_TRAINER
    kueue: Version | None = DEFAULT_KUEUE

    def __str__(self) -> str:
        return f"trainer={_fmt(self.trainer)},kueue={_fmt(self.kueue)}"

    @property
    def runtime_patches(self) -> bool:
        """Whether TrainJobs carry runtimePatches (2.2+) rather than podTemplateOverrides (2.1)."""
        return self.trainer >= (2, 2)


def _version(text: str, *, allow_none: bool) -> Version | None:
    if allow_none and text.strip().lower() in ("none", "null", ""):
        return None
    match = _VERSION.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a version like 2.3")
    return int(match.group(1)), int(match.group(2))


def parse_target_option(text: str) -> dict[str, Version | None]:
    """``trainer=2.1,kueue=0.16`` -> the fields it sets; raise ValueError (argparse: exit 2)."""
    fields: dict[str, Version | None] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, eq, value = item.partition("=")
        name = name.strip().lower()
        if not eq or name not in ("trainer", "kueue"):
            raise ValueError(f"expected trainer=X.Y and/or kueue=X.Y (or kueue=none), got {item!r}")
        fields[name] = _version(value, allow_none=name == "kueue")
    if "trainer" in fields and fields["trainer"] is None:
        raise ValueError("trainer needs a version")
    return fields


def target_option(text: str) -> dict[str, Version | None]:
    """argparse ``type=`` for ``--target``: errors become usage errors."""
    import argparse

    try:
        return parse_target_option(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_target_option(parser: Any) -> None:
    """The ``--target`` option shared by compile and check."""
    parser.add_argument(OPTION, type=target_option, metavar="trainer=X.Y,kueue=X.Y",
                        help="cluster versions to emit for (default: the project file's spec.target, else "
                             f"trainer={_fmt(DEFAULT_TRAINER)},kueue={_fmt(DEFAULT_KUEUE)}); kueue=none without Kueue")


# -- resolving the target -------------------------------------------------------------------------


def resolve_target(result: CompileResult, option: dict[str, Version | None] | None) -> tuple[
        Target, list[Diagnostic]]:
    """The target for ``result`` (option over project file over defaults) and the TS52x problems."""
    from trainspec.dsl.project import Project

    project = next((s for s in result.specs if isinstance(s.spec, Project)), None)
    chosen: dict[str, Version | None] = {"trainer": DEFAULT_TRAINER, "kueue": DEFAULT_KUEUE}
    where: dict[str, tuple[str | None, int | None, int | None]] = {"trainer": (OPTION, None, None),
                                                                  "kueue": (OPTION, None, None)}
    problems: list[Diagnostic] = []
    if project is not None:
        spec_target = result.project.spec.target
        for name, text in (("trainer", spec_target.trainer), ("kueue", spec_target.kueue)):
            mark = project.mark(("spec", "target", name))
            where[name] = (project.file, mark.line, mark.column)
            try:
                chosen[name] = _version(text or "none", allow_none=name == "kueue")
            except ValueError as exc:
                problems.append(Diagnostic(code="TS523", message=str(exc), file=project.file, line=mark.line,
                                           column=mark.column, path=f"spec.target.{name}"))
    for name, value in (option or {}).items():
        chosen[name] = value
        where[name] = (OPTION, None, None)
    target = Target(trainer=chosen["trainer"] or DEFAULT_TRAINER, kueue=chosen["kueue"])
    for code, severity, field, message in matrix_problems(target):
        file, line, column = where[field]
        problems.append(Diagnostic(code=code, severity=severity, message=message, file=file, line=line,
                                   column=column, path=f"spec.target.{field}" if file != OPTION else ""))
    return target, problems


def matrix_problems(target: Target) -> list[tuple[str, Severity, str, str]]:
    """(code, severity, field, message) for versions trainspec cannot emit for or pairings that fail."""
    trainer, kueue = target.trainer, target.kueue
    out: list[tuple[str, Severity, str, str]] = []

    def add(code: str, severity: Severity, field: str, message: str) -> None:
        out.append((code, severity, field, message))

    if trainer not in SUPPORTED_TRAINER:
        supported = ", ".join(_fmt(v) for v in SUPPORTED_TRAINER)
        add("TS523", Severity.ERROR, "trainer",
            f"Trainer {_fmt(trainer)} is not a supported target (trainspec emits for Trainer {supported})")
    if kueue is None:
        return out
    pair = f"Trainer {_fmt(trainer)} with Kueue {_fmt(kueue)}"
    known = f"{_fmt(KNOWN_KUEUE[0])}-{_fmt(KNOWN_KUEUE[1])}"
    if kueue < KNOWN_KUEUE[0]:
        add("TS520", Severity.ERROR, "kueue", f"Kueue {_fmt(kueue)} has no TrainJob integration (it arrived in 0.14)")
    elif kueue > KNOWN_KUEUE[1]:
        add("TS523", Severity.WARNING, "kueue", (f"Kueue {_fmt(kueue)} is newer than the versions trainspec knows "
                                                 f"({known}); assuming it speaks Trainer v2.2+ like 0.17-0.19"))
    if trainer < (2, 2) and kueue >= (0, 17):
        add("TS520", Severity.ERROR, "kueue", (
            f"{pair} is a pairing known to fail: Kueue >= 0.17 writes its node selectors and tolerations into "
            "runtimePatches, which Trainer 2.1 does not have, so jobs are admitted but never start "
            f"(kueue#11931, kueue#14722). {MATRIX}; use kueue=0.16 or upgrade Trainer to 2.2+"))
    elif trainer >= (2, 2) and (0, 14) <= kueue < (0, 17):
        add("TS520", Severity.ERROR, "kueue", (
            f"{pair} is a pairing known to fail: Trainer 2.2 replaced podTemplateOverrides with runtimePatches, so "
            f"Kueue < 0.17 cannot place or start the jobs. {MATRIX}; upgrade Kueue to 0.17+ or target trainer=2.1"))
    elif trainer == (2, 1) and kueue == (0, 14):
        add("TS520", Severity.WARNING, "kueue", (
            f"{pair}: Kueue 0.14.0 was built against the Trainer v2.0 API (podSpecOverrides); use Kueue 0.15 or "
            f"0.16 with Trainer 2.1. {MATRIX}"))
    return out


# -- Trainer 2.1 ----------------------------------------------------------------------------------


def retarget(result: CompileResult, option: dict[str, Version | None] | None) -> CompileResult:
    """``result`` for the target: TS52x diagnostics added and, for Trainer 2.1, v2.1 TrainJobs.

    Like the compiler, it leaves no outputs when there are errors.
    """
    target, problems = resolve_target(result, option)
    if target.trainer == (2, 1):
        problems.extend(_v21_problems(result, target))
    diagnostics = sorted([*result.diagnostics, *problems], key=Diagnostic.sort_key)
    if any(d.is_error for d in diagnostics):
        return replace(result, diagnostics=diagnostics, outputs=[])
    outputs = result.outputs
    if target.trainer == (2, 1):
        try:
            outputs = [replace(out, objects=tuple(_v21_object(obj) for obj in out.objects)) for out in outputs]
        except ValueError as exc:  # a patch the compiler does not emit today; refuse rather than drop it
            problem = Diagnostic(code="TS521", message=f"cannot emit for Trainer 2.1: {exc}", file=OPTION)
            return replace(result, diagnostics=sorted([*diagnostics, problem], key=Diagnostic.sort_key), outputs=[])
    return replace(result, diagnostics=diagnostics, outputs=outputs)


def _v21_problems(result: CompileResult, target: Target) -> list[Diagnostic]:
    """What Trainer 2.1 cannot run (TS521) or enforce (TS522), at the spec lines that ask for it."""
    from trainspec.dsl.models import Framework, Runtime

    out: list[Diagnostic] = []
    for loaded in result.specs:
        if not isinstance(loaded.spec, Runtime):
            continue
        if loaded.spec.spec.framework is Framework.JAX:
            out.append(loaded.diagnostic("TS521", ("spec", "framework"), "framework jax needs Trainer 2.2+ "
                                         "(mlPolicy.jax); Trainer 2.1 has no JAX runtime support"))
        if loaded.spec.spec.data_sharding is not None:
            out.append(loaded.diagnostic("TS521", ("spec", "dataSharding"), "dataSharding needs Trainer 2.2+: the "
                                         "shard volume is a JobSet volumeClaimPolicy (JobSet 0.11, Trainer 2.2)"))
    for plan in result.plans:
        job = plan.resolved.loaded
        if plan.resolved.runtime.builtin and plan.resolved.framework is Framework.JAX:
            out.append(job.diagnostic("TS521", ("spec", "runtime"), f"runtime {plan.runtime_name} is a JAX runtime "
                                      "(mlPolicy.jax), which needs Trainer 2.2+"))
        if plan.data is not None:
            out.append(job.diagnostic("TS521", ("spec", "data"), "data sharding needs Trainer 2.2+: the shard "
                                      "volume is a JobSet volumeClaimPolicy (JobSet 0.11, Trainer 2.2)"))
        max_run_time = plan.resolved.job.spec.max_run_time
        if max_run_time is not None:
            by_kueue = ("; Kueue still deactivates the Workload after it (kueue.x-k8s.io/max-exec-time-seconds)"
                        if target.kueue is not None else "; without Kueue nothing enforces it")
            out.append(job.diagnostic("TS522", ("spec", "maxRunTime"), "maxRunTime cannot be enforced by Trainer "
                                      "2.1 (no activeDeadlineSeconds before 2.2)" + by_kueue,
                                      severity=Severity.WARNING))
    return out


def _v21_object(obj: Any) -> Any:
    from trainspec.k8s import TrainJob

    return trainjob_v21(obj) if isinstance(obj, TrainJob) else obj


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
        for rjob in (template.spec.replicated_jobs if template.spec else None) or []:
            overrides.append(_override(rjob))
    trainer = spec.trainer
    return TrainJobV21(metadata=job.metadata, spec=TrainJobSpecV21(
        runtime_ref=spec.runtime_ref, initializer=spec.initializer,
        trainer=TrainerV21(image=trainer.image, command=trainer.command, args=trainer.args, env=trainer.env,
                           num_nodes=trainer.num_nodes, resources_per_node=trainer.resources_per_node,
                           num_proc_per_node=trainer.num_proc_per_node) if trainer else None,
        labels=labels or None, annotations=annotations or None,
        pod_template_overrides=_merge_targets(overrides) or None, suspend=spec.suspend, managed_by=spec.managed_by,
    ))


def _override(rjob: Any) -> Any:
    from trainspec.k8s.legacy import ContainerOverride, PodTemplateOverride, PodTemplateOverrideSpec
    from trainspec.k8s.legacy import PodTemplateOverrideTargetJob as TargetJob

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
            service_account_name=patch.service_account_name, node_selector=patch.node_selector,
            affinity=patch.affinity, tolerations=patch.tolerations, volumes=patch.volumes,
            init_containers=containers(patch.init_containers), containers=containers(patch.containers),
            scheduling_gates=patch.scheduling_gates, image_pull_secrets=patch.image_pull_secrets)
    return PodTemplateOverride(target_jobs=[TargetJob(name=rjob.name)],
                               metadata=pod.metadata if pod is not None else None, spec=override_spec)


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


__all__ = [
    "DEFAULT_KUEUE", "DEFAULT_TRAINER", "MATRIX", "SUPPORTED_TRAINER", "Target", "add_target_option",
    "matrix_problems", "parse_target_option", "resolve_target", "retarget", "trainjob_v21",
]
