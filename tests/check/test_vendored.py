"""The CRD data shipped in the package: free of upstream prose, read lazily by the registry, and
giving the same verdicts as the real CRDs. Its generator is tests/generators/test_crd_data_generator.py's
to test; that the data is fresh, tests/test_generated_fresh.py's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, ROOT, SHARED
from trainspec.check import check_manifest, load_crds
from trainspec.check.schema import vendored
from trainspec.check.schema.crds import CrdRegistry
from trainspec.compiler.targets import Target

SHARED_CRDS = SHARED / "crds"
VERDICTS = SHARED / "apiserver-verdicts"


def _need_shared() -> None:
    """The real CRDs; a skip with a reason, except under CI where their absence is a failure."""
    if not SHARED_CRDS.is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {SHARED_CRDS} is missing: the shipped CRD data cannot be verified")
        pytest.skip(f"{SHARED_CRDS} not found: cannot compare the shipped CRD data with the real CRDs")


# -- the shipped data -----------------------------------------------------------------------------


def _schemas(node: Any, at: str = "") -> Any:
    """Every schema node under ``node`` (an openAPIV3Schema), with its path."""
    yield at, node
    for key in ("properties", "patternProperties", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            yield from _schemas(sub, f"{at}.{name}")
    for key in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(node.get(key) or ()):
            yield from _schemas(sub, f"{at}.{key}[{i}]")
    for key in ("items", "additionalProperties", "not"):
        if isinstance(node.get(key), dict):
            yield from _schemas(node[key], f"{at}.{key}")


def test_shipped_data_holds_no_prose_and_keeps_every_rule() -> None:
    rules = 0
    for path in sorted(vendored.DATA_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if path.name == vendored.INDEX:
            continue
        assert set(data["metadata"]) == {"name"}, path.name
        for version in data["spec"]["versions"]:
            assert not {"deprecationWarning", "additionalPrinterColumns"} & set(version)
            for at, node in _schemas(version["schema"]["openAPIV3Schema"]):
                assert not {"description", "title", "example", "externalDocs"} & set(node), f"{path.name}{at}"
                rules += len(node.get("x-kubernetes-validations") or ())
    assert rules > 100  # the Trainer, JobSet and Kueue CRDs carry well over a hundred CEL rules


def test_shipped_bundles_and_target_matching() -> None:
    found = {b.name: b for b in vendored.bundles()}
    assert {name: str(b) for name, b in found.items()} == {
        "trainer": "Kubeflow Trainer 2.3",
        "jobset": "JobSet 0.12",
        "kueue": "Kueue 0.19",
        "kuberay": "KubeRay 1.7",
        "training-operator": "Kubeflow Training Operator 1.9",
        "mpi-operator": "mpi-operator 0.8",
    }
    assert found["trainer"].groups == {"trainer.kubeflow.org"}
    assert all(path.is_file() for b in found.values() for path in b.files)
    engines = ["kuberay", "training-operator", "mpi-operator"]  # one version each: every target
    used, other = vendored.shipped_for(Target())
    assert [b.name for b in used] == ["trainer", "jobset", "kueue", *engines] and other == []
    used, other = vendored.shipped_for(Target(trainer=(2, 1), kueue=(0, 16)))
    assert [b.name for b in used] == engines and [b.name for b in other] == ["trainer", "jobset", "kueue"]
    used, other = vendored.shipped_for(Target(trainer=(2, 3), kueue=None))
    assert [b.name for b in used] == ["trainer", "jobset", *engines] and [b.name for b in other] == ["kueue"]


def test_damaged_index_means_no_shipped_data(tmp_path: Path) -> None:
    assert vendored.bundles(tmp_path) == []
    (tmp_path / vendored.INDEX).write_text('{"format": 1, "bundles": [{"name": 3}]}')
    assert vendored.bundles(tmp_path) == []
    (tmp_path / vendored.INDEX).write_text('{"format": 99, "bundles": []}')
    assert vendored.bundles(tmp_path) == []


def test_registry_reads_shipped_files_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [p for b in vendored.bundles() for p in b.files]
    for path in files:  # the header scan knows every file without parsing it
        header = vendored.scan_json_header(path.read_text(encoding="utf-8"))
        assert header is not None and header[0] in path.name, path.name
    parsed: list[int] = []
    real = vendored.load_json_documents
    from trainspec.check.schema import crds as crds_module

    monkeypatch.setattr(crds_module, "load_json_documents", lambda text: parsed.append(1) or real(text))
    registry = CrdRegistry(files)
    assert parsed == []
    crd = registry.lookup("trainer.kubeflow.org/v1alpha1", "TrainJob")
    assert crd is not None and crd.scope == "Namespaced" and parsed == [1]
    assert registry.served_versions("kueue.x-k8s.io", "ClusterQueue") == ["v1beta1", "v1beta2"]
    assert len(parsed) == 2


def test_a_json_named_crd_file_holding_yaml_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "widget.json").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: example.com\n"
        "  names: {kind: Widget, plural: widgets}\n  versions:\n  - name: v1\n    served: true\n"
        "    schema: {openAPIV3Schema: {type: object}}\n",
        encoding="utf-8",
    )
    registry = CrdRegistry([tmp_path / "widget.json"])
    assert registry.lookup("example.com/v1", "Widget") is not None and registry.problems == []


def _verdict_objects() -> list[tuple[str, dict[str, Any]]]:
    import yaml

    shipped = {group for b in vendored.bundles() for group in b.groups}
    out = []
    for path in sorted(VERDICTS.glob("*.yaml")):
        docs = yaml.safe_load_all(path.read_text(encoding="utf-8"))
        out.extend(
            (path.name, doc)
            for doc in docs
            if isinstance(doc, dict) and str(doc.get("apiVersion", "")).rpartition("/")[0] in shipped
        )
    from trainspec.compiler.emit import manifest_dicts
    from trainspec.compiler.pipeline import Options, run

    result = run([str(EXAMPLES)], Options(project=None))
    out += [
        (f"compiled {o.path}", d)
        for o in result.outputs
        for d in manifest_dicts(o.objects)
        if "/" not in d["apiVersion"] or d["apiVersion"].rpartition("/")[0] in shipped
    ]
    return out


def test_shipped_data_gives_the_verdicts_of_the_real_crds() -> None:
    """Every API-server verdict object and every compiled example, of a shipped group: the same
    findings from the shipped data as from the real CRDs (stripping prose changes no verdict)."""
    _need_shared()
    objects = _verdict_objects()
    assert len(objects) > 40
    real = load_crds([SHARED_CRDS])
    shipped = CrdRegistry([p for b in vendored.bundles() for p in b.files])
    rejected = 0
    for name, manifest in objects:
        expected = check_manifest(manifest, real)
        assert check_manifest(manifest, shipped) == expected, name
        rejected += any(d.is_error for d in expected)
    assert rejected > 10  # the comparison covers rejections, not only clean objects


# -- shipped as package data ----------------------------------------------------------------------


@pytest.mark.slow
def test_installed_package_ships_the_data_and_check_uses_it_without_shared(tmp_path: Path) -> None:
    """Lay the package out as a wheel installs it (setuptools' build_py, which applies the
    pyproject ``package-data`` a wheel gets; offline, no ``wheel`` package needed), then run
    ``trainspec check`` from a folder where no ../shared can be found: CRD findings still come."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "trainspec", src / "trainspec", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py", "--build-lib", str(site)],
        cwd=src,
        check=True,
        capture_output=True,
        timeout=300,
    )
    installed = sorted(p.name for p in (site / "trainspec" / "check" / "schema" / "data").glob("*.json"))
    assert installed == sorted(p.name for p in vendored.DATA_DIR.glob("*.json"))
    work = tmp_path / "work"
    work.mkdir()
    (work / "tj.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t, namespace: a}\n"
        "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {numNodes: 2147483648}\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TRAINSPEC_CRDS_DIR", "PYTHONPATH")}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "cache"))
    where = subprocess.run(
        [sys.executable, "-c", "import trainspec; print(trainspec.__file__)"],
        cwd=work,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.stdout.strip().startswith(str(site)), where.stdout + where.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "trainspec", "check", "tj.yaml", "--format", "json"],
        cwd=work,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = json.loads(proc.stdout)["diagnostics"]
    assert ("TS500", "spec.trainer.numNodes") in {(d["code"], d["path"]) for d in found}
