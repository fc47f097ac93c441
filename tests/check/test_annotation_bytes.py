"""The API server bounds an object's annotations in bytes (Go's ``len``), keys and values together,
at 256 KiB: `check` counts bytes too, so multi-byte text is judged as the server judges it."""

from __future__ import annotations

from trainspec.check.schema.core_kinds import check_core_kind
from trainspec.dsl.kube_facts import ANNOTATIONS_TOTAL_MAX


def claim(note: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "ckpt", "namespace": "team-a", "annotations": {"k": note}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


def test_annotations_are_bounded_in_bytes() -> None:
    at_limit = "é" * ((ANNOTATIONS_TOTAL_MAX - 1) // 2) + "x"  # 2 bytes a character: exactly the limit
    assert len(b"k") + len(at_limit.encode()) == ANNOTATIONS_TOTAL_MAX
    assert check_core_kind(claim(at_limit)) == []
    [problem] = check_core_kind(claim(at_limit + "x"))
    assert (problem.code, problem.path) == ("TS500", "metadata.annotations")
    assert f"{ANNOTATIONS_TOTAL_MAX + 1} bytes" in problem.message
