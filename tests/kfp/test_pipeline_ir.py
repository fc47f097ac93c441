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


def _docs(compiled: tuple[Path, Path]) -> list[dict[str, Any]]:
    """The pipeline spec and (with claims to make or mount) the Kubernetes platform spec."""
    return list(yaml.safe_load_all(compiled[0].read_text(encoding="utf-8")))


def _ir(compiled: tuple[Path, Path]) -> dict[str, Any]:
    return _docs(compiled)[0]


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
    assert sorted(tasks) == ["createpvc", "evaluate", "prep", "register", "train"]
    assert {name: sorted(t.get("dependentTasks", [])) for name, t in tasks.items()} == {
        "createpvc": [],
        "prep": [],
        "train": ["createpvc", "prep"],
        "evaluate": ["createpvc", "prep", "train"],
        "register": ["createpvc", "evaluate", "train"],
    }
    # the train step reads prep's dataset as an artifact, evaluate reads train's checkpoint
    assert tasks["train"]["inputs"]["artifacts"]["prep_dataset"]["taskOutputArtifact"] == {
        "outputArtifactKey": "dataset",
        "producerTask": "prep",
    }
    assert tasks["train"]["retryPolicy"]["maxRetryCount"] == 1
    # register runs only when the score is good enough: a dsl.If on evaluate's value output
    condition = tasks["register"]["group"]["triggerPolicy"]["condition"]
    assert condition == (
        "inputs.parameter_values['pipelinechannel--evaluate-score'] >= "
        "inputs.parameter_values['pipelinechannel--minScore']"
    )


def test_each_run_gets_a_checkpoint_claim_that_later_steps_mount(compiled: tuple[Path, Path]) -> None:
    ir, platform = _docs(compiled)
    tasks = _tasks(ir)
    # CreatePVC before the job step: the job's size, the class the spec names, shared by 2+ nodes
    pvc = tasks["createpvc"]["inputs"]["parameters"]
    assert {k: v["runtimeValue"]["constant"] for k, v in pvc.items()} == {
        "access_modes": ["ReadWriteMany"],
        "pvc_name_suffix": "-finetune-train-checkpoints",
        "size": "1Gi",
        "storage_class_name": "standard-rwx",
    }
    assert tasks["createpvc"]["cachingOptions"] == {}  # never cached: a run's claim is its own
    # the launcher mounts the run's claim in place of the compiled one
    claim = tasks["train"]["inputs"]["parameters"]["checkpoint_claim"]["taskOutputParameter"]
    assert claim == {"outputParameterKey": "name", "producerTask": "createpvc"}
    executors = ir["deploymentSpec"]["executors"]
    train_args = executors["exec-train"]["container"]["args"]
    assert train_args[train_args.index("--checkpoint-claim") + 1] == "{{$.inputs.parameters['checkpoint_claim']}}"
    # evaluate and register read the checkpoint directory, as in the local run: the claim, mounted
    mounts = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
    for step in ("evaluate", "register"):
        args = executors[f"exec-{step}"]["container"]["args"]
        assert args[args.index("--checkpoint") + 1] == "/trainspec/steps/train/checkpoint"
        (mount,) = mounts[f"exec-{step}"]["pvcMount"]
        assert mount["mountPath"] == "/trainspec/steps/train/checkpoint"
    assert "train_checkpoint" not in tasks["evaluate"]["inputs"].get("artifacts", {})
    # a container step's timeout is its pod's deadline; the job step's is the launcher's own
    assert platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]["exec-prep"] == {
        "activeDeadlineSeconds": "1800"
    }
    assert train_args[train_args.index("--timeout") + 1] == "7200"


