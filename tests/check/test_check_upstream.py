"""The 9 upstream built-in runtimes pass schema + CEL; TrainJobs against them are checked too."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trainspec.check import check_manifests

UPSTREAM = Path(__file__).resolve().parents[2].parent / "shared" / "upstream" / "trainer-runtimes"


def _load() -> list[tuple[str, dict]]:
    if not UPSTREAM.is_dir():
        pytest.skip(f"../shared/upstream/trainer-runtimes not found: {UPSTREAM}")
    out = []
    for path in sorted(UPSTREAM.rglob("*.yaml")):
        docs = yaml.safe_load_all(path.read_text(encoding="utf-8"))
        out.extend(
            (str(path.relative_to(UPSTREAM)), doc)
            for doc in docs
            if isinstance(doc, dict) and doc.get("kind") != "Kustomization"
        )
    return out


@pytest.fixture(scope="module")
def upstream() -> list[tuple[str, dict]]:
    return _load()


def test_nine_builtin_runtimes_pass_schema_and_cel(upstream, crd_dirs):
    assert len(upstream) == 9
    assert {m["kind"] for _, m in upstream} == {"ClusterTrainingRuntime"}
    found = check_manifests(upstream, crd_dirs)
    # The only finding is trainspec's own policy on the runtime that disables the webhook.
    assert [(d.code, d.file, d.path) for d in found] == [
        (
            "TS503",
            "data-cache/torch_distributed_with_cache.yaml",
            "metadata.labels['trainer.kubeflow.org/webhook-validation']",
        ),
    ]
    assert check_manifests(upstream, crd_dirs, policy=False) == []


@pytest.mark.parametrize("name", ["torch-distributed", "deepspeed-distributed", "torchtune-llama3.2-1b"])
def test_trainjob_against_builtin_runtime(upstream, crd_dirs, name):
    runtimes = [m for _, m in upstream]
    trainjob = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "a" * 40},
        "spec": {
            "runtimeRef": {"name": name},
            "trainer": {"numNodes": 3},
            "initializer": {"dataset": {"storageUri": "hf://org/ds"}},
        },
    }
    found = check_manifests([("tj.yaml", trainjob)], crd_dirs, known_runtimes=runtimes)
    summary = sorted((d.code, d.path) for d in found)
    if name == "torchtune-llama3.2-1b":
        # 40 characters plus "-dataset-initializer-0-0-abcde" / "-model-initializer-0-0-abcde" overflow.
        assert summary == [("TS503", "metadata.name"), ("TS503", "metadata.name")]
    else:
        assert summary == [("TS503", "spec.initializer.dataset")]
