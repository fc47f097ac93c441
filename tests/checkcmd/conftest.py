"""Fixtures for ``trainspec check``: an isolated cache, CRDs, and helpers that run the command."""

from __future__ import annotations

import io
import json
import re
import textwrap
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, ROOT
from trainspec.check import default_crd_dirs

CLUSTER = EXAMPLES / "cluster"
KUEUE = CLUSTER / "kueue"
RUNTIMES = CLUSTER / "runtimes"
EXPECT = re.compile(r"^# expect: (TS\d{3}) (\d+):(\d+)$", re.MULTILINE)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never touch the user's cache; one cache per session keeps them fast."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
    monkeypatch.delenv("TRAINSPEC_NO_CACHE", raising=False)
    monkeypatch.delenv("TRAINSPEC_CRDS_DIR", raising=False)
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="session")
def crds() -> Path:
    dirs = default_crd_dirs()
    if not dirs:
        pytest.skip("../shared/crds not found: set TRAINSPEC_CRDS_DIR or place the CRDs next to the project")
    return dirs[0]


def expected(path: Path) -> set[tuple[str, int, int]]:
    """The ``# expect: TSxxx line:col`` lines of an example."""
    return {(code, int(line), int(col)) for code, line, col in EXPECT.findall(path.read_text(encoding="utf-8"))}


def line_of(path: Path, needle: str, column_of: str | None = None) -> tuple[int, int]:
    """(line, column) of the first line containing ``needle``; column of ``column_of`` (or of the
    first non-blank character) on that line. Keeps location asserts readable and robust."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in text:
            target = column_of if column_of is not None else text.strip()[:1]
            return number, text.index(target) + 1
    raise AssertionError(f"{needle!r} not in {path}")


def check(*args: str) -> tuple[int, list[dict[str, Any]]]:
    """Run ``trainspec check ARGS --format json`` in-process: (exit code, diagnostics)."""
    from trainspec.cli.main import main

    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["check", *args, "--format", "json"])
    text = out.getvalue()
    return code, json.loads(text)["diagnostics"] if text.strip() else []


def codes(diagnostics: list[dict[str, Any]], *, errors_only: bool = True) -> set[tuple[str, str, int, int]]:
    """{(code, file, line, column)} of the diagnostics."""
    return {
        (d["code"], d["file"], d["line"], d["column"])
        for d in diagnostics
        if d["severity"] == "error" or not errors_only
    }


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """write(relative path, text): a dedented file under tmp_path."""

    def make(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return make


# A small cluster: one GPU flavor, one team, no cohort (the reference's minimal setup).
MINIMAL_CLUSTER = """
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels: {gpu-tenant: "true"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: h100
spec:
  nodeLabels: {nvidia.com/gpu.product: H100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: gpu-training
spec:
  namespaceSelector: {matchLabels: {gpu-tenant: "true"}}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 384}
      - {name: memory, nominalQuota: 3Ti}
      - {name: nvidia.com/gpu, nominalQuota: 32}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: team-a, name: gpu}
spec: {clusterQueue: gpu-training}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: normal}
value: 100
"""

# A runtime and a job on it, as specs; {extra} goes into the job's spec.
RUNTIME_SPEC = """
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata:
  name: torch-h100
spec:
  framework: torch
  image: nvcr.io/nvidia/pytorch:25.01-py3
  resourcesPerNode: {gpu: 8, cpu: 48, memory: 384Gi}
  scheduling:
    nodeSelector: {nvidia.com/gpu.product: H100}
"""


def job_spec(nodes: int = 8, *, namespace: str = "team-a", extra: str = "", queue: str = "gpu") -> str:
    """A TrainingJob on torch-h100 (8 GPUs a node): nodes on line 9, queue on line 10, extra from 11."""
    return f"""
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata:
  name: llm-pretrain
  namespace: {namespace}
spec:
  runtime: torch-h100
  command: [torchrun, train.py]
  nodes: {nodes}
  queue: {queue}
{textwrap.dedent(extra).strip() and textwrap.indent(textwrap.dedent(extra).strip(), "  ")}
"""
