"""A PVC ``dataSource`` judged as the API server judges it, on create and on update.

kubernetes pkg/api/persistentvolumeclaim (util.go) EnforceDataSourceBackwardsCompatibility, which
the registry's PrepareForCreate runs before validation: without a ``dataSourceRef``, a
``dataSource`` naming anything but a PersistentVolumeClaim (core group) or a VolumeSnapshot
(snapshot.storage.k8s.io), a missing kind included, is dropped: the claim is accepted and created
empty. Then NormalizeDataSources copies what is left to ``dataSourceRef``, and
ValidatePersistentVolumeClaimSpec (pkg/apis/core/validation) judges both. So `check` warns
(TS505: the field has no effect) where it used to call it an error, and still refuses what the
server refuses.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from trainspec.check.schema.core_kinds import check_core_kind
from trainspec.check.update_rules import pvc_update_problems

_PVC: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "ckpt", "namespace": "team-a"},
    "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "100Gi"}}},
}


def claim(**spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(_PVC)
    out["spec"].update(spec)
    return out


def found(manifest: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(d.code, d.severity.value, d.path) for d in check_core_kind(manifest)]


@pytest.mark.parametrize(
    "source",
    [
        {"name": "src"},  # no kind
        {"kind": "", "name": "src"},
        {"kind": "VolumeSnapshot", "name": "snap"},  # a snapshot without its group
        {"apiGroup": "example.com", "kind": "Populator", "name": "p"},  # only dataSourceRef takes other kinds
        {"apiGroup": "Bad_Group", "kind": "X", "name": "s"},  # dropped before the group is looked at
        {},
    ],
)
def test_a_data_source_the_server_drops_is_a_warning_not_an_error(source: dict[str, Any]) -> None:
    [(code, severity, path)] = found(claim(dataSource=source))
    assert (code, severity, path) == ("TS505", "warning", "spec.dataSource")
    [warning] = check_core_kind(claim(dataSource=source))
    assert "dataSourceRef" in warning.hint and "empty" in warning.message


@pytest.mark.parametrize(
    "source",
    [
        {"kind": "PersistentVolumeClaim", "name": "src"},
        {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap"},
    ],
)
def test_a_claim_or_snapshot_is_kept_and_accepted(source: dict[str, Any]) -> None:
    assert found(claim(dataSource=source)) == []


def test_what_the_server_keeps_it_still_refuses() -> None:
    # A kept dataSource is validated: a claim without its name.
    assert found(claim(dataSource={"kind": "PersistentVolumeClaim"})) == [("TS500", "error", "spec.dataSource.name")]
    # With a dataSourceRef nothing is dropped: a dataSource without kind is refused, and must match the ref.
    ref = {"apiGroup": "example.com", "kind": "Populator", "name": "p"}
    assert set(found(claim(dataSource={"name": "p"}, dataSourceRef=ref))) == {
        ("TS500", "error", "spec.dataSource.kind"),
        ("TS500", "error", "spec.dataSource"),
    }


def test_an_update_compares_the_claim_as_stored() -> None:
    """The stored claim has no dataSource (it was dropped): sending the same again is no change."""
    dropped = claim(dataSource={"name": "src"})
    assert pvc_update_problems(dropped, copy.deepcopy(dropped)) == []
    assert pvc_update_problems(claim(), dropped) == []
    # A kept one is immutable.
    kept = claim(dataSource={"kind": "PersistentVolumeClaim", "name": "src"})
    assert {d.code for d in pvc_update_problems(claim(), kept)} == {"TS442"}