def test_a_per_run_claim_needs_a_storage_class(tmp_path: Path) -> None:
    text = (PIPELINE / "pipeline.yaml").read_text(encoding="utf-8")
    without = text.replace(", storageClass: standard-rwx}", "}")
    assert without != text
    bad = tmp_path / "pipeline.yaml"
    bad.write_text(without, encoding="utf-8")
    out = tmp_path / "out.yaml"
    done = _kfp(str(bad), "--image", IMAGE, "-o", str(out))
    assert done.returncode == 1 and not out.exists()
    line = 1 + without.splitlines().index("        checkpoint: {path: /checkpoints, size: 1Gi, keep: 3}")
    assert f"{bad}:{line}:21: error[TS312]: spec.steps[1].job.checkpoint:" in done.stderr
    assert "--storage-class" in done.stderr
    # --storage-class gives it one; --no-create-pvc uses the compiled claim (made beforehand)
    done = _kfp(str(bad), "--image", IMAGE, "--storage-class", "fast", "-o", str(out))
    assert done.returncode == 0, done.stderr
    ir = next(yaml.safe_load_all(out.read_text(encoding="utf-8")))
    pvc = ir["root"]["dag"]["tasks"]["createpvc"]["inputs"]["parameters"]
    assert pvc["storage_class_name"]["runtimeValue"]["constant"] == "fast"
    done = _kfp(str(bad), "--image", IMAGE, "--no-create-pvc", "-o", str(out))
    assert done.returncode == 0, done.stderr
    ir, platform = yaml.safe_load_all(out.read_text(encoding="utf-8"))
    assert "createpvc" not in ir["root"]["dag"]["tasks"]
    (mount,) = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]["exec-evaluate"]["pvcMount"]
    assert mount["constant"] == "finetune-train-checkpoints"


def test_delete_pvc_is_refused_for_a_pipeline(tmp_path: Path) -> None:
    done = _kfp(str(PIPELINE), "--image", IMAGE, "--delete-pvc", "-o", str(tmp_path / "out.yaml"))
    assert done.returncode == 2 and "--delete-pvc apply to a single TrainingJob" in done.stderr


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
    assert built.checkpoint == "pvc://finetune-train-checkpoints/checkpoints"
    # with the run's own claim (CreatePVC's output), the launcher names that one
    mine = build_trainjob(
        specs, job="finetune-train", outputs={"prep.dataset": DATASET_URI}, checkpoint_claim="run-1-finetune-train-ckpt"
    )
    assert mine.checkpoint == "pvc://run-1-finetune-train-ckpt/checkpoints"


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
    done = _kfp(str(spec), "--image", IMAGE, "--storage-class", "filestore", "-o", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    return text, next(yaml.safe_load_all(text))


def test_a_ray_job_step_compiles_to_ir_without_install(ray_ir: tuple[str, dict[str, Any]]) -> None:
    text, ir = ray_ir
    assert "pip install" not in text and "pip3 install" not in text
    assert sorted(ir["root"]["dag"]["tasks"]) == ["createpvc", "report", "train"]
    assert ir["root"]["dag"]["tasks"]["report"]["dependentTasks"] == ["createpvc", "train"]
    # nodes is a run-time parameter: the run's claim is shared by however many nodes it gets
    pvc = ir["root"]["dag"]["tasks"]["createpvc"]["inputs"]["parameters"]
    assert pvc["access_modes"]["runtimeValue"]["constant"] == ["ReadWriteMany"]
    assert pvc["storage_class_name"]["runtimeValue"]["constant"] == "filestore"
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
    # the run's own claim replaces the compiled one in the head and every worker group
    from trainspec.kfp.merge import rewrite_any_claim

    assert rewrite_any_claim(built.trainjob, "run-7-ckpt")
    head = built.trainjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["volumes"]
    assert {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "run-7-ckpt"}} in head
    assert {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "run-7-ckpt"}} in workers["template"]["spec"][
        "volumes"
    ]
    assert built.checkpoint == "pvc://rayflow-train-checkpoints/checkpoints"


