"""Golden files: each example compiles to the recorded manifests, compared by meaning.

Regenerate after an intended change with ``UPDATE_GOLDEN=1 pytest tests/compiler/test_golden.py``
and review the diff like code.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLES, ROOT
from trainspec.compiler.emit import render_stream
from trainspec.compiler.pipeline import compile_paths

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "ddp-cpu": (["examples/ddp-cpu.yaml"], None),
    "llama-sft": (["examples/llama-sft"], None),
    "deepspeed": (["examples/deepspeed.yaml"], None),
    "jax": (["examples/jax.yaml"], None),
    "upstream-torch": (["examples/upstream-torch.yaml"], None),
    "python-ddp-cpu": (["examples/python/ddp_cpu.py"], None),
    "ray-train": (["examples/ray-train"], None),
    "elastic-pytorchjob": (["examples/elastic-pytorchjob.yaml"], None),
    "mpijob": (["examples/mpijob.yaml"], None),
    "observability": (["examples/observability"], None),
    "llama-pretrain": (["examples/llama-pretrain"], None),
    "tracking-mlflow": (["examples/tracking-mlflow.yaml"], None),
    "llama3-70b-preset": (["examples/llama3-70b-preset.yaml"], None),
    # The runtimes the pipeline uses and the objects of its job step (what the launcher applies).
    "pipeline": (["examples/pipeline"], None),
    "templated-prod": (
        ["examples/templated"],
        {"namespace": "ml-prod", "registry": "registry.example.com", "tag": "2026.11.28", "queue": "prod-batch"},
    ),
}


def compiled(name: str) -> str:
    paths, values = CASES[name]
    result = compile_paths([str(ROOT / p) for p in paths], values=values)
    assert result.ok, [d.message for d in result.diagnostics]
    return render_stream([*result.outputs, *result.pipeline_jobs])


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_matches_golden(name: str, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    text = compiled(name)
    path = GOLDEN / f"{name}.yaml"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}: run with UPDATE_GOLDEN=1"
    assert list(yaml.safe_load_all(text)) == list(yaml.safe_load_all(path.read_text(encoding="utf-8")))


def test_python_spec_equals_yaml_spec(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    assert compiled("python-ddp-cpu") == compiled("ddp-cpu")


def test_every_example_spec_has_a_golden_case() -> None:
    covered = {Path(p).parts[1] for paths, _ in CASES.values() for p in paths}
    top = {p.name for p in EXAMPLES.iterdir() if p.suffix == ".yaml" or (p.is_dir() and any(p.glob("*.yaml")))}
    ignored = {
        "invalid",
        "templated",
        "cluster",
        "diff",
        "kfp",
        "train_ddp",
        "migrate",
    }  # migrate: a PyTorchJob to migrate (docs/migrate.md), not a spec
    assert top - ignored - covered == set()
