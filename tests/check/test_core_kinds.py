"""Kubernetes' built-in validation of the core kinds trainspec emits (PersistentVolumeClaim).

Cases written from the API server's ``ValidatePersistentVolumeClaim`` (pkg/apis/core/validation):
what it rejects and what it lets through, with the field path the diagnostic must point at.
"""

from __future__ import annotations

import copy

import pytest

from trainspec.check import check_manifest, load_crds
from trainspec.check.schema.core_kinds import CORE_KINDS, check_core_kind

_PVC = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "ckpt", "namespace": "team-a"},
    "spec": {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "100Gi"}},
        "storageClassName": "lustre",
    },
}


def pvc(**spec) -> dict:
    out = copy.deepcopy(_PVC)
    for key, value in spec.items():
        if value is None:
            out["spec"].pop(key, None)
        else:
            out["spec"][key] = value
    return out


def errors(manifest: dict) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in check_core_kind(manifest)]


def test_good_claims_pass():
    assert errors(pvc()) == []
    assert errors(pvc(storageClassName="")) == []  # "" = no class (static binding)
    assert errors(pvc(storageClassName="fast.storage.example.com", volumeMode="Block")) == []
    assert errors(pvc(accessModes=["ReadWriteOncePod"])) == []
    assert errors(pvc(accessModes=["ReadWriteOnce", "ReadOnlyMany"])) == []
    assert errors(pvc(resources={"requests": {"storage": 1}, "limits": {"storage": "2Gi"}})) == []
    assert errors(pvc(dataSource={"kind": "PersistentVolumeClaim", "name": "src"})) == []
    assert (
        errors(pvc(dataSourceRef={"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap"}))
        == []
    )


@pytest.mark.parametrize(
    ("spec", "path", "words"),
    [
        ({"storageClassName": "Lustre_FS"}, "spec.storageClassName", "RFC 1123 subdomain"),
        ({"storageClassName": "a" * 254}, "spec.storageClassName", "253"),
        ({"resources": {"requests": {"storage": "-5Gi"}}}, "spec.resources.requests.storage", "greater than zero"),
        ({"resources": {"requests": {"storage": "0"}}}, "spec.resources.requests.storage", "greater than zero"),
        ({"resources": {"requests": {"storage": 0}}}, "spec.resources.requests.storage", "greater than zero"),
        ({"resources": {"requests": {"cpu": "1"}}}, "spec.resources.requests.storage", "required"),
        ({"resources": None}, "spec.resources.requests.storage", "required"),
        ({"accessModes": []}, "spec.accessModes", "at least 1 access mode"),
        ({"accessModes": None}, "spec.accessModes", "at least 1 access mode"),
        ({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"]}, "spec.accessModes", "ReadWriteOncePod"),
        ({"volumeAttributesClassName": "Gold!"}, "spec.volumeAttributesClassName", "RFC 1123 subdomain"),
        # A dataSource alone naming another kind is dropped by the server, not refused (test_data_source.py);
        # a dataSourceRef is validated whatever it names.
        ({"dataSourceRef": {"kind": "VolumeSnapshot", "name": "s"}}, "spec.dataSourceRef", "default apiGroup"),
        ({"dataSource": {"kind": "PersistentVolumeClaim"}}, "spec.dataSource.name", "required"),
        (
            {"dataSourceRef": {"apiGroup": "Bad_Group", "kind": "X", "name": "s"}},
            "spec.dataSourceRef.apiGroup",
            "RFC 1123 subdomain",
        ),
        (
            {"dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "s", "namespace": "Other_NS"}},
            "spec.dataSourceRef.namespace",
            "RFC 1123 label",
        ),
        (
            {
                "dataSource": {"kind": "PersistentVolumeClaim", "name": "a"},
                "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "b"},
            },
            "spec.dataSource",
            "must match",
        ),
        (
            {
                "dataSource": {"kind": "PersistentVolumeClaim", "name": "a"},
                "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "a", "namespace": "other"},
            },
            "spec.dataSource",
            "dataSourceRef.namespace",
        ),
        (
            {"selector": {"matchExpressions": [{"key": "tier", "operator": "In"}]}},
            "spec.selector.matchExpressions[0].values",
            "must be specified",
        ),
        (
            {"selector": {"matchExpressions": [{"key": "tier", "operator": "Exists", "values": ["a"]}]}},
            "spec.selector.matchExpressions[0].values",
            "must be empty",
        ),
        ({"selector": {"matchLabels": {"bad key": "v"}}}, "spec.selector.matchLabels['bad key']", "label key"),
        ({"selector": {"matchLabels": {"tier": "-bad"}}}, "spec.selector.matchLabels.tier", "label value"),
    ],
)
def test_built_in_rules_reject(spec, path, words):
    found = check_core_kind(pvc(**spec))
    assert [(d.code, d.path) for d in found] == [("TS500", path)], found
    assert words in found[0].message + (found[0].hint or "")


def test_schema_and_built_in_rules_together():
    bad = pvc(accessModes=["ReadWriteSometimes"], resources={"requests": {"storage": "lots"}}, size=1)
    bad["metadata"]["name"] = "Ckpt"
    # The quantity that does not parse is a schema error and is not judged again by the rules.
    assert sorted(errors(bad)) == [
        ("TS500", "metadata.name"),
        ("TS500", "spec.accessModes[0]"),
        ("TS500", "spec.resources.requests.storage"),
        ("TS500", "spec.size"),
    ]


def test_a_claim_without_spec_gets_the_servers_two_errors():
    bare = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "x"}}
    assert errors(bare) == [("TS500", "spec.accessModes"), ("TS500", "spec.resources.requests.storage")]


def test_check_manifest_applies_the_built_in_rules(crd_dirs):
    registry = load_crds(crd_dirs)
    assert [d.path for d in check_manifest(pvc(storageClassName="Upper"), registry)] == ["spec.storageClassName"]
    assert check_manifest(pvc(), registry) == []


def test_unchecked_core_kinds_stay_unchecked():
    assert CORE_KINDS[("v1", "ConfigMap")] is None
    assert check_core_kind({"apiVersion": "v1", "kind": "ConfigMap", "anything": 1}) == []
