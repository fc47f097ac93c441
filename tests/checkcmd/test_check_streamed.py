"""``check`` over a repository a batch at a time (trainspec.check.batch_check) says what a whole check says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from trainspec.check.request import CheckRequest, run_check
from trainspec.compiler import streaming
from trainspec.compiler.output_sinks import TreeTexts
from trainspec.compiler.pipeline import Options, Stop

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata:
  name: base
spec:
  framework: torch
  image: registry.example.com/base:1
  resourcesPerNode: {gpu: 8}
"""

JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata:
  name: {name}
  namespace: ml
spec:
  runtime: {runtime}
  image: registry.example.com/train:1
  command: [torchrun, train.py]
  nodes: 2
  maxRunTime: 2h
  queue: ml
"""

# A TrainJob naming a runtime nobody defines (TS503), one with a field its CRD does not have.
BROKEN = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: stray, namespace: ml}
spec:
  runtimeRef: {name: nowhere, kind: ClusterTrainingRuntime, apiGroup: trainer.kubeflow.org}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: typo, namespace: ml}
spec:
  runtimeRef: {name: base, kind: ClusterTrainingRuntime, apiGroup: trainer.kubeflow.org}
  suspended: true
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(streaming, "BATCH_FILES", 3)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "runtime.yaml").write_text(RUNTIME)
    for i in range(8):
        runtime = "trainspec-torch" if i % 3 == 0 else "base"
        (tmp_path / "specs" / f"j{i}.yaml").write_text(JOB.format(name=f"j{i}", runtime=runtime))
    monkeypatch.chdir(tmp_path)
    # the compiled tree, as `compile -o tree` writes it
    with TreeTexts("tree") as tree:
        result = streaming.run_streamed(["specs"], Options(project=None, stop=Stop.LOWER), tree)
        assert result.ok and result.streamed == 8
        for rel, text in tree.files(None).items():
            (tmp_path / "tree" / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "tree" / rel).write_text(text)
    (tmp_path / "tree" / "zz-broken.yaml").write_text(BROKEN)
    return tmp_path


def _both(paths: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple:
    request = CheckRequest(paths, options=Options(project=None))
    streamed = run_check(request)
    with monkeypatch.context() as patch:
        patch.setattr("trainspec.check.batch_check.run_streamed_check", lambda *args: None)
        whole = run_check(request)
    return streamed, whole


@pytest.mark.parametrize("paths", [["tree"], ["specs"], ["specs", "tree"]])
def test_a_streamed_check_reports_what_a_whole_one_does(
    repo: Path, monkeypatch: pytest.MonkeyPatch, paths: list[str]
) -> None:
    streamed, whole = _both(paths, monkeypatch)
    assert streamed.diagnostics == whole.diagnostics and streamed.files == whole.files
    assert streamed.result is not None and streamed.result.streamed_files > 0  # batches, not a whole run
    if "tree" in paths:
        codes = {d.code for d in streamed.diagnostics}
        assert {"TS503"} <= codes and len(streamed.diagnostics) >= 2
        assert any(d.file == "tree/zz-broken.yaml" and "nowhere" in d.message for d in streamed.diagnostics)


def test_a_runtime_manifest_the_first_reading_missed_makes_it_a_whole_check(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = repo / "tree" / "runtimes" / "base.yaml"
    # JSON on one line: no `kind:` at a line's start, so it is read in a batch, where the batch
    # finds it; TrainJobs of other batches name it, so the check starts over whole
    runtime.write_text(json.dumps(yaml.safe_load(runtime.read_text())) + "\n")
    streamed, whole = _both(["tree"], monkeypatch)
    assert streamed.diagnostics == whole.diagnostics
    assert not any("'base' does not exist" in d.message for d in streamed.diagnostics)
    assert streamed.result is not None and streamed.result.streamed_files == 0


def test_compile_errors_make_it_a_whole_check(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "specs" / "j7.yaml").write_text(JOB.format(name="j7", runtime="missing"))
    streamed, whole = _both(["specs"], monkeypatch)
    assert not streamed.ok and streamed.diagnostics == whole.diagnostics
    assert streamed.result is not None and streamed.result.streamed_files == 0
