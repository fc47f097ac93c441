"""The accelerator inferred from a runtime's GPU node labels (issue 25, "fewer numbers to type").

The label tables, the one function the planner asks ("the accelerator of this runtime"), and the
note (TS461) through the real pipeline and the command line: located at the label, a note and
not a warning, said once per runtime, never when the runtime writes its accelerator.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from trainspec.compiler.parallelism import fromplan
from trainspec.compiler.pipeline import Options, run
from trainspec.dsl import codes
from trainspec.dsl.spec.models import Runtime
from trainspec.dsl.spec.parallelism import parse_bandwidth
from trainspec.k8s import gpu_products
from trainspec.k8s.gpu_products import from_labels, runtime_accelerator
from trainspec.k8s.wellknown import (
    GKE_ACCELERATOR_LABEL,
    GPU_PRODUCT_LABEL,
    KARPENTER_GPU_MEMORY_LABEL,
    KARPENTER_GPU_NAME_LABEL,
)

GIB = 1024**3


def runtime(selector: str, accelerator: str = "", name: str = "torch-gpu") -> str:
    return f"""\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {{name: {name}}}
spec:
  framework: torch
  image: nvcr.io/nvidia/pytorch:25.01-py3
  resourcesPerNode: {{gpu: 8}}
{accelerator}  scheduling:
    nodeSelector: {{{selector}}}
"""


def job(name: str = "llm", model: bool = True) -> str:
    text = f"""\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: {name}, namespace: team-nlp}}
spec:
  runtime: torch-gpu
  command: [torchrun, -m, pretrain]
  queue: team-nlp
  nodes: 8
