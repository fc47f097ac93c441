"""Loading CRDs (directories, multi-document files, List kinds), locating them, import cost."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trainspec.check import check_manifests, default_crd_dirs, load_crds

_CRD = textwrap.dedent(
    """\
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: widgets.{group}
    spec:
      group: {group}
      names: {{kind: Widget, plural: widgets}}
      scope: Namespaced
      versions:
      - name: v1
        served: true
        storage: true
        schema:
          openAPIV3Schema:
            type: object
            properties:
              apiVersion: {{type: string}}
              kind: {{type: string}}
              metadata: {{type: object}}
              spec:
                type: object
                properties:
                  size: {{type: integer, default: 1, x-kubernetes-validations: [{{rule: "self <= 3", message: too big}}]}}
      - name: v0
        served: false
        storage: false
    """
)


def _widget(group: str, size: int = 2) -> dict:
    return {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": size}}


def test_directory_multidoc_and_list(tmp_path: Path):
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "one.yaml").write_text(_CRD.format(group="a.example.com"))
    (tmp_path / "multi.yml").write_text(
        _CRD.format(group="b.example.com") + "---\n" + _CRD.format(group="c.example.com")
    )
    import yaml

    listed = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [yaml.safe_load(_CRD.format(group="d.example.com"))],
    }
    (tmp_path / "list.json").write_text(__import__("json").dumps(listed))
    (tmp_path / "kustomization.yaml").write_text("kind: Kustomization\nresources: []\n")
    registry = load_crds([tmp_path])
    assert sorted(c.api_version for c in registry) == [f"{g}.example.com/v1" for g in "abcd"]
    assert registry.lookup("a.example.com/v0", "Widget") is None  # not served
    manifests = [(f"{g}.yaml", _widget(f"{g}.example.com")) for g in "abcd"]
    assert check_manifests(manifests, [tmp_path]) == []
    found = check_manifests([("big.yaml", _widget("a.example.com", 5))], [tmp_path / "nested" / "one.yaml"])
    assert [(d.code, d.path, d.message) for d in found] == [("TS501", "spec.size", "too big")]


def test_unparseable_crd_file_is_a_warning(tmp_path: Path):
    (tmp_path / "broken.yaml").write_text("kind: [unclosed\n")
    found = check_manifests([("w.yaml", _widget("a.example.com"))], [tmp_path])
    assert [(d.code, d.severity.value) for d in found] == [("TS103", "warning"), ("TS504", "warning")]


def test_registry_is_memoised(crd_dirs):
    assert load_crds(crd_dirs) is load_crds(crd_dirs)


def test_default_crd_dirs(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("TRAINSPEC_CRDS_DIR", str(tmp_path))
    assert default_crd_dirs() == [tmp_path]
    monkeypatch.setenv("TRAINSPEC_CRDS_DIR", str(tmp_path / "missing"))
    assert default_crd_dirs() == []
    monkeypatch.delenv("TRAINSPEC_CRDS_DIR")
    found = default_crd_dirs()
    assert found == [] or found[0].parts[-2:] == ("shared", "crds")


def test_import_is_cheap_and_self_contained():
    code = (
        "import sys, trainspec.check\n"
        "heavy = [m for m in ('jsonschema', 'yaml', 'celpy', 'lark') if m in sys.modules]\n"
        "ours = sorted(m for m in sys.modules if m.startswith('trainspec.') and not m.startswith("
        "'trainspec.check'))\n"
        "print(heavy, ours)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    # Besides diagnostics (with its codes, and the record base and exception root it is built on),
    # only the standard-library fact modules: the one quantity parser, the Kubernetes facts and
    # name rules (trainspec.k8s loads its models lazily).
    assert out == (
        "[] ['trainspec.dsl', 'trainspec.dsl.codes', 'trainspec.dsl.diagnostics', 'trainspec.dsl.errors', "
        "'trainspec.dsl.framework', 'trainspec.dsl.framework.quantity', 'trainspec.dsl.kube_facts', "
        "'trainspec.dsl.record', 'trainspec.k8s', 'trainspec.k8s.name_rules', 'trainspec.k8s.wellknown']"
    )


@pytest.mark.parametrize("bad", [None, "text", ["a"]])
def test_non_mapping_manifest(bad, crd_dirs):
    found = check_manifests([("x.yaml", bad)], crd_dirs)
    assert [(d.code, d.file) for d in found] == [("TS500", "x.yaml")]


_KUBECTL = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  creationTimestamp: "2026-01-01T00:00:00Z"
  generation: 1
  managedFields:
  - apiVersion: apiextensions.k8s.io/v1
    manager: kubectl
  name: gadgets.e.example.com
spec:
  conversion:
    strategy: None
  group: e.example.com
  names:
    kind: Gadget
    listKind: GadgetList
    plural: gadgets
  scope: Cluster
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              mode: {type: string, enum: [fast, slow]}
    served: true
    storage: true
status:
  acceptedNames:
    kind: Gadget
    plural: gadgets
"""


def test_kubectl_output_is_indexed_lazily(tmp_path: Path):
    (tmp_path / "gadget.yaml").write_text(_KUBECTL)
    registry = load_crds([tmp_path])
    assert [f.header for f in registry._files] == [("e.example.com", "Gadget")]
    assert not registry._files[0].parsed
    gadget = {
        "apiVersion": "e.example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g"},
        "spec": {"mode": "x"},
    }
    found = check_manifests([("g.yaml", gadget)], [tmp_path])
    assert [(d.code, d.path) for d in found] == [("TS500", "spec.mode")]
    assert registry._files[0].parsed
    crd = registry.lookup("e.example.com/v1", "Gadget")
    assert crd is not None and crd.scope == "Cluster"