def test_the_pipeline_nests_in_your_own_kfp_pipeline(tmp_path: Path) -> None:
    """``pipeline_function`` gives the spec's pipeline as a ``@dsl.pipeline`` function: a team's
    hand-written kfp pipeline calls it as one sub-pipeline and passes its own values in."""
    from kfp import compiler, dsl

    from trainspec.kfp import pipeline_function

    finetune = pipeline_function(str(PIPELINE), "finetune", project=None, image=IMAGE, storage_class="fast")

    def nightly(records: int = 5000):  # type: ignore[no-untyped-def]  # kfp would read "-> None" as an output
        finetune(records=records, nodes=4)

    nightly.__annotations__ = {"records": int}  # this module's annotations are strings; kfp wants types
    out = tmp_path / "nightly.yaml"
    nightly = dsl.pipeline(name="nightly")(nightly)
    compiler.Compiler().compile(nightly, package_path=str(out))
    ir = next(yaml.safe_load_all(out.read_text(encoding="utf-8")))
    (task,) = ir["root"]["dag"]["tasks"].values()
    assert task["componentRef"]["name"] == "comp-finetune"
    assert task["inputs"]["parameters"]["records"] == {"componentInputParameter": "records"}
    assert task["inputs"]["parameters"]["nodes"]["runtimeValue"]["constant"] == 4
    assert "exec-train" in ir["deploymentSpec"]["executors"]


def test_pipeline_function_reports_what_does_not_compile(tmp_path: Path) -> None:
    from trainspec.kfp import KfpSpecError, pipeline_function

    text = (PIPELINE / "pipeline.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "pipeline.yaml"
    bad.write_text(text.replace("$(params.epochs)", "$(params.epoch)"), encoding="utf-8")
    with pytest.raises(KfpSpecError) as info:
        pipeline_function(str(bad), project=None, image=IMAGE)
    assert [d.code for d in info.value.diagnostics] == ["TS313"]
    with pytest.raises(KfpSpecError, match="no pipeline named 'nightly'"):
        pipeline_function(str(PIPELINE), "nightly", project=None, image=IMAGE)


def test_kfp_local_subprocess_runner_refuses_container_steps(tmp_path: Path) -> None:
    """Why docs/pipelines.md sends local runs to ``trainspec run --local``: every step of a Pipeline
    is a container component, and kfp.local's SubprocessRunner runs only Python components (its
    DockerRunner needs a Docker daemon). If kfp ever lifts this, this test says so."""
    from kfp import local

    from trainspec.kfp import pipeline_function

    finetune = pipeline_function(str(PIPELINE), project=None, image=IMAGE, create_pvc=False)
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(tmp_path), raise_on_error=True)
    with pytest.raises(RuntimeError, match="only supports running Lightweight Python Components"):
        finetune(records=10)


def test_the_job_step_runs_on_the_runs_own_claim(
    compiled: tuple[Path, Path], kube_env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job step's process, as KFP starts it, against the API stand-in: the TrainJob it applies
    mounts the claim CreatePVC made for the run, and its checkpoint output names that claim."""
    from kfp_testing import COMPLETE, NAMESPACE, RUN_ID

    from trainspec.kfp.pipeline_job_step import main

    specs = _specs(compiled)
    runtime = build_trainjob(specs, job="finetune-train", outputs={"prep.dataset": DATASET_URI}).trainjob
    ref = runtime["spec"]["runtimeRef"]
    assert ref["kind"] == "ClusterTrainingRuntime"
    kube_env.add_cluster_runtime(ref["name"])
    kube_env.status_script = [COMPLETE]
    checkpoint, status = tmp_path / "checkpoint", tmp_path / "status.json"
    args = ["--specs", specs, "--job", "finetune-train", "--run-id", RUN_ID, "--param", "nodes", "3"]
    args += ["--output", "prep.dataset", DATASET_URI, "--checkpoint-claim", "run-1-finetune-train-checkpoints"]
    args += ["--checkpoint", str(checkpoint), "--status", str(status), "--poll-seconds", "0.01"]
    assert main(args) == 0, capsys.readouterr().err
    (apply,) = kube_env.sent("PATCH")
    assert apply.path.endswith(f"/namespaces/{NAMESPACE}/trainjobs/finetune-train-{RUN_ID[:8]}")
    assert apply.body["spec"]["trainer"]["numNodes"] == 3
    claims = [
        volume["persistentVolumeClaim"]["claimName"]
        for patch in apply.body["spec"]["runtimePatches"]
        for rjob in patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
        for volume in rjob["template"]["spec"]["template"]["spec"].get("volumes", [])
        if volume["name"] == "checkpoints"
    ]
    assert claims == ["run-1-finetune-train-checkpoints"]
    assert checkpoint.read_text(encoding="utf-8") == "pvc://run-1-finetune-train-checkpoints/checkpoints\n"