"""
    return text + ("  model: {preset: llama3-70b, sequenceLength: 8192, globalBatch: 128}\n" if model else "")


def compiled(tmp_path: Path, *texts: str) -> Any:
    paths = []
    for index, text in enumerate(texts):
        path = tmp_path / f"spec{index}.yaml"
        path.write_text(text)
        paths.append(str(path))
    return run(paths, Options(project=None))


def notes(result: Any) -> list[Any]:
    return [d for d in result.diagnostics if d.code == codes.ACCELERATOR_INFERRED]


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({GPU_PRODUCT_LABEL: "NVIDIA-H100-80GB-HBM3"}, ("H100", 80, "900GB/s")),
        ({GPU_PRODUCT_LABEL: "NVIDIA-A100-SXM4-40GB"}, ("A100", 40, "600GB/s")),
        ({GPU_PRODUCT_LABEL: "NVIDIA-H200"}, ("H200", 141, "900GB/s")),
        ({GPU_PRODUCT_LABEL: "NVIDIA-L4"}, ("L4", 24, None)),
        ({GPU_PRODUCT_LABEL: "Tesla-V100-SXM2-16GB"}, ("V100", 16, "300GB/s")),
        ({GKE_ACCELERATOR_LABEL: "nvidia-h100-80gb"}, ("H100", 80, "900GB/s")),
        ({GKE_ACCELERATOR_LABEL: "nvidia-tesla-a100"}, ("A100", 40, "600GB/s")),
        ({GKE_ACCELERATOR_LABEL: "nvidia-h200-141gb"}, ("H200", 141, "900GB/s")),
        ({KARPENTER_GPU_NAME_LABEL: "h100"}, ("H100", 80, "900GB/s")),
        ({KARPENTER_GPU_NAME_LABEL: "a100", KARPENTER_GPU_MEMORY_LABEL: "81920"}, ("A100", 80, "600GB/s")),
        ({KARPENTER_GPU_NAME_LABEL: "l40s"}, ("L40S", 48, None)),
        # the most specific label wins
        ({GKE_ACCELERATOR_LABEL: "nvidia-l4", GPU_PRODUCT_LABEL: "NVIDIA-H100-80GB-HBM3"}, ("H100", 80, "900GB/s")),
    ],
)
def test_a_gpu_label_names_the_accelerator(labels: dict[str, str], expected: tuple[str, int, str | None]) -> None:
    found = from_labels(labels)
    assert found is not None and found.inferred
    accelerator = found.accelerator
    assert (accelerator.name, int(accelerator.memory.value / GIB), accelerator.nvlink_bandwidth) == expected


@pytest.mark.parametrize(
    "labels",
    [
        {},
        {GPU_PRODUCT_LABEL: "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"},  # a MIG slice, not a whole GPU
        {GPU_PRODUCT_LABEL: "NVIDIA-A100-SXM4-40GB-SHARED"},  # time-shared
        {GPU_PRODUCT_LABEL: "Some-Future-GPU"},
        {KARPENTER_GPU_NAME_LABEL: "a100"},  # 40 or 80 GB: the memory label decides, and there is none
        {KARPENTER_GPU_NAME_LABEL: "a100", KARPENTER_GPU_MEMORY_LABEL: "lots"},
        {"node.kubernetes.io/instance-type": "Standard_ND96isr_H100_v5"},  # AKS: no GPU label to read
    ],
)
def test_labels_that_name_no_whole_known_gpu_infer_nothing(labels: dict[str, str]) -> None:
    assert from_labels(labels) is None


def test_every_table_entry_is_a_valid_accelerator() -> None:
    tables = {
        GPU_PRODUCT_LABEL: gpu_products.NVIDIA_PRODUCTS,
        GKE_ACCELERATOR_LABEL: gpu_products.GKE_ACCELERATORS,
        KARPENTER_GPU_NAME_LABEL: gpu_products.KARPENTER_GPUS,
    }
    for label, table in tables.items():
        for value, gpu in table.items():
            # Karpenter's memory label decides where its name does not (read only with that key).
            found = from_labels({label: value, KARPENTER_GPU_MEMORY_LABEL: "16384"})
            assert found is not None and found.label == label and found.accelerator.name == gpu.name, value
            assert found.accelerator.memory.value >= 16 * GIB, value
            assert gpu.nvlink is None or parse_bandwidth(gpu.nvlink) >= 300 * 10**9, value


def test_a_written_accelerator_wins_over_the_label() -> None:
    spec = Runtime.model_validate(
        {
            "apiVersion": "trainspec.dev/v1alpha1",
            "kind": "Runtime",
            "metadata": {"name": "r"},
            "spec": {
                "framework": "torch",
                "image": "img",
                "accelerator": {"name": "H100", "memory": "94Gi"},
                "scheduling": {"nodeSelector": {GPU_PRODUCT_LABEL: "NVIDIA-H100-80GB-HBM3"}},
            },
        }
    )
    found = runtime_accelerator(spec.spec)
    assert found is not None and not found.inferred and found.accelerator.memory.value == 94 * GIB


def test_the_planner_takes_the_inferred_gpu_and_a_note_says_so(tmp_path: Path) -> None:
    result = compiled(tmp_path, runtime(f"{GPU_PRODUCT_LABEL}: NVIDIA-H100-80GB-HBM3"), job())
    assert result.ok
    (note,) = notes(result)
    assert note.severity.value == "note"
    assert (note.file, note.line, note.column) == (str(tmp_path / "spec0.yaml"), 9, 44)  # the label's value
    assert note.path == f"spec.scheduling.nodeSelector.{GPU_PRODUCT_LABEL}"
    assert "accelerator H100 80Gi, NVLink 900GB/s inferred from nodeSelector" in note.message
    assert note.hint is not None and "accelerator: {name: H100, memory: 80Gi, nvlinkBandwidth: 900GB/s}" in note.hint
    assert not [d for d in result.diagnostics if d.code == codes.NO_GPU_MEMORY]
    (plan,) = result.plans
    cluster = fromplan.cluster(plan)
    assert cluster.gpu_memory == 80 * GIB and cluster.nvlink == 450 * 10**9
    assert plan.parallel is not None and plan.parallel.chosen is not None and plan.parallel.chosen.fits


def test_the_note_is_said_once_per_runtime(tmp_path: Path) -> None:
    result = compiled(tmp_path, runtime(f"{GKE_ACCELERATOR_LABEL}: nvidia-h100-80gb"), job("a"), job("b"))
    assert len(notes(result)) == 1


def test_no_note_where_nothing_reads_the_accelerator_or_it_is_written(tmp_path: Path) -> None:
    selector = f"{GPU_PRODUCT_LABEL}: NVIDIA-H100-80GB-HBM3"
    assert notes(compiled(tmp_path, runtime(selector), job(model=False))) == []
    written = "  accelerator: {name: H100, memory: 80Gi}\n"
    assert notes(compiled(tmp_path, runtime(selector, written), job())) == []


def test_karpenter_memory_comes_from_its_label(tmp_path: Path) -> None:
    selector = f"{KARPENTER_GPU_NAME_LABEL}: a100, {KARPENTER_GPU_MEMORY_LABEL}: '40960'"
    result = compiled(tmp_path, runtime(selector), job())
    (note,) = notes(result)
    assert f"and {KARPENTER_GPU_MEMORY_LABEL}=40960" in note.message and "A100 40Gi" in note.message
    (plan,) = result.plans
    assert fromplan.cluster(plan).gpu_memory == 40 * GIB


def test_validate_exits_0_and_counts_the_note_apart(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(runtime(f"{GPU_PRODUCT_LABEL}: NVIDIA-H100-80GB-HBM3") + "---\n" + job())
    text = run_cli("validate", "--no-project", str(path))
    assert text.returncode == 0, text.stdout + text.stderr
    assert f"note[{codes.ACCELERATOR_INFERRED}]" in text.stdout
    assert "0 errors, 0 warnings, 1 note in 1 file" in text.stdout
    as_json = run_cli("validate", "--no-project", "--format", "json", str(path))
    payload = json.loads(as_json.stdout)
    assert [d["severity"] for d in payload["diagnostics"]] == ["note"]
    assert (payload["summary"]["errors"], payload["summary"]["warnings"]) == (0, 0)
