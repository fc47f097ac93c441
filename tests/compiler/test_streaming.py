"""A streamed run (trainspec.compiler.streaming) answers exactly as a whole run, in flat memory.

Batches are made tiny here (``BATCH_FILES``) so that a few files cross several batch edges.
"""

from __future__ import annotations

import io
import os
import tracemalloc
from pathlib import Path

import pytest

from trainspec.compiler import streaming
from trainspec.compiler.emit import render_tree
from trainspec.compiler.output_sinks import SpilledStream, TreeTexts
from trainspec.compiler.pipeline import Options, Stop, run
from trainspec.compiler.streaming import run_streamed

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata:
  name: {name}
spec:
  framework: torch
  image: registry.example.com/base:1
  resourcesPerNode: {{gpu: 8}}
"""

JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata:
  name: {name}
  namespace: {namespace}
spec:
  runtime: {runtime}
  image: registry.example.com/train:{name}
  command: [torchrun, train.py]
  nodes: {nodes}
  maxRunTime: 2h
"""


@pytest.fixture(autouse=True)
def _small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "BATCH_FILES", 3)


def _job(name: str, runtime: str = "base", namespace: str = "ml", nodes: int = 2) -> str:
    return JOB.format(name=name, runtime=runtime, namespace=namespace, nodes=nodes)


def _repo(root: Path, jobs: int = 10) -> Path:
    (root / "runtimes").mkdir(parents=True)
    (root / "runtimes" / "base.yaml").write_text(RUNTIME.format(name="base"))
    (root / "jobs").mkdir()
    for i in range(jobs):
        # a built-in runtime for some: each batch lowers it again, the stream holds it once
        runtime = "trainspec-torch" if i % 3 == 0 else "base"
        (root / "jobs" / f"j{i:02d}.yaml").write_text(_job(f"j{i:02d}", runtime, nodes=1 + i % 4))
    return root


def _both(paths: list[str], stop: Stop = Stop.LOWER) -> tuple:
    options = Options(project=None, stop=stop)
    whole = run(paths, options)
    with SpilledStream() as sink:
        streamed = run_streamed(paths, options, sink)
        text = io.StringIO()
        sink.write_to(text)
    return whole, streamed, text.getvalue()


CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"


def test_a_streamed_compile_writes_the_whole_runs_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    # Kubernetes manifests beside the specs, in a file read whole and in a batch's
    (root / "runtimes" / "base.yaml").write_text(RUNTIME.format(name="base") + "---\n" + CONFIGMAP)
    (root / "jobs" / "j03.yaml").write_text(CONFIGMAP + "---\n" + _job("j03"))
    monkeypatch.chdir(root)
    whole, streamed, text = _both(["jobs", "runtimes"])
    assert whole.ok and streamed.ok
    # listed by --verbose in the whole run's order
    assert [(d.file, d.line) for d in streamed.foreign] == [(d.file, d.line) for d in whole.foreign]
    assert [d.file for d in whole.foreign] == ["jobs/j03.yaml", "runtimes/base.yaml"]
    assert streamed.streamed == 10  # the job files went through in batches, not whole
    assert text == whole.to_yaml() and text.count("kind: TrainJob") == 10
    assert streamed.files == whole.files and streamed.diagnostics == whole.diagnostics
    tree = TreeTexts("out")
    run_streamed(["jobs", "runtimes"], Options(project=None, stop=Stop.LOWER), tree)
    assert tree.files(None) == render_tree(whole.outputs, root="out")


def test_every_diagnostic_is_the_whole_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    # errors in several batches, a warning-free duplicate across batches, and a job whose name a
    # file read whole (beside a runtime) defines again, later in file order than the batch's one
    (root / "jobs" / "j04.yaml").write_text(_job("j04", runtime="missing"))
    (root / "jobs" / "j08.yaml").write_text(_job("j01"))
    (root / "jobs" / "j09.yaml").write_text(_job("j02", nodes=0))
    (root / "jobs" / "zz.yaml").write_text(RUNTIME.format(name="other") + "---\n" + _job("j03"))
    monkeypatch.chdir(root)
    for stop in (Stop.VALIDATE, Stop.LOWER):
        whole, streamed, text = _both(["jobs", "runtimes"], stop)
        assert not whole.ok and streamed.diagnostics == whole.diagnostics
        codes = {d.code for d in streamed.diagnostics}
        assert {"TS306"} <= codes and len(codes) >= 3
        assert text == ""  # an error anywhere: nothing is written
    duplicate = next(d for d in streamed.diagnostics if d.code == "TS306" and "j03" in d.message)
    assert duplicate.file == "jobs/zz.yaml" and duplicate.related[0].file == "jobs/j03.yaml"


