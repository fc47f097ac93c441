"""The generator of the CRD data ``trainspec check`` ships (tools/crd_data.py), on tiny synthetic
CRDs: structure and rules kept, prose dropped, output deterministic, unknown keywords refused, and
writing prunes only its own files. That the shipped data is fresh is tests/test_generated_fresh.py's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools import crd_data


def _crd(group: str, kind: str, schema: dict[str, Any], plural: str | None = None) -> str:
    plural = plural or kind.lower() + "s"
    return json.dumps(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}", "annotations": {"note": "prose here"}},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"kind": kind, "plural": plural, "listKind": f"{kind}List"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "deprecationWarning": "old, says upstream",
                        "additionalPrinterColumns": [{"name": "Age", "type": "date", "description": "prose"}],
                        "schema": {"openAPIV3Schema": schema},
                    }
                ],
            },
        }
    )


SCHEMA = {
    "type": "object",
    "description": "Widget is upstream prose.",
    "properties": {
        "spec": {
            "type": "object",
            "description": "Spec prose.",
            "required": ["size"],
            "x-kubernetes-validations": [
                {
                    "rule": "self.size <= 10",
                    "message": "at most 10",
                    "fieldPath": ".size",
                    "reason": "FieldValueInvalid",
                }
            ],
            "properties": {
                "size": {"type": "integer", "format": "int32", "description": "Size prose.", "default": 1},
                # a *field* called description is structure, not prose: it stays
                "description": {"type": "string", "maxLength": 5, "description": "The field's own prose."},
                "mode": {"type": "string", "enum": ["a", "b"], "example": "a", "title": "Mode"},
                "extra": {
                    "type": "object",
                    "default": {"description": "a default value is data"},
                    "additionalProperties": {"type": "string", "description": "prose"},
                },
            },
        },
    },
}


def _source(tmp_path: Path) -> Path:
    """A --from folder with one tiny CRD per bundle of the generator."""
    source = tmp_path / "crds"
    for bundle, group, kind in (
        ("trainer", "trainer.kubeflow.org", "TrainJob"),
        ("jobset", "jobset.x-k8s.io", "JobSet"),
        ("kueue", "kueue.x-k8s.io", "Widget"),
        ("kuberay", "ray.io", "RayJob"),
        ("training-operator", "kubeflow.org", "PyTorchJob"),
        ("mpi-operator", "kubeflow.org", "MPIJob"),
    ):
        (source / bundle).mkdir(parents=True)
        (source / bundle / f"{group}_{kind.lower()}s.yaml").write_text(_crd(group, kind, SCHEMA), encoding="utf-8")
    # A kind the v1 operator defines but trainspec never emits is not shipped (`only`).
    (source / "training-operator" / "kubeflow.org_tfjobs.yaml").write_text(
        _crd("kubeflow.org", "TFJob", SCHEMA), encoding="utf-8"
    )
    return source


# -- the generator --------------------------------------------------------------------------------


def test_generator_keeps_structure_and_rules_and_drops_prose(tmp_path: Path) -> None:
    files = crd_data.generate(_source(tmp_path))
    crd = json.loads(files["kueue.x-k8s.io_widgets.json"])
    assert crd["metadata"] == {"name": "widgets.kueue.x-k8s.io"}
    (version,) = crd["spec"]["versions"]
    assert set(version) == {"name", "served", "storage", "schema"}
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec == {
        "type": "object",
        "required": ["size"],
        "x-kubernetes-validations": [
            {"rule": "self.size <= 10", "message": "at most 10", "fieldPath": ".size", "reason": "FieldValueInvalid"}
        ],
        "properties": {
            "size": {"type": "integer", "format": "int32", "default": 1},
            "description": {"type": "string", "maxLength": 5},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "extra": {
                "type": "object",
                "default": {"description": "a default value is data"},
                "additionalProperties": {"type": "string"},
            },
        },
    }
    text = "".join(files.values())
    assert "prose" not in text and "upstream" not in text


def test_generator_output_is_deterministic_and_sorted(tmp_path: Path) -> None:
    first = crd_data.generate(_source(tmp_path))
    assert first == crd_data.generate(tmp_path / "crds")
    for name, text in first.items():
        assert text.endswith("\n") and text.count("\n") == 1, name
        assert text == crd_data.dumps(json.loads(text)), f"{name} is not in sorted compact form"


def test_unknown_schema_keyword_stops_the_generator(tmp_path: Path) -> None:
    source = _source(tmp_path)
    odd = {**SCHEMA, "x-kubernetes-new-thing": True}
    (source / "kueue" / "kueue.x-k8s.io_widgets.yaml").write_text(_crd("kueue.x-k8s.io", "Widget", odd))
    with pytest.raises(crd_data.VendorError, match="x-kubernetes-new-thing"):
        crd_data.generate(source)


def test_stale_reports_changed_data_and_write_prunes_its_own_files(tmp_path: Path) -> None:
    source, out = _source(tmp_path), tmp_path / "out"
    files = crd_data.generate(source)
    assert crd_data.write(files, out) == sorted(files)
    assert crd_data.stale(files, out) == []
    (out / "jobset.x-k8s.io_jobsets.json").write_text("{}\n")
    (out / "unrelated.json").write_text("{}\n")
    assert crd_data.stale(files, out) == ["jobset.x-k8s.io_jobsets.json"]
    (source / "kueue" / "kueue.x-k8s.io_widgets.yaml").unlink()
    (source / "kueue" / "kueue.x-k8s.io_gadgets.yaml").write_text(_crd("kueue.x-k8s.io", "Gadget", SCHEMA))
    files = crd_data.generate(source)
    assert "kueue.x-k8s.io_widgets.json" in crd_data.stale(files, out)  # listed in the old index: stale
    crd_data.write(files, out)
    assert not (out / "kueue.x-k8s.io_widgets.json").exists()  # listed in the old index: pruned
    assert (out / "unrelated.json").exists()  # never written by the generator: left alone
    assert crd_data.stale(files, out) == []
