"""A ``Pipeline`` compiled to KFP IR by ``trainspec kfp`` with kfp's own compiler, and the job
step's in-pod build of the run's TrainJob (no cluster: the pure function the launcher applies)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("kfp", reason="the kfp extra is not installed: pip install 'trainspec[kfp]'")

from kfp_testing import EXAMPLES, ROOT

from trainspec.kfp.launch_result import LauncherError
from trainspec.kfp.pipeline_job_step import build_trainjob

PIPELINE = EXAMPLES / "pipeline"
IMAGE = "registry.example.com/trainspec-launcher:0.1.0"
DATASET_URI = "minio://mlpipeline/v2/artifacts/finetune/run-1/prep/7/dataset"


def _kfp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainspec", "kfp", *args, "--no-project"],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("ir")
    first, second = folder / "first.yaml", folder / "second.yaml"
    for out in (first, second):
        done = _kfp(str(PIPELINE), "--image", IMAGE, "-o", str(out))
        assert done.returncode == 0, done.stderr
    return first, second


def _ir(compiled: tuple[Path, Path]) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(compiled[0].read_text(encoding="utf-8"))
    return doc


def _tasks(ir: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every task by name, those inside condition groups too, with the group's dependencies."""
    tasks: dict[str, dict[str, Any]] = {}
    for name, task in ir["root"]["dag"]["tasks"].items():
        group = ir["components"][task["componentRef"]["name"]]
        if "dag" in group:  # a dsl.If group: its tasks wait for what the group waits for
            for inner, inner_task in group["dag"]["tasks"].items():
                tasks[inner] = {**inner_task, "dependentTasks": task.get("dependentTasks", []), "group": task}
        else:
            tasks[name] = task
    return tasks


def test_four_tasks_with_their_dependencies(compiled: tuple[Path, Path]) -> None:
    tasks = _tasks(_ir(compiled))
    assert sorted(tasks) == ["evaluate", "prep", "register", "train"]
    assert {name: sorted(t.get("dependentTasks", [])) for name, t in tasks.items()} == {
        "prep": [],
        "train": ["prep"],
        "evaluate": ["prep", "train"],
        "register": ["evaluate", "train"],
    }
    # the train step reads prep's dataset as an artifact, evaluate reads train's checkpoint
    assert tasks["train"]["inputs"]["artifacts"]["prep_dataset"]["taskOutputArtifact"] == {
        "outputArtifactKey": "dataset",
        "producerTask": "prep",
    }
    assert tasks["evaluate"]["inputs"]["artifacts"]["train_checkpoint"]["taskOutputArtifact"]["producerTask"] == "train"
    assert tasks["train"]["retryPolicy"]["maxRetryCount"] == 1
    # register runs only when the score is good enough: a dsl.If on evaluate's value output
    condition = tasks["register"]["group"]["triggerPolicy"]["condition"]
    assert condition == (
        "inputs.parameter_values['pipelinechannel--evaluate-score'] >= "
        "inputs.parameter_values['pipelinechannel--minScore']"
    )


def test_parameters_are_typed_inputs_with_defaults(compiled: tuple[Path, Path]) -> None:
    ir = _ir(compiled)
    inputs = ir["root"]["inputDefinitions"]["parameters"]
    assert {name: (p["parameterType"], p["defaultValue"]) for name, p in inputs.items()} == {
        "records": ("NUMBER_INTEGER", 300),
        "epochs": ("NUMBER_INTEGER", 3),
        "nodes": ("NUMBER_INTEGER", 2),
        "minScore": ("NUMBER_DOUBLE", 0.9),
    }
    train = ir["root"]["dag"]["tasks"]["train"]["inputs"]["parameters"]
    assert train["param_nodes"] == {"componentInputParameter": "nodes"}
    assert train["param_epochs"] == {"componentInputParameter": "epochs"}