def test_a_kind_the_bytes_do_not_spell_makes_it_a_whole_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    # "Run\x74ime" reads as Runtime: a runtime in a file that looked like jobs only
    hidden = RUNTIME.format(name="hidden").replace("kind: Runtime", 'kind: "Run\\x74ime"')
    (root / "jobs" / "j05.yaml").write_text(hidden)
    (root / "jobs" / "j06.yaml").write_text(_job("j06", runtime="hidden"))
    monkeypatch.chdir(root)
    whole, streamed, text = _both(["jobs", "runtimes"])
    assert whole.ok and streamed.ok and text == whole.to_yaml() and "name: hidden" in text
    assert streamed.streamed == 0  # started over as a whole run


def test_what_a_batch_cannot_stand_for_is_a_whole_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_repo(tmp_path, jobs=4))
    options = Options(project=None, stop=Stop.LOWER, ladder=True)
    assert run_streamed(["jobs", "runtimes"], options).streamed == 0


def _peak(paths: list[str]) -> int:
    tracemalloc.start()
    try:
        result = run_streamed(paths, Options(project=None, stop=Stop.VALIDATE))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        assert result.ok


def test_memory_stays_flat_as_the_repository_grows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "BATCH_FILES", 40)
    small, large = _repo(tmp_path / "small", jobs=80), _repo(tmp_path / "large", jobs=640)
    monkeypatch.chdir(small)
    run_streamed(["jobs"], Options(project=None, stop=Stop.VALIDATE))  # imports and caches, once
    small_peak = _peak(["jobs", "runtimes"])
    monkeypatch.chdir(large)
    large_peak = _peak(["jobs", "runtimes"])
    # Growth per spec added: a whole run keeps every spec's products (about 13 KB each here); a
    # streamed one its summaries only (about 1 KB: the name and where it was first defined).
    # Not a ratio of peaks: at this size one batch's products weigh as much as all the summaries.
    per_spec = (large_peak - small_peak) / (640 - 80)
    assert per_spec < 2048, (small_peak, large_peak, per_spec)


def test_a_hidden_pipeline_makes_it_a_whole_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    pipeline = """\
apiVersion: trainspec.dev/v1alpha1
kind: "Pipe\\x6cine"
metadata: {name: flow, namespace: ml}
spec:
  steps:
    - {name: train, jobRef: j07}
"""
    (root / "jobs" / "j05.yaml").write_text(pipeline)
    monkeypatch.chdir(root)
    whole, streamed, text = _both(["jobs", "runtimes"])
    assert streamed.streamed == 0 and streamed.diagnostics == whole.diagnostics and text == whole.to_yaml()
    assert whole.ok and whole.pipelines  # read as a pipeline whose step is a job of another batch


def test_the_files_kinds_are_told_by_their_kind_lines(tmp_path: Path) -> None:
    cases = {
        "jobs": [
            _job("a"),
            "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nspec:\n  runtimeRef: {kind: ClusterTrainingRuntime}\n",
        ],
        "other": [RUNTIME.format(name="r"), '{"kind": "Project"}', "kind: !!str Runtime\n"],
        "pipeline": ["kind:\n  Pipeline\n"],
    }
    for expected, texts in cases.items():
        for i, text in enumerate(texts):
            path = tmp_path / f"{expected}{i}.yaml"
            path.write_text(text)
            assert streaming._file_kind(str(path), 1 << 20) == expected, text
    big = tmp_path / "big.yaml"
    big.write_text(_job("b"))
    assert streaming._file_kind(str(big), 10) == "other"  # the loader refuses it, not this
    assert streaming._file_kind(str(tmp_path / "job.py"), 1 << 20) == "other"
    assert streaming._file_kind(str(tmp_path / "gone.yaml"), 1 << 20) == "other"
    # a FIFO put where the walk saw a file: never opened for a blocking read (the run would hang)
    os.mkfifo(tmp_path / "fifo.yaml")
    assert streaming._file_kind(str(tmp_path / "fifo.yaml"), 1 << 20) == "other"
