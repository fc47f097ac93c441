"""What the training-operator target cannot express or would have refused, as located diagnostics.

These run in the ``rules`` pass (``TrainingOperatorDialect.job_rules``), so ``validate`` reports
exactly what ``compile`` refuses:

* **TS521** a spec feature the target lacks: the data-sharding stage (Trainer's dataset
  initializer), an elastic node range on an MPIJob or JAXJob (only PyTorchJob has an elastic
  policy).
* **TS520** (warning) the Kueue integration: Kueue 0.19 deprecates its Training Operator v1
  integrations and turns ``kubeflow.org/pytorchjob`` and ``kubeflow.org/jaxjob`` off by
  default; their removal is planned for 0.20, so a queued PyTorchJob or JAXJob targeting Kueue
  0.20 or later may never be admitted.

The replica types, their counts and the container names the webhooks require are right by
construction (:mod:`.pytorchjob`, :mod:`.mpijob`); the offline checker checks them on any
manifest (:mod:`trainspec.check.webhooks.training_operator`).
"""

from __future__ import annotations

from collections.abc import Iterator

from trainspec.compiler.engines import Engine
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.targets import Target
from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.spec.models import Framework
from trainspec.k8s.wellknown import (
    KUEUE_V1_FRAMEWORKS,
    KUEUE_V1_OFF_BY_DEFAULT,
    KUEUE_V1_REMOVAL,
    REPLICA_LAUNCHER,
    REPLICA_MASTER,
    REPLICA_WORKER,
)

TARGET = Engine.TRAINING_OPERATOR.value


def kind_of(framework: Framework) -> str:
    """The kind a job of ``framework`` becomes on this target."""
    if framework in (Framework.DEEPSPEED, Framework.MPI):
        return "MPIJob"
    return "JAXJob" if framework is Framework.JAX else "PyTorchJob"


def job_problems(plan: JobPlan, target: Target) -> list[Diagnostic]:
    """Every training-operator finding for one job."""
    return [*_cannot_express(plan), *_kueue(plan, target)]


def _cannot_express(plan: JobPlan) -> Iterator[Diagnostic]:
    resolved = plan.resolved
    kind = kind_of(resolved.framework)
    if resolved.job.spec.data is not None:
        yield resolved.loaded.diagnostic(
            codes.TARGET_UNSUPPORTED,
            ("spec", "data"),
            f"target {TARGET} ({kind}) cannot run the data-sharding stage: it is Kubeflow Trainer's dataset "
            "initializer, and the Training Operator has no step that runs before the trainers",
            hint="read and split the data in the training script, or target trainer",
        )
    if plan.elastic is not None and kind != "PyTorchJob":
        yield resolved.loaded.diagnostic(
            codes.TARGET_UNSUPPORTED,
            ("spec", "nodes"),
            f"target {TARGET} runs {resolved.framework.value} jobs as a {kind}, which has no elastic policy: "
            "only PyTorchJob (torchrun) trains on a node range",
            hint=f"ask for a fixed count (nodes: {plan.elastic.max_nodes}), or use a torch runtime",
        )


def replica_counts(plan: JobPlan) -> dict[str, int]:
    """Pods per replica type of the job's object (what Kueue admits: one PodSet per type)."""
    from trainspec.compiler.lower.training_operator.mpijob import worker_count

    resolved = plan.resolved
    kind = kind_of(resolved.framework)
    nodes = resolved.nodes.value
    if kind == "MPIJob":
        workers = worker_count(plan)
        return {REPLICA_LAUNCHER: 1, **({REPLICA_WORKER: workers} if workers else {})}
    if kind == "JAXJob" or plan.elastic is not None:
        return {REPLICA_WORKER: nodes}
    return {REPLICA_MASTER: 1, **({REPLICA_WORKER: nodes - 1} if nodes > 1 else {})}


def longest_pod_name(plan: JobPlan) -> str:
    """The longest pod (and Service) name the operator creates: ``<job>-<type>-<index>``; an MPI
    launcher is ``<job>-launcher``."""
    from trainspec.compiler.runs import suffix_length

    # The job object is <name>-<run id> (compiler.runs); the pods carry the object's name.
    name = plan.resolved.name + "-xxxxxx"[: suffix_length(plan)]
    names = [
        f"{name}-{rtype.lower()}" if rtype == REPLICA_LAUNCHER else f"{name}-{rtype.lower()}-{count - 1}"
        for rtype, count in replica_counts(plan).items()
    ]
    return max(names, key=len)


def _kueue(plan: JobPlan, target: Target) -> Iterator[Diagnostic]:
    """From Kueue 0.20 (its planned removal) a queued PyTorchJob/JAXJob may have no integration left.

    Kueue 0.19 only turns the integration off by default: a cluster that enables it is fine, and
    trainspec cannot see Kueue's Configuration, so 0.19 gets no warning (docs/engines say it).
    """
    resolved = plan.resolved
    kind = kind_of(resolved.framework)
    if resolved.job.spec.queue is None or target.kueue is None or kind == "MPIJob":
        return  # Kueue's MPIJob integration (mpi-operator v2beta1) stays on by default
    if target.kueue < KUEUE_V1_REMOVAL:
        return
    version = f"{target.kueue[0]}.{target.kueue[1]}"
    framework = KUEUE_V1_FRAMEWORKS[kind]
    off, removal = (f"{v[0]}.{v[1]}" for v in (KUEUE_V1_OFF_BY_DEFAULT, KUEUE_V1_REMOVAL))
    yield resolved.loaded.diagnostic(
        codes.BAD_VERSION_PAIR,
        ("spec", "queue"),
        f"a {kind} queued in Kueue {version} needs Kueue's {framework} integration, deprecated and off by default "
        f"since Kueue {off} and planned to be removed in {removal}: without it the job stays suspended and is "
        "never admitted",
        severity=Severity.WARNING,
        hint=f"check that your Kueue still has {framework} (integrations.frameworks of its Configuration), or "
        "target trainer (TrainJob is a supported Kueue integration)",
    )
