"""A job's Grafana dashboard (the classic dashboard JSON model) and the ConfigMap that ships it.

Two rows: the job's GPUs, from dcgm-exporter (utilisation, tensor-core activity, framebuffer used,
the last XID error), and its input pipeline, from the rank-0 metrics the in-pod helpers expose
(``trainspec_data_wait_fraction``, ``trainspec_data_wait_seconds_total``,
``trainspec_step_seconds_total``). Every query is filtered by the job's namespace and the
``trainspec_dev_job`` label: the ``trainspec.dev/job`` pod label as dcgm-exporter's
``--kubernetes-enable-pod-labels`` and the PodMonitor's ``podTargetLabels`` both write it
(every character outside ``[A-Za-z0-9_]`` becomes ``_``). The bytes are deterministic.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from trainspec.k8s.base import Resource, model
from trainspec.k8s.meta import ObjectMeta
from trainspec.k8s.wellknown import (
    GRAFANA_DASHBOARD_LABEL,
    JOB_LABEL,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
)

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan

#: The classic dashboard model version written (Grafana 10.4 / 11 read it and migrate newer).
SCHEMA_VERSION = 39
#: Grafana's grid is 24 columns wide.
GRID_WIDTH = 24
#: DCGM fields (dcgm-exporter's default counters; the tensor one is a profiling field, on
#: data-centre GPUs) and the in-pod helpers' metric names.
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
TENSOR_ACTIVE = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"
FB_USED = "DCGM_FI_DEV_FB_USED"
XID_ERRORS = "DCGM_FI_DEV_XID_ERRORS"
DATA_WAIT_FRACTION = "trainspec_data_wait_fraction"
DATA_WAIT_SECONDS = "trainspec_data_wait_seconds_total"
STEP_SECONDS = "trainspec_step_seconds_total"
#: The Prometheus data source is a dashboard variable, so the JSON imports on any Grafana.
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def prometheus_label(key: str) -> str:
    """A Kubernetes label key as exporters write it as a Prometheus label name."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", key)
    return name if re.match(r"[A-Za-z_]", name) else "_" + name


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Panel:
    """One panel: title, type, unit, (legend, expr) targets and its width."""

    title: str
    type: str
    unit: str
    targets: tuple[tuple[str, str], ...]
    description: str
    width: int = 12
    height: int = 8


def _panels(selector: str) -> list[tuple[str, list[Panel]]]:
    def by_pod(agg: str, metric: str) -> str:
        return f"{agg} by (pod) ({metric}{{{selector}}})"

    gpus = [
        Panel(
            "GPU utilisation",
            "timeseries",
            "percent",
            (("{{pod}}", by_pod("avg", GPU_UTIL)),),
            f"{GPU_UTIL}: share of time a kernel ran, averaged over each pod's GPUs.",
        ),
        Panel(
            "Tensor-core activity",
            "timeseries",
            "percentunit",
            (("{{pod}}", by_pod("avg", TENSOR_ACTIVE)),),
            f"{TENSOR_ACTIVE}: share of cycles the tensor pipes were busy (a profiling field).",
        ),
        Panel(
            "Framebuffer memory used",
            "timeseries",
            "mbytes",
            (("{{pod}}", by_pod("sum", FB_USED)),),
            f"{FB_USED}: MiB used on each pod's GPUs.",
        ),
        Panel(
            "Last XID error",
            "stat",
            "none",
            (("{{pod}} GPU {{gpu}}", f"max by (pod, gpu) ({XID_ERRORS}{{{selector}}})"),),
            f"{XID_ERRORS}: the last XID error of each GPU (0: none).",
        ),
    ]
    data = [
        Panel(
            "Step time waiting for data (rank 0)",
            "timeseries",
            "percentunit",
            (("{{pod}}", f"{DATA_WAIT_FRACTION}{{{selector}}}"),),
            f"{DATA_WAIT_FRACTION}: the share of step time rank 0 spent waiting for its next batch.",
        ),
        Panel(
            "Wall time in steps and in data waits (rank 0)",
            "timeseries",
            "percentunit",
            (
                ("waiting for data", f"sum(rate({DATA_WAIT_SECONDS}{{{selector}}}[$__rate_interval]))"),
                ("in steps", f"sum(rate({STEP_SECONDS}{{{selector}}}[$__rate_interval]))"),
            ),
            f"rate() of {DATA_WAIT_SECONDS} and {STEP_SECONDS}: seconds per second of wall time.",
        ),
    ]
    return [("GPUs (dcgm-exporter)", gpus), ("Input pipeline (rank 0)", data)]


