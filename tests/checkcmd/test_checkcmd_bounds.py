"""Numbers in manifests and cluster files are bounded as the API server and Kueue bound them
(issue 10, item 3): int32/int64 formats, Kueue's int32 labels, quantities from cluster files."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import SHARED
from trainspec.check import check_manifests
from trainspec.dsl.kube_facts import INT32_MAX, INT64_MAX
from trainspec.k8s.wellknown import MAX_EXEC_TIME_LABEL, PODSET_SLICE_SIZE_ANNOTATION
from trainspec.kueue.cluster_files import load_cluster
from trainspec.kueue.preflight import kueue_label_problems, label_int

VERDICTS = SHARED / "apiserver-verdicts"


def _manifest(name: str) -> dict:
    path = VERDICTS / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return yaml.safe_load(path.read_text())


def _schema_findings(manifest: dict, crds: Path) -> list[tuple[str, str]]:
    found = check_manifests([("x.yaml", manifest)], [crds])
    return [(d.code, d.path) for d in found if d.code == "TS500"]


def test_int32_overflow_of_num_nodes_is_rejected_as_the_api_server_does(crds: Path) -> None:
    """17-tj-int32-overflow: the server says "must be of type integer with format int32"."""
    manifest = _manifest("17-tj-int32-overflow.yaml")
    assert _schema_findings(manifest, crds) == [("TS500", "spec.trainer.numNodes")]
    manifest["spec"]["trainer"]["numNodes"] = INT32_MAX
    assert _schema_findings(manifest, crds) == []


def test_int32_overflow_of_replicas_is_rejected(crds: Path) -> None:
    manifest = _manifest("68-pt-int32-overflow.yaml")
    assert _schema_findings(manifest, crds) == [("TS500", "spec.pytorchReplicaSpecs.Worker.replicas")]


def test_int64_fields_take_int64(crds: Path) -> None:
    manifest = _manifest("01-tj-baseline.yaml")
    at_max = copy.deepcopy(manifest)
    at_max["spec"]["activeDeadlineSeconds"] = INT64_MAX
    assert _schema_findings(at_max, crds) == []
    at_max["spec"]["activeDeadlineSeconds"] = INT64_MAX + 1
    assert _schema_findings(at_max, crds) == [("TS500", "spec.activeDeadlineSeconds")]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("1", True),
        (str(INT32_MAX), True),
        (str(INT32_MAX + 1), False),
        ("0", False),
        ("-5", False),
        ("²", False),
        ("٣", False),
        ("1e3", False),
        (" 60", False),
        ("9" * 1_000_000, False),
    ],
)
def test_max_exec_time_label_is_an_int32_as_kueue_reads_it(value: str, ok: bool) -> None:
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)  # a megabyte of digits is counted, never converted
    try:
        found = kueue_label_problems({"metadata": {"labels": {MAX_EXEC_TIME_LABEL: value}}})
    finally:
        sys.set_int_max_str_digits(previous)
    assert [f.path for f in found] == ([] if ok else [("metadata", "labels", MAX_EXEC_TIME_LABEL)])


def test_label_int_accepts_ascii_digits_up_to_its_limit() -> None:
    assert label_int("007", 8) == 7
    assert label_int("8", 8) == 8 and label_int("9", 8) is None
    assert label_int("²", 8) is None  # str.isdigit() says yes, int() says no
    assert label_int(8, 8) is None and label_int("", 8) is None
    assert PODSET_SLICE_SIZE_ANNOTATION.endswith("slice-size")


CLUSTER_QUEUE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: {quota}
"""


@pytest.mark.parametrize(
    "quota", [".inf", "-.inf", ".nan", "1e5000", "'1e3000000'", "9223372036854775808", "8Ei", "'" + "9" * 100_000 + "'"]
)
def test_cluster_quantities_out_of_range_are_located_findings(tmp_path: Path, quota: str) -> None:
    (tmp_path / "cq.yaml").write_text(CLUSTER_QUEUE.format(quota=quota))
    cluster = load_cluster([tmp_path])
    assert [(d.code, d.line, d.path) for d in cluster.problems] == [
        ("TS500", 12, "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota")
    ]
    assert cluster.cluster_queues["cq"].groups[0].flavors[0].quotas["cpu"].nominal == 0


@pytest.mark.parametrize(("quota", "value"), [("64", 64), ("'500m'", 0.5), ("1.5", 1.5), ("7Ei", 7 * 2**60)])
def test_cluster_quantities_in_range_are_exact(tmp_path: Path, quota: str, value: float) -> None:
    (tmp_path / "cq.yaml").write_text(CLUSTER_QUEUE.format(quota=quota))
    cluster = load_cluster([tmp_path])
    assert cluster.problems == []
    assert cluster.cluster_queues["cq"].groups[0].flavors[0].quotas["cpu"].nominal == value