def test_containers_images_and_no_install(compiled: tuple[Path, Path]) -> None:
    text = compiled[0].read_text(encoding="utf-8")
    assert "pip install" not in text and "pip3 install" not in text
    executors = _ir(compiled)["deploymentSpec"]["executors"]
    assert executors["exec-train"]["container"]["image"] == IMAGE
    assert executors["exec-train"]["container"]["command"] == ["python3", "-m", "trainspec.kfp.pipeline_job_step"]
    prep = executors["exec-prep"]["container"]
    assert prep["args"] == [
        "--records",
        "{{$.inputs.parameters['param_records']}}",
        "--out",
        "{{$.outputs.artifacts['dataset'].path}}",
    ]
    assert prep["resources"]["resourceCpuLimit"] == "1" and prep["resources"]["resourceMemoryLimit"] == "1Gi"


def test_byte_stable(compiled: tuple[Path, Path]) -> None:
    assert compiled[0].read_bytes() == compiled[1].read_bytes()


def test_kfp_loads_it_back(compiled: tuple[Path, Path]) -> None:
    from kfp import components

    component = components.load_component_from_file(str(compiled[0]))
    assert component.name == "finetune"
    assert sorted(component.component_spec.inputs) == ["epochs", "minScore", "nodes", "records"]


def _specs(compiled: tuple[Path, Path]) -> str:
    train = _ir(compiled)["root"]["dag"]["tasks"]["train"]
    text: str = train["inputs"]["parameters"]["specs"]["runtimeValue"]["constant"]
    return text


def test_a_run_with_overridden_parameters_builds_the_overridden_trainjob(compiled: tuple[Path, Path]) -> None:
    specs = _specs(compiled)
    assert "$(params.nodes)" in specs  # the references are resolved in the pod, with the run's values
    default = build_trainjob(specs, job="finetune-train", params={"nodes": "2"}, outputs={"prep.dataset": DATASET_URI})
    built = build_trainjob(
        specs, job="finetune-train", params={"nodes": "4", "epochs": "5"}, outputs={"prep.dataset": DATASET_URI}
    )
    assert default.trainjob["spec"]["trainer"]["numNodes"] == 2
    trainer = built.trainjob["spec"]["trainer"]
    assert trainer["numNodes"] == 4
    assert trainer["args"] == ["--epochs", "5", "--save-every", "2"]
    assert {"name": "TRAINSPEC_NUM_SHARDS", "value": "4"} in trainer["env"]  # derived fields follow
    assert "s3://mlpipeline/v2/artifacts/finetune/run-1/prep/7/dataset" in yaml.safe_dump(built.trainjob)
    assert built.checkpoint.startswith("pvc://") and built.checkpoint.endswith("/checkpoints")


def test_a_run_value_of_the_wrong_type_is_refused(compiled: tuple[Path, Path]) -> None:
    with pytest.raises(LauncherError, match="parameter nodes is of type int"):
        build_trainjob(_specs(compiled), job="finetune-train", params={"nodes": "many"}, outputs={})


def test_a_value_the_job_refuses_is_a_launcher_error(compiled: tuple[Path, Path]) -> None:
    with pytest.raises(LauncherError, match="does not compile with this run's values"):
        build_trainjob(
            _specs(compiled), job="finetune-train", params={"nodes": "0"}, outputs={"prep.dataset": DATASET_URI}
        )


