"""The Grafana dashboard: valid in Grafana's dashboard JSON model, filtered by the job, deterministic,
shipped in a ConfigMap the Grafana sidecar picks up, and every PromQL expression well formed."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.observability.grafana_schema import DASHBOARD
from tests.observability.helpers import compile_specs, of_kind
from trainspec.compiler.observability import dashboard as D
from trainspec.compiler.observability.promql import problems

METRICS = {
    D.GPU_UTIL,
    D.TENSOR_ACTIVE,
    D.FB_USED,
    D.XID_ERRORS,
    D.DATA_WAIT_FRACTION,
    D.DATA_WAIT_SECONDS,
    D.STEP_SECONDS,
}


def _board() -> dict:
    return D.dashboard("demo", "team-a", runtime="rt")


def _queries(board: dict) -> list[dict]:
    return [t for p in board["panels"] for t in p.get("targets", [])]


def test_the_dashboard_is_valid_in_grafanas_json_model() -> None:
    jsonschema.Draft202012Validator.check_schema(DASHBOARD)
    jsonschema.Draft202012Validator(DASHBOARD).validate(_board())


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda b: b.pop("schemaVersion"), "schemaVersion"),
        (lambda b: b["panels"][1].pop("gridPos"), "gridPos"),
        (lambda b: b["panels"][1]["gridPos"].update(w=25), "25"),
        (lambda b: b["panels"][1].update(type="graphh"), "graphh"),
        (lambda b: b["panels"][1]["targets"][0].pop("datasource"), "datasource"),
        (lambda b: b["panels"][1]["targets"][0].pop("expr"), "expr"),
        (lambda b: b.update(uid="x" * 41), "uid"),
    ],
)
def test_the_schema_rejects_broken_dashboards(edit, why: str) -> None:
    """The structural schema is not vacuous: each broken part of a dashboard fails it."""
    board = _board()
    edit(board)
    with pytest.raises(jsonschema.ValidationError, match=why):
        jsonschema.Draft202012Validator(DASHBOARD).validate(board)


def test_panel_ids_are_unique_and_panels_never_overlap() -> None:
    panels = _board()["panels"]
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids))
    cells = set()
    for panel in panels:
        g = panel["gridPos"]
        assert g["x"] + g["w"] <= D.GRID_WIDTH
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & mine, panel["title"]
        cells |= mine


def test_every_query_is_well_formed_promql_on_the_jobs_labels() -> None:
    queries = _queries(_board())
    used = set()
    for query in queries:
        assert problems(query["expr"]) == [], query["expr"]
        assert 'namespace="team-a"' in query["expr"] and 'trainspec_dev_job="demo"' in query["expr"]
        assert query["datasource"] == D.DATASOURCE
        used |= {m for m in METRICS if m in query["expr"]}
    assert used == METRICS


@pytest.mark.parametrize(
    ("expr", "problem"),
    [
        ('avg(DCGM_FI_DEV_GPU_UTIL{pod="a"}', "unclosed '('"),
        ('DCGM_FI_DEV_GPU_UTIL{pod="a"))', "unexpected ')'"),
        ('DCGM_FI_DEV_GPU_UTIL{pod="a}', "unclosed string"),
        ("DCGM_FI_DEV_GPU_UTIL{pod=a}", "quoted value"),
        ('DCGM_FI_DEV_GPU_UTIL{pod=="a"}', "quoted value"),
        ('DCGM_FI_DEV_GPU_UTIL{trainspec.dev/job="a"}', "expected =, !=, =~ or !~"),
        ('DCGM_FI_DEV_GPU_UTIL{pod="a" job="b"}', "expected ','"),
        ("rate(x[5 minutes])", "not a duration"),
        ("", "empty"),
    ],
)
def test_the_promql_check_finds_what_prometheus_would_reject(expr: str, problem: str) -> None:
    assert any(problem in p for p in problems(expr)), problems(expr)


@pytest.mark.parametrize(
    "expr",
    [
        'sum by (pod) (rate(x_total{a="1", b!~"x.*"}[$__rate_interval]))',
        'x{a="}{"}',
        "up",
        "rate(x[1h30m])",
        'x{a=~"a|b",}',
    ],
)
def test_the_promql_check_accepts_valid_expressions(expr: str) -> None:
    assert problems(expr) == []


def test_the_label_a_pod_label_becomes() -> None:
    assert D.prometheus_label("trainspec.dev/job") == "trainspec_dev_job"
    assert D.prometheus_label("9lives") == "_9lives"


def test_bytes_are_deterministic_and_uids_differ_per_job() -> None:
    text = D.dashboard_json("demo", "team-a")
    assert text == D.dashboard_json("demo", "team-a") and text.endswith("}\n")
    assert json.loads(text)["uid"] != json.loads(D.dashboard_json("demo", "team-b"))["uid"]


def test_the_configmap_is_labelled_for_the_grafana_sidecar(tmp_path) -> None:
    assert of_kind(compile_specs(tmp_path), "ConfigMap") == []
    result = compile_specs(tmp_path, job={"observability": {"dashboard": True}})
    (configmap,) = of_kind(result, "ConfigMap")
    assert configmap["metadata"]["name"] == "demo-dashboard" and configmap["metadata"]["namespace"] == "team-a"
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    (text,) = configmap["data"].values()
    assert list(configmap["data"]) == ["team-a-demo.json"]
    jsonschema.Draft202012Validator(DASHBOARD).validate(json.loads(text))
    assert text == D.dashboard_json("demo", "team-a", runtime="rt")


def test_a_runtime_asks_for_dashboards_for_all_its_jobs_and_a_job_opts_out(tmp_path) -> None:
    on = {"observability": {"dashboard": True}}
    assert len(of_kind(compile_specs(tmp_path, runtime=on), "ConfigMap")) == 1
    off = {"observability": {"dashboard": False}}
    assert of_kind(compile_specs(tmp_path, runtime=on, job=off), "ConfigMap") == []
