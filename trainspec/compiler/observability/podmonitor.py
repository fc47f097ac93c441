"""The Prometheus Operator ``PodMonitor`` (``monitoring.coreos.com/v1``) of a job.

It selects the job's rank-0 pod where the engine's labels tell it apart (else every trainer pod
of the job: the engine dialect's ``rank_zero_selector``), scrapes the container
port named ``train-metrics`` at ``/metrics``, and copies trainspec's pod labels onto the samples
(``podTargetLabels``), so the job's metrics carry the same ``trainspec_dev_job`` label as the
GPU metrics dcgm-exporter labels with the pod's labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from trainspec.k8s.base import Model, Resource, model
from trainspec.k8s.meta import ObjectMeta
from trainspec.k8s.wellknown import (
    JOB_LABEL,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    METRICS_PORT_NAME,
    MONITORING_API_VERSION,
)

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan

#: Where the training code serves its metrics, and how often Prometheus reads them.
METRICS_PATH = "/metrics"
SCRAPE_INTERVAL = "30s"


@model
class LabelSelector(Model):
    """A label selector by exact labels (all trainspec needs)."""

    match_labels: dict[str, str]


@model
class PodMetricsEndpoint(Model):
    """One endpoint of the selected pods: a named container port and its path."""

    port: str
    path: str | None = None
    interval: str | None = None
    scheme: str | None = None


@model
class PodMonitorSpec(Model):
    """The fields of ``PodMonitor.spec`` trainspec emits."""

    selector: LabelSelector
    pod_metrics_endpoints: list[PodMetricsEndpoint]
    pod_target_labels: list[str] | None = None


@model
class PodMonitor(Resource):
    """A Prometheus Operator PodMonitor."""

    api_version: ClassVar[str] = MONITORING_API_VERSION
    kind: ClassVar[str] = "PodMonitor"

    metadata: ObjectMeta
    spec: PodMonitorSpec


def pod_monitor(plan: JobPlan) -> PodMonitor:
    """The PodMonitor of ``plan``'s job, in the job's namespace and named after it."""
    from trainspec.compiler.lower.dialects import dialect_for
    from trainspec.compiler.lower.labels import OBSERVABILITY_LABELS
    from trainspec.compiler.observability.settings import settings

    resolved = plan.resolved
    selector, _ = dialect_for(None, plan.engine).rank_zero_selector(plan)
    labels = {**settings(plan).pod_monitor_labels, MANAGED_BY_LABEL: MANAGED_BY_VALUE, JOB_LABEL: resolved.name}
    return PodMonitor(
        metadata=ObjectMeta(name=resolved.name, namespace=resolved.namespace, labels=labels),
        spec=PodMonitorSpec(
            selector=LabelSelector(match_labels=selector),
            pod_metrics_endpoints=[
                PodMetricsEndpoint(port=METRICS_PORT_NAME, path=METRICS_PATH, interval=SCRAPE_INTERVAL)
            ],
            pod_target_labels=list(OBSERVABILITY_LABELS),
        ),
    )
