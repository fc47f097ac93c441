"""The ``observability`` block of a Runtime and of a TrainingJob: labels, scraping, dashboards.

The platform team fixes on the runtime what the training image does (the port its rank-0
process serves Prometheus metrics on) and the cluster needs (the labels their Prometheus
selects PodMonitors by); a job may turn the PodMonitor and the dashboard on or off and name its
team. A job's setting wins over its runtime's, field by field.
"""

from __future__ import annotations

from trainspec.dsl.framework.modeling import Model, field
from trainspec.dsl.framework.types import Count, LabelKey, LabelValue, StrictBool

#: TCP ports (containerPort and PodMonitor portNumber are 1-65535).
PORT_MIN = 1
PORT_MAX = 65535


class JobObservability(Model):
    """How a job is watched while it runs (its runtime's ``observability`` gives the defaults)."""

    team: LabelValue | None = field(
        default=None,
        description="Value of the trainspec.dev/team label on the trainer pods (default: the runtime's, else the "
        "job's namespace).",
    )
    pod_monitor: StrictBool | None = field(
        default=None,
        description="Emit a Prometheus Operator PodMonitor scraping the rank-0 metrics port (default: the "
        "runtime's; needs the runtime's metricsPort).",
    )
    dashboard: StrictBool | None = field(
        default=None,
        description='Emit the job\'s Grafana dashboard as a ConfigMap labelled grafana_dashboard: "1" for the '
        "Grafana sidecar (default: the runtime's).",
    )


class RuntimeObservability(Model):
    """What every job on this runtime exposes for monitoring."""

    team: LabelValue | None = field(
        default=None, description="Default value of the trainspec.dev/team pod label (else the job's namespace)."
    )
    metrics_port: Count | None = field(
        default=None,
        ge=PORT_MIN,
        le=PORT_MAX,
        description="Port the rank-0 training process serves Prometheus metrics on (/metrics): declared as the "
        "container port named train-metrics on every trainer container and passed as TRAINSPEC_METRICS_PORT.",
    )
    pod_monitor: StrictBool = field(
        default=False, description="Emit a PodMonitor for every job on this runtime (needs metricsPort)."
    )
    dashboard: StrictBool = field(
        default=False, description="Emit a Grafana dashboard ConfigMap for every job on this runtime."
    )
    pod_monitor_labels: dict[LabelKey, LabelValue] = field(
        default_factory=dict,
        description="Labels on every PodMonitor, for the Prometheus podMonitorSelector (e.g. release: prometheus).",
    )
