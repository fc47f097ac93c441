"""Compile a runtime and a job written to a temporary folder, on any target, and pick objects out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from trainspec.compiler.emit import manifest_dicts
from trainspec.compiler.pipeline import compile_paths
from trainspec.compiler.targets import parse_target_option

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: rt}
spec:
  framework: FRAMEWORK
  image: example.com/train:1
  resourcesPerNode: {gpu: 8}
"""
JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {name: demo, namespace: team-a}
spec:
  runtime: rt
  command: [python, train.py]
  nodes: 2
  queue: team-a
"""


def compile_specs(
    tmp_path: Path,
    *,
    framework: str = "torch",
    target: str = "trainer=2.3",
    runtime: dict | None = None,
    job: dict | None = None,
) -> Any:
    """The CompileResult of the runtime and job, each with ``spec`` fields merged in."""
    docs = {"runtime.yaml": (RUNTIME.replace("FRAMEWORK", framework), runtime), "job.yaml": (JOB, job)}
    for name, (text, extra) in docs.items():
        data = yaml.safe_load(text)
        data["spec"].update(extra or {})
        (tmp_path / name).write_text(yaml.safe_dump(data), encoding="utf-8")
    return compile_paths([str(tmp_path)], target=parse_target_option(target))


def objects(result: Any) -> list[dict[str, Any]]:
    """Every compiled object as a plain dict, in output order."""
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
    return [obj for output in result.outputs for obj in manifest_dicts(output.objects)]


def of_kind(result: Any, kind: str) -> list[dict[str, Any]]:
    return [obj for obj in objects(result) if obj["kind"] == kind]


def codes(result: Any) -> list[str]:
    return [d.code for d in result.diagnostics]