def _panel_json(panel: Panel, panel_id: int, x: int, y: int) -> dict[str, Any]:
    targets = [
        {"datasource": DATASOURCE, "expr": expr, "legendFormat": legend, "refId": chr(ord("A") + i)}
        for i, (legend, expr) in enumerate(panel.targets)
    ]
    options: dict[str, Any] = {
        "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
        "tooltip": {"mode": "multi", "sort": "none"},
    }
    if panel.type == "stat":
        options = {
            "colorMode": "value",
            "graphMode": "none",
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        }
    return {
        "datasource": DATASOURCE,
        "description": panel.description,
        "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
        "gridPos": {"h": panel.height, "w": panel.width, "x": x, "y": y},
        "id": panel_id,
        "options": options,
        "targets": targets,
        "title": panel.title,
        "type": panel.type,
    }


def dashboard(name: str, namespace: str, *, runtime: str | None = None) -> dict[str, Any]:
    """The dashboard of job ``namespace/name`` as a dict of the classic Grafana JSON model."""
    selector = f"namespace={_quote(namespace)}, {prometheus_label(JOB_LABEL)}={_quote(name)}"
    panels: list[dict[str, Any]] = []
    y = 0
    for row_title, row in _panels(selector):
        panels.append(
            {
                "collapsed": False,
                "gridPos": {"h": 1, "w": GRID_WIDTH, "x": 0, "y": y},
                "id": len(panels) + 1,
                "panels": [],
                "title": row_title,
                "type": "row",
            }
        )
        y += 1
        x = 0
        for panel in row:
            if x + panel.width > GRID_WIDTH:
                x, y = 0, y + panel.height
            panels.append(_panel_json(panel, len(panels) + 1, x, y))
            x += panel.width
        y += row[-1].height
    uid = "ts-" + hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:20]
    tags = ["trainspec", f"namespace:{namespace}"] + ([f"runtime:{runtime}"] if runtime else [])
    return {
        "annotations": {"list": []},
        "editable": True,
        "graphTooltip": 1,
        "id": None,
        "links": [],
        "panels": panels,
        "refresh": "30s",
        "schemaVersion": SCHEMA_VERSION,
        "tags": tags,
        "templating": {
            "list": [
                {
                    "current": {},
                    "hide": 0,
                    "label": "Prometheus",
                    "name": "datasource",
                    "options": [],
                    "query": "prometheus",
                    "refresh": 1,
                    "regex": "",
                    "type": "datasource",
                }
            ]
        },
        "time": {"from": "now-6h", "to": "now"},
        "timepicker": {},
        "timezone": "browser",
        "title": f"{namespace}/{name} (trainspec)",
        "uid": uid,
        "version": 1,
    }


def dashboard_json(name: str, namespace: str, *, runtime: str | None = None) -> str:
    """The dashboard as JSON text: sorted keys, two-space indent, a final newline (deterministic)."""
    return json.dumps(dashboard(name, namespace, runtime=runtime), indent=2, sort_keys=True) + "\n"


@model
class ConfigMap(Resource):
    """A ``v1`` ConfigMap (what the Grafana sidecar reads dashboards from)."""

    api_version: ClassVar[str] = "v1"
    kind: ClassVar[str] = "ConfigMap"

    metadata: ObjectMeta
    data: dict[str, str]


def dashboard_configmap(plan: JobPlan) -> ConfigMap:
    """The ConfigMap ``<job>-dashboard`` in the job's namespace, labelled for the Grafana sidecar;
    its key ``<namespace>-<job>.json`` is the file name the sidecar writes (unique per job)."""
    resolved = plan.resolved
    name, namespace = resolved.name, resolved.namespace
    labels = {GRAFANA_DASHBOARD_LABEL: "1", MANAGED_BY_LABEL: MANAGED_BY_VALUE, JOB_LABEL: name}
    return ConfigMap(
        metadata=ObjectMeta(name=f"{name}-dashboard", namespace=namespace, labels=labels),
        data={f"{namespace}-{name}.json": dashboard_json(name, namespace, runtime=resolved.runtime.name)},
    )
