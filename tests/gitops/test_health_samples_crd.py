"""The health samples have the shape the real CRDs give the objects: every field declared, of its type.

A sample with a misspelt field (``jobStatus`` for ``jobsStatus``) or a value of the wrong type
(``status: True`` where the API server stores the string ``"True"``) would test a script against an
object no cluster holds. Each sample is walked against the ``openAPIV3Schema`` of its CRD in
``../shared/crds`` (the versions the project targets; skipped where that folder is absent, which CI
refuses). ``required`` is not checked: the samples leave out spec fields the scripts do not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from trainspec.check import default_crd_dirs

SAMPLES = Path(__file__).parent / "samples"
PATHS = sorted(SAMPLES.glob("*/*.yaml"))


@pytest.fixture(scope="module")
def schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> openAPIV3Schema, for the kinds the samples are of."""
    dirs = default_crd_dirs()
    if not dirs:
        pytest.skip("../shared/crds not found: set TRAINSPEC_CRDS_DIR or place the CRDs next to the project")
    wanted = {(s["apiVersion"], s["kind"]) for s in map(_load, PATHS)}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for directory in dirs:
        for path in sorted(directory.rglob("*.yaml")):
            group, _, plural = path.stem.partition("_")
            if not any(api.startswith(f"{group}/") and kind.lower() + "s" == plural for api, kind in wanted):
                continue
            crd = yaml.safe_load(path.read_text(encoding="utf-8"))
            for version in crd["spec"]["versions"]:
                key = (f"{crd['spec']['group']}/{version['name']}", crd["spec"]["names"]["kind"])
                if key in wanted:
                    found[key] = version["schema"]["openAPIV3Schema"]
    assert set(found) == wanted, f"no CRD for {sorted(wanted - set(found))}"
    return found


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def problems(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    """Fields ``schema`` does not declare and values not of its type, under ``path``."""
    if schema.get("x-kubernetes-int-or-string"):
        return (
            [] if isinstance(value, (int, str)) and not isinstance(value, bool) else [f"{path}: not an int or string"]
        )
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{path}: not an object"]
        if schema.get("x-kubernetes-preserve-unknown-fields") or path == ".metadata":
            return []
        found: list[str] = []
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in properties:
                found += problems(item, properties[key], f"{path}.{key}")
            elif isinstance(extra, dict):
                found += problems(item, extra, f"{path}.{key}")
            elif extra is not True:
                found.append(f"{path}.{key}: not in the schema")
        return found
    if kind == "array":
        if not isinstance(value, list):
            return [f"{path}: not an array"]
        return [p for i, item in enumerate(value) for p in problems(item, schema.get("items", {}), f"{path}[{i}]")]
    expected = {"string": str, "boolean": bool, "integer": int, "number": (int, float)}.get(str(kind))
    if expected is not None and (not isinstance(value, expected) or (kind != "boolean" and isinstance(value, bool))):
        return [f"{path}: {value!r} is not a {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{path}: {value!r} is not one of {schema['enum']}"]
    return []


@pytest.mark.parametrize("path", PATHS, ids=[f"{p.parent.name}/{p.stem}" for p in PATHS])
def test_the_sample_fits_its_crd(path: Path, schemas: dict[tuple[str, str], dict[str, Any]]) -> None:
    sample = _load(path)
    assert problems(sample, schemas[(sample["apiVersion"], sample["kind"])], "") == []


def test_the_walk_finds_what_it_should(schemas: dict[tuple[str, str], dict[str, Any]]) -> None:
    schema = schemas[("trainer.kubeflow.org/v1alpha1", "TrainJob")]
    wrong = {"spec": {"suspend": "yes"}, "status": {"jobStatus": [], "conditions": [{"status": True}]}}
    assert problems(wrong, schema, "") == [
        ".spec.suspend: 'yes' is not a boolean",
        ".status.jobStatus: not in the schema",
        ".status.conditions[0].status: True is not a string",
    ]
