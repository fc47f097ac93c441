"""The PodMonitor: emitted only when asked, it selects the rank-0 pod, scrapes the declared port,
and the offline checker judges it as the PodMonitor CRD would for the fields trainspec writes."""

from __future__ import annotations

import copy

import pytest

from tests.observability.helpers import codes, compile_specs, objects, of_kind
from trainspec.check import check_manifest
from trainspec.check.schema.crds import CrdRegistry
from trainspec.check.schema.podmonitor_schema import check_hand_written
from trainspec.k8s.wellknown import (
    COMPLETION_INDEX_LABEL,
    JOB_LABEL,
    METRICS_PORT_ENV,
    METRICS_PORT_NAME,
    TEAM_LABEL,
)

OBSERVED = {"observability": {"metricsPort": 9090, "podMonitor": True, "podMonitorLabels": {"release": "prom"}}}


def test_no_podmonitor_unless_asked(tmp_path) -> None:
    result = compile_specs(tmp_path, runtime={"observability": {"metricsPort": 9090}})
    assert of_kind(result, "PodMonitor") == []


@pytest.mark.parametrize("target", ["trainer=2.3", "training-operator", "ray"])
def test_the_podmonitor_scrapes_the_port_every_trainer_container_declares(tmp_path, target: str) -> None:
    result = compile_specs(tmp_path, runtime=OBSERVED, target=target)
    (monitor,) = of_kind(result, "PodMonitor")
    assert monitor["metadata"] == {
        "name": "demo",
        "namespace": "team-a",
        "labels": {"app.kubernetes.io/managed-by": "trainspec", "release": "prom", JOB_LABEL: "demo"},
    }
    assert monitor["spec"]["podMetricsEndpoints"] == [
        {"port": METRICS_PORT_NAME, "path": "/metrics", "interval": "30s"}
    ]
    assert TEAM_LABEL in monitor["spec"]["podTargetLabels"]
    assert monitor["spec"]["selector"]["matchLabels"][JOB_LABEL] == "demo"
    text = str(objects(result))
    # The port and its env var reach the trainer containers (the runtime's, folded or not).
    assert f"'name': '{METRICS_PORT_NAME}', 'containerPort': 9090" in text
    assert f"'name': '{METRICS_PORT_ENV}', 'value': '9090'" in text


def test_the_trainer_podmonitor_selects_completion_index_zero(tmp_path) -> None:
    (monitor,) = of_kind(compile_specs(tmp_path, runtime=OBSERVED), "PodMonitor")
    assert monitor["spec"]["selector"]["matchLabels"][COMPLETION_INDEX_LABEL] == "0"


def test_a_job_turns_its_runtimes_podmonitor_off(tmp_path) -> None:
    result = compile_specs(tmp_path, runtime=OBSERVED, job={"observability": {"podMonitor": False}})
    assert of_kind(result, "PodMonitor") == []


def test_a_podmonitor_without_a_metrics_port_is_ts435_at_the_job(tmp_path) -> None:
    result = compile_specs(tmp_path, job={"observability": {"podMonitor": True}})
    assert codes(result) == ["TS435"]
    (diagnostic,) = result.diagnostics
    assert diagnostic.path == "spec.observability.podMonitor" and diagnostic.line is not None
    assert diagnostic.related and "metricsPort" in diagnostic.related[0].message
    assert not result.ok


def test_a_runtime_podmonitor_without_a_port_is_ts435_at_the_jobs_runtime(tmp_path) -> None:
    result = compile_specs(tmp_path, runtime={"observability": {"podMonitor": True}})
    assert codes(result) == ["TS435"] and result.diagnostics[0].path == "spec.runtime"


@pytest.mark.parametrize("port", [0, 65536, "9090"])
def test_the_metrics_port_is_a_tcp_port(tmp_path, port) -> None:
    result = compile_specs(tmp_path, runtime={"observability": {"metricsPort": port}})
    assert not result.ok
    assert "spec.observability.metricsPort" in [
        d.path for d in result.diagnostics if d.code == "TS203" or d.code.startswith("TS2")
    ]


# -- the checker ---------------------------------------------------------------------------------


def _emitted(tmp_path) -> dict:
    (monitor,) = of_kind(compile_specs(tmp_path, runtime=OBSERVED), "PodMonitor")
    return monitor


def test_the_emitted_podmonitor_passes_the_checker_without_a_crd(tmp_path) -> None:
    assert check_manifest(_emitted(tmp_path), CrdRegistry([])) == []


#: Edits of the emitted PodMonitor the real CRD (monitoring.coreos.com_podmonitors.yaml) rejects,
#: and the path it names.
REJECTED = [
    (lambda m: m.pop("spec"), "spec"),
    (lambda m: m["spec"].pop("selector"), "spec.selector"),
    (lambda m: m["spec"]["podMetricsEndpoints"][0].update(port=9090), "spec.podMetricsEndpoints[0].port"),
    (lambda m: m["spec"]["podMetricsEndpoints"][0].update(portNumber=0), "spec.podMetricsEndpoints[0].portNumber"),
    (lambda m: m["spec"]["podMetricsEndpoints"][0].update(portNumber=65536), "spec.podMetricsEndpoints[0].portNumber"),
    (
        lambda m: m["spec"]["podMetricsEndpoints"][0].update(interval="30 seconds"),
        "spec.podMetricsEndpoints[0].interval",
    ),
    (
        lambda m: m["spec"]["podMetricsEndpoints"][0].update(scrapeTimeout="1.5s"),
        "spec.podMetricsEndpoints[0].scrapeTimeout",
    ),
    (lambda m: m["spec"]["podMetricsEndpoints"][0].update(scheme="ftp"), "spec.podMetricsEndpoints[0].scheme"),
    (lambda m: m["spec"].update(podTargetLabels="trainspec.dev/job"), "spec.podTargetLabels"),
    (lambda m: m["spec"]["selector"].update(matchLabels={"a": 1}), "spec.selector.matchLabels.a"),
    (
        lambda m: m["spec"]["selector"].update(matchExpressions=[{"key": "a"}]),
        "spec.selector.matchExpressions[0].operator",
    ),
    (lambda m: m["spec"].update(podMetricEndpoints=[]), "spec.podMetricEndpoints"),  # misspelt: unknown field
]


@pytest.mark.parametrize(("edit", "path"), REJECTED)
def test_the_checker_rejects_what_the_crd_rejects(tmp_path, edit, path: str) -> None:
    manifest = copy.deepcopy(_emitted(tmp_path))
    edit(manifest)
    found = check_hand_written(manifest)
    assert found is not None and path in [d.path for d in found], [(d.path, d.message) for d in found]
    assert all(d.code == "TS500" for d in found)


@pytest.mark.parametrize(
    "fields",
    [
        {"interval": "1m30s"},
        {"interval": "0"},
        {"scrapeTimeout": "500ms"},
        {"scheme": "HTTPS"},
        {"portNumber": 1},
        {"portNumber": 65535},
        {"honorLabels": True},
        {"relabelings": [{"action": "keep"}]},
    ],
)
def test_the_checker_accepts_what_the_crd_accepts(tmp_path, fields: dict) -> None:
    manifest = copy.deepcopy(_emitted(tmp_path))
    manifest["spec"]["podMetricsEndpoints"][0].update(fields)
    assert check_hand_written(manifest) == []


def test_other_kinds_are_not_the_hand_written_checks_business() -> None:
    assert check_hand_written({"apiVersion": "v1", "kind": "ConfigMap"}) is None
