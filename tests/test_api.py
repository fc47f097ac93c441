"""The library entry points: trainspec.load / validate / compile."""

from __future__ import annotations

import subprocess
import sys

import pytest

import trainspec
from tests.conftest import EXAMPLES, ROOT
from trainspec import Checkpoint, ModelSize, Resources, Runtime, TrainingJob
from trainspec.k8s import ClusterTrainingRuntime, PersistentVolumeClaim, TrainJob


def test_compile_python_objects_returns_typed_kubernetes_objects() -> None:
    runtime = Runtime(
        name="torch-h100",
        framework="torch",
        image="nvcr.io/nvidia/pytorch:25.01-py3",
        resources_per_node=Resources(gpu=8),
    )
    job = TrainingJob(
        name="sft",
        namespace="nlp",
        runtime="torch-h100",
        nodes=2,
        queue="nlp",
        checkpoint=Checkpoint(size="auto", model=ModelSize(parameters="7B")),
    )
    result = trainspec.compile(runtime, job)
    assert result.ok, result.diagnostics
    kinds = [type(o) for o in result.objects()]
    assert kinds == [ClusterTrainingRuntime, PersistentVolumeClaim, TrainJob]
    trainjob = result.objects()[-1]
    # Queued: Kueue suspends it at creation, trainspec never writes suspend (docs/gitops.md).
    assert trainjob.spec.suspend is None and trainjob.spec.trainer.num_proc_per_node == 8
    # 7B bf16 + AdamW = 98 GB a checkpoint (weights 14 + fp32 master 28 + moments 56, the writer unknown);
    # x3 x1.2 = 352.8 GB = 328.6 GiB
    assert result.objects()[1].spec.resources.requests == {"storage": "329Gi"}


def test_compile_mixes_files_and_objects() -> None:
    job = TrainingJob(name="extra", namespace="team-nlp", runtime="torch-h100-ib", queue="team-nlp")
    result = trainspec.compile(EXAMPLES / "llama-sft", job)
    assert result.ok
    assert {p.resolved.name for p in result.plans} == {"llama-sft", "extra"}


def test_compile_takes_a_list_of_specs_as_it_takes_them_one_by_one() -> None:
    jobs = [
        TrainingJob(name=f"smoke-{i}", namespace="ml", runtime="trainspec-torch", image="python:3.12") for i in range(2)
    ]
    listed = trainspec.compile(jobs)
    assert listed.ok, listed.diagnostics
    assert listed.to_yaml() == trainspec.compile(*jobs).to_yaml()
    assert [d.code for d in trainspec.validate([EXAMPLES / "ddp-cpu.yaml"])] == []


def test_validate_returns_diagnostics_for_python_objects() -> None:
    diagnostics = trainspec.validate(TrainingJob(name="x", runtime="no-such-runtime"))
    assert [d.code for d in diagnostics] == ["TS305"]
    assert diagnostics[0].file == "<python>"


def test_load_reads_yaml_and_python() -> None:
    specs, problems = trainspec.load(EXAMPLES / "ddp-cpu.yaml", EXAMPLES / "python" / "ddp_cpu.py")
    assert problems == []
    assert specs[0] == specs[1]


def test_importing_the_helpers_stays_standard_library_only() -> None:
    code = (
        "import sys, trainspec.stages; bad = [m for m in ('pydantic', 'yaml', 'jinja2', 'kfp', 'kubernetes') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_validate_and_compile_never_import_heavy_integrations(tmp_path) -> None:
    code = (
        "import sys; from trainspec.cli.main import main; "
        "main(['validate', '-q', 'examples/']); main(['compile', 'examples/', '-o', sys.argv[1]]); "
        "print(sorted(m for m in ('kfp', 'kubernetes', 'celpy', 'jsonschema', 'pyarrow', 'fsspec') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_the_library_can_refuse_to_run_python_spec_modules(tmp_path) -> None:
    """``python="deny"`` is ``--no-python``: a spec module among the paths is reported, never run."""
    marker = tmp_path / "ran"
    (tmp_path / "spec.py").write_text(
        "from pathlib import Path\nfrom trainspec import TrainingJob\n"
        f"Path({str(marker)!r}).write_text('ran')\n"
        "job = TrainingJob(name='x', namespace='n', runtime='trainspec-torch', command=['x'])\n"
    )
    found = trainspec.validate(tmp_path / "spec.py", project=None, python="deny")
    assert [d.code for d in found] == ["TS123"] and not marker.exists()
    result = trainspec.compile(tmp_path / "spec.py", project=None, python="allow")
    assert result.ok and marker.exists()


def test_load_is_the_pipelines_load_pass(tmp_path, monkeypatch) -> None:
    """``load`` reads as ``validate`` does: the discovered project file's ``spec.python`` decides
    whether spec modules run, and the project file itself is not among the specs returned."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "trainspec.yaml").write_text(
        "apiVersion: trainspec.dev/v1alpha1\nkind: Project\nmetadata: {name: p}\nspec: {python: deny}\n"
    )
    marker = tmp_path / "ran"
    (tmp_path / "spec.py").write_text(
        "from pathlib import Path\nfrom trainspec import TrainingJob\n"
        f"Path({str(marker)!r}).write_text('ran')\n"
        "job = TrainingJob(name='x', namespace='n', runtime='trainspec-torch', command=['x'])\n"
    )
    specs, problems = trainspec.load("spec.py")
    assert specs == [] and [d.code for d in problems] == ["TS123"] and not marker.exists()
    specs, problems = trainspec.load("spec.py", project=None)
    assert [s.metadata.name for s in specs] == ["x"] and problems == [] and marker.exists()
    specs, _ = trainspec.load("trainspec.yaml", "spec.py", python="deny")  # named: it is asked for
    assert [type(s).__name__ for s in specs] == ["Project"]


def test_write_adopts_a_directory_like_compile_adopt(tmp_path, monkeypatch) -> None:
    """``write(adopt=True)`` is ``compile -o DIR --adopt``: without it a directory of the user's
    own files is refused (TS417), with it trainspec writes beside them."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "deploy"
    out.mkdir()
    (out / "README.md").write_text("hand-written\n")
    result = trainspec.compile(EXAMPLES / "ddp-cpu.yaml", project=None)
    with pytest.raises(trainspec.OutputRefused) as refused:
        result.write(out)
    assert [d.code for d in refused.value.diagnostics] == ["TS417"]
    result.write(out, adopt=True)
    assert (out / "README.md").read_text() == "hand-written\n" and (out / "kustomization.yaml").exists()


def test_write_refuses_an_update_the_cluster_would_refuse_as_compile_does(tmp_path, monkeypatch) -> None:
    """The tree ``write()`` replaces is what the cluster has: a checkpoint claim that would shrink
    (TS442) is refused before anything is written, as ``compile -o DIR`` refuses it."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "deploy"

    def job(size: str) -> TrainingJob:
        return TrainingJob(
            name="ckpt",
            namespace="ml-dev",
            runtime="trainspec-torch",
            image="pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
            command=["torchrun", "train.py"],
            nodes=2,
            resources_per_node=Resources(cpu=4, memory="8Gi"),
            checkpoint=Checkpoint(size=size, storage_class="standard"),
        )

    trainspec.compile(job("10Gi"), project=None).write(out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(trainspec.OutputRefused) as refused:
        trainspec.compile(job("5Gi"), project=None).write(out)
    assert "TS442" in [d.code for d in refused.value.diagnostics]
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    grown = trainspec.compile(job("20Gi"), project=None).write(out)  # growing is an update it takes,
    assert [d.code for d in grown.diagnostics] == ["TS443"]  # if the storage class allows expansion
