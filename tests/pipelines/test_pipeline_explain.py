"""``explain`` of a pipeline: each job step as a job, then the pipeline's steps and what its job
steps cost together (issue 24, item 2)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

GPU = """apiVersion: trainspec.dev/v1alpha1
kind: Pipeline
metadata: {name: tune, namespace: team}
spec:
  steps:
    - name: prep
      container: {image: python:3.12-slim, command: [python, prep.py]}
    - name: big
      after: [prep]
      job:
        runtime: trainspec-torch
        image: nvcr.io/nvidia/pytorch:25.01-py3
        command: [torchrun, train.py]
        nodes: 2
        resourcesPerNode: {gpu: 8}
        maxRunTime: 10h
    - name: small
      after: [big]
      job:
        runtime: trainspec-torch
        image: nvcr.io/nvidia/pytorch:25.01-py3
        command: [torchrun, eval.py]
        resourcesPerNode: {gpu: 1}
        maxRunTime: 2h
"""


def test_the_pipeline_block_sums_its_job_steps_gpu_hours_and_cost(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(GPU)
    done = run_cli("explain", "p.yaml", "--no-project", "--gpu-hour-price", "2.5", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    block = done.stdout[done.stdout.index("pipeline team/tune") :]
    assert block.splitlines()[0] == "pipeline team/tune  (p.yaml:1:1)"
    assert "  step big             job tune-big, after prep" in block
    assert "GPU-hours            162 for all job steps, at most" in block  # 2 x 8 x 10 h + 1 x 2 h
    assert block.splitlines()[-1] == "  cost                 405.00 USD, at most"  # 162 GPU-hours x 2.5
    data = json.loads(run_cli("explain", "p.yaml", "--no-project", "--format", "json", cwd=tmp_path).stdout)
    (pipeline,) = data["pipelines"]
    assert pipeline["gpuHours"] == 162 and [s["name"] for s in pipeline["steps"]] == ["prep", "big", "small"]
    assert sorted(job["name"] for job in data["jobs"]) == ["tune-big", "tune-small"]


def test_a_job_step_without_max_run_time_makes_the_total_unbounded(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(GPU.replace("        maxRunTime: 2h\n", ""))
    done = run_cli("explain", "p.yaml", "--no-project", cwd=tmp_path)
    assert "GPU-hours            unbounded: no maxRunTime on tune-small" in done.stdout


def test_explain_without_pipelines_keeps_its_json_shape() -> None:
    data = json.loads(run_cli("explain", "examples/ddp-cpu.yaml", "--no-project", "--format", "json").stdout)
    assert list(data) == ["jobs"]
