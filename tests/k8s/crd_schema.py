"""Test helper: check an emitted dict against a CRD's ``openAPIV3Schema``.

It walks the dict and the schema together and reports every key path the schema does not
declare, every scalar of the wrong type, every value outside an ``enum`` and every missing
``required`` key. It is a structural check only (no CEL, no defaults, no size limits): the full
manifest checker lives elsewhere.

The CRDs are looked up as ``../shared/crds`` relative to the repository root, unless the
environment variable ``TRAINSPEC_CRDS_DIR`` names another directory.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

REPO_ROOT = Path(__file__).resolve().parents[2]

#: kind -> CRD file, relative to the CRDs directory.
CRD_FILES: dict[str, str] = {
    "TrainJob": "trainer/trainer.kubeflow.org_trainjobs.yaml",
    "TrainingRuntime": "trainer/trainer.kubeflow.org_trainingruntimes.yaml",
    "ClusterTrainingRuntime": "trainer/trainer.kubeflow.org_clustertrainingruntimes.yaml",
    "JobSet": "jobset/jobset.x-k8s.io_jobsets.yaml",
}


def crds_dir() -> Path:
    """Where the CRDs are expected (it may not exist)."""
    override = os.environ.get("TRAINSPEC_CRDS_DIR")
    if override:
        return Path(override)
    return REPO_ROOT.parent / "shared" / "crds"


def missing_reason() -> str | None:
    """Why the CRD checks cannot run, or None when every CRD file is present."""
    base = crds_dir()
    absent = [name for name in CRD_FILES.values() if not (base / name).is_file()]
    if absent:
        return (
            f"CRD files not found under {base} ({', '.join(absent)}); "
            "set TRAINSPEC_CRDS_DIR to the directory holding trainer/ and jobset/"
        )
    return None


@functools.cache
def crd_schema(kind: str, version: str | None = None) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of ``kind`` (the storage version unless ``version`` is given)."""
    path = crds_dir() / CRD_FILES[kind]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open(encoding="utf-8") as handle:
        docs = [doc for doc in yaml.load_all(handle, Loader=loader) if doc]
    crd = next(doc for doc in docs if doc.get("kind") == "CustomResourceDefinition")
    assert crd["spec"]["names"]["kind"] == kind, path
    versions = crd["spec"]["versions"]
    chosen = next(v for v in versions if (v["name"] == version if version else v.get("storage", False)))
    schema: dict[str, Any] = chosen["schema"]["openAPIV3Schema"]
    return schema


def check(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """Every structural problem of ``value`` against ``schema``, as ``"<path>: <problem>"``."""
    problems: list[str] = []
    _walk(value, schema, path or "", problems)
    return problems


def _walk(value: Any, schema: dict[str, Any], path: str, problems: list[str]) -> None:
    where = path or "<root>"
    if schema.get("x-kubernetes-preserve-unknown-fields") and "properties" not in schema:
        return
    if schema.get("x-kubernetes-int-or-string"):
        if type(value) not in (int, str):
            problems.append(f"{where}: expected int-or-string, got {type(value).__name__}")
        return
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            problems.append(f"{where}: expected object, got {type(value).__name__}")
            return
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        if properties is not None:
            for key, item in value.items():
                if key not in properties:
                    problems.append(f"{where}: unknown field {key!r}")
                else:
                    _walk(item, properties[key], f"{path}.{key}", problems)
            problems.extend(
                f"{where}: missing required field {key!r}" for key in schema.get("required", ()) if key not in value
            )
        elif isinstance(extra, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    problems.append(f"{where}: map key {key!r} is not a string")
                _walk(item, extra, f"{path}[{key!r}]", problems)
        # else: a free-form object (e.g. the root ``metadata``), checked by the API server.
    elif kind == "array":
        if not isinstance(value, list):
            problems.append(f"{where}: expected array, got {type(value).__name__}")
            return
        for index, item in enumerate(value):
            _walk(item, schema.get("items", {}), f"{path}[{index}]", problems)
    elif kind == "string":
        if not isinstance(value, str):
            problems.append(f"{where}: expected string, got {type(value).__name__}")
    elif kind == "integer":
        if type(value) is not int:
            problems.append(f"{where}: expected integer, got {type(value).__name__}")
    elif kind == "boolean":
        if type(value) is not bool:
            problems.append(f"{where}: expected boolean, got {type(value).__name__}")
    elif kind == "number" and type(value) not in (int, float):
        problems.append(f"{where}: expected number, got {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} is not one of {schema['enum']}")
