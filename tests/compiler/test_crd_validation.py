"""Every manifest compiled from examples/ passes the real CRDs (strict schema + every CEL rule)
and the admission-webhook rules, as a real cluster would check them."""

from __future__ import annotations

import pytest
import yaml

from tests.compiler.test_golden import CASES, compiled
from tests.conftest import ROOT
from trainspec.check import check_manifests, default_crd_dirs

CRDS = default_crd_dirs()
pytestmark = pytest.mark.skipif(not CRDS, reason="../shared/crds not found (set TRAINSPEC_CRDS_DIR to the CRD folder)")
UPSTREAM = ROOT.parent / "shared" / "upstream" / "trainer-runtimes"
#: Examples whose jobs use a runtime the cluster owns (Kubeflow Trainer's): no runtime is emitted,
#: and the TrainJob is checked against upstream's own definition of it.
EXTERNAL = {"upstream-torch"}
#: Examples on engines that fold the runtime into each job's object (no runtime object of its own).
FOLDED = {"ray-train": "RayJob", "elastic-pytorchjob": "PyTorchJob", "mpijob": "MPIJob"}


def manifests(name: str) -> list[dict]:
    return list(yaml.safe_load_all(compiled(name)))


def upstream_runtimes() -> list[dict]:
    if not UPSTREAM.is_dir():
        pytest.skip(f"../shared/upstream/trainer-runtimes not found: {UPSTREAM}")
    texts = (path.read_text(encoding="utf-8") for path in sorted(UPSTREAM.rglob("*.yaml")))
    docs = (doc for text in texts for doc in yaml.safe_load_all(text))
    return [doc for doc in docs if isinstance(doc, dict) and doc.get("kind") == "ClusterTrainingRuntime"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_manifests_pass_crds_cel_and_webhooks(name: str, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    objs = manifests(name)
    known = upstream_runtimes() if name in EXTERNAL else []
    found = check_manifests([(f"{name}[{i}]", m) for i, m in enumerate(objs)], CRDS, known_runtimes=known)
    assert [f"{d.code} {d.file} {d.path}: {d.message}" for d in found] == []
    kinds = {m["kind"] for m in objs}
    if name in EXTERNAL:
        assert "TrainJob" in kinds and "ClusterTrainingRuntime" not in kinds
    elif name in FOLDED:
        assert FOLDED[name] in kinds and not kinds & {"TrainJob", "ClusterTrainingRuntime", "TrainingRuntime"}
    else:
        assert {"TrainJob", "ClusterTrainingRuntime"} <= kinds


def test_the_checker_is_not_vacuous(monkeypatch) -> None:
    """The same pipeline rejects a TrainJob broken the way stale docs break them."""
    monkeypatch.chdir(ROOT)
    objs = manifests("llama-sft")
    job = next(m for m in objs if m["kind"] == "TrainJob")
    job["spec"]["podTemplateOverrides"] = []  # removed in Trainer 2.2
    job["spec"]["trainer"]["numProcPerNode"] = 0  # CEL: >= 1
    job["metadata"]["name"] = "Llama_SFT"  # CEL: RFC 1035
    runtime = next(m for m in objs if m["kind"] == "ClusterTrainingRuntime")
    runtime["spec"]["mlPolicy"]["torch"]["numProcPerNode"] = "auto"  # removed in Trainer 2.2
    codes = {(d.code, d.path) for d in check_manifests([(None, m) for m in objs], CRDS)}
    assert ("TS500", "spec.podTemplateOverrides") in codes
    assert ("TS501", "spec.trainer.numProcPerNode") in codes
    assert any(code == "TS501" and path in ("", "metadata.name") for code, path in codes)
    assert ("TS500", "spec.mlPolicy.torch.numProcPerNode") in codes