def test_a_malformed_pipeline_is_located_and_nothing_is_written(tmp_path: Path) -> None:
    text = (PIPELINE / "pipeline.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "pipeline.yaml"
    bad.write_text(text.replace("$(steps.prep.outputs.dataset)", "$(steps.prepare.outputs.dataset)"), encoding="utf-8")
    out = tmp_path / "out.yaml"
    done = _kfp(str(bad), "--image", IMAGE, "-o", str(out))
    assert done.returncode == 1
    line = 1 + text.splitlines().index('        data: {source: "$(steps.prep.outputs.dataset)", format: jsonl}')
    assert f"{bad}:{line}:" in done.stderr and "TS313" in done.stderr
    assert not out.exists()


def test_what_kfp_cannot_express_is_located(tmp_path: Path) -> None:
    text = (PIPELINE / "pipeline.yaml").read_text(encoding="utf-8")
    failed = text.replace(
        'when: "$(steps.evaluate.outputs.score) >= $(params.minScore)"', 'when: "$(steps.train.status) == Failed"'
    )
    assert failed != text
    bad = tmp_path / "pipeline.yaml"
    bad.write_text(failed, encoding="utf-8")
    out = tmp_path / "out.yaml"
    done = _kfp(str(bad), "--image", IMAGE, "-o", str(out))
    assert done.returncode == 1, done.stderr
    line = 1 + failed.splitlines().index('      when: "$(steps.train.status) == Failed"')
    assert f"{bad}:{line}:" in done.stderr and "cannot be expressed" in done.stderr
    assert not out.exists()


def test_a_job_step_without_launcher_image_is_ts450(tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    done = _kfp(str(PIPELINE), "-o", str(out))
    assert done.returncode == 1
    assert "TS450" in done.stderr and "job step 'train'" in done.stderr
    assert not out.exists()


RAY_PIPELINE = """\
---
apiVersion: trainspec.dev/v1alpha1
kind: Pipeline
metadata:
  name: rayflow
  namespace: team-ml
spec:
  parameters:
    nodes: {type: int, default: 2}
  steps:
    - name: train
      job:
        runtime: ray-h100
        command: [python, /app/finetune.py]
        nodes: $(params.nodes)
        checkpoint: {path: /checkpoints, size: 10Gi}
    - name: report
      container:
        image: registry.example.com/ml/report:0.1.0
        command: [python, report.py]
        args: [--checkpoint, "$(steps.train.outputs.checkpoint)"]
"""


@pytest.fixture(scope="module")
def ray_ir(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    """A Pipeline whose job step runs on the Ray runtime of examples/ray-train, compiled to IR."""
    folder = tmp_path_factory.mktemp("ray")
    spec, out = folder / "pipeline.yaml", folder / "out.yaml"
    runtime = (EXAMPLES / "ray-train" / "runtime.yaml").read_text(encoding="utf-8")
    assert "engine: ray" in runtime
    spec.write_text(runtime + RAY_PIPELINE, encoding="utf-8")
    done = _kfp(str(spec), "--image", IMAGE, "-o", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    return text, yaml.safe_load(text)


def test_a_ray_job_step_compiles_to_ir_without_install(ray_ir: tuple[str, dict[str, Any]]) -> None:
    text, ir = ray_ir
    assert "pip install" not in text and "pip3 install" not in text
    assert sorted(ir["root"]["dag"]["tasks"]) == ["report", "train"]
    assert ir["root"]["dag"]["tasks"]["report"]["dependentTasks"] == ["train"]
    train = ir["deploymentSpec"]["executors"]["exec-train"]["container"]
    assert train["image"] == IMAGE
    assert train["command"] == ["python3", "-m", "trainspec.kfp.pipeline_job_step"]
    assert ir["root"]["inputDefinitions"]["parameters"]["nodes"]["defaultValue"] == 2


def test_a_ray_job_step_builds_a_rayjob_whose_workers_follow_the_run(ray_ir: tuple[str, dict[str, Any]]) -> None:
    specs = ray_ir[1]["root"]["dag"]["tasks"]["train"]["inputs"]["parameters"]["specs"]["runtimeValue"]["constant"]
    assert "$(params.nodes)" in specs
    default = build_trainjob(specs, job="rayflow-train", params={"nodes": "2"}, outputs={})
    built = build_trainjob(specs, job="rayflow-train", params={"nodes": "5"}, outputs={})
    for job in (default, built):
        assert (job.trainjob["apiVersion"], job.trainjob["kind"]) == ("ray.io/v1", "RayJob")
    assert [g["replicas"] for g in default.trainjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]] == [2]
    (workers,) = built.trainjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert (workers["replicas"], workers["minReplicas"], workers["maxReplicas"]) == (5, 5, 5)
    env = workers["template"]["spec"]["containers"][0]["env"]
    assert {"name": "TRAINSPEC_NUM_NODES", "value": "5"} in env  # derived fields follow the run's value
    assert built.checkpoint == "pvc://rayflow-train-checkpoints/checkpoints"
