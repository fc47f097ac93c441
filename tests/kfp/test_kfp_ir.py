"""Compile pipelines with kfp's compiler and check the IR: what a KFP backend would run."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("kfp", reason="the kfp extra is not installed: pip install 'trainspec[kfp]'")

from kfp_testing import EXAMPLES, ROOT

from trainspec.kfp.job_pipeline import KfpSpecError, build_pipeline, compile_pipeline, compile_trainjob

CPU_JOB = EXAMPLES / "kfp" / "cpu-job.yaml"
IMAGE = "registry.example.com/platform/trainspec-launcher:0.1.0"
PASSTHROUGHS = [
    {"field": "RESOURCES"},
    {"field": "KUBERNETES_TOLERATIONS"},
    {"field": "KUBERNETES_NODE_SELECTOR"},
    {"field": "KUBERNETES_AFFINITY"},
    {"field": "ENV", "applyToTask": True},
    {"field": "KUBERNETES_VOLUMES", "applyToTask": True},
]


def _ir(pipeline: Any, tmp_path: Path) -> list[dict]:
    path = tmp_path / "pipeline.yaml"
    compile_pipeline(pipeline, str(path))
    return list(yaml.safe_load_all(path.read_text(encoding="utf-8")))


def _const(task: dict, name: str) -> Any:
    return task["inputs"]["parameters"][name]["runtimeValue"]["constant"]


def _cache_off(task: dict) -> bool:
    # enableCache is a proto bool: false is the default and is left out of the YAML.
    return task.get("cachingOptions", {}).get("enableCache", False) is False


def test_trainspec_pipeline_ir(tmp_path: Path) -> None:
    compiled = compile_trainjob(CPU_JOB)
    ir = _ir(build_pipeline(compiled, delete_pvc=True, timeout_seconds=7200, image=IMAGE), tmp_path)[0]
    tasks = ir["root"]["dag"]["tasks"]
    assert set(tasks) == {"createpvc", "launch-trainjob", "deletepvc"}

    launch = tasks["launch-trainjob"]
    # The manifest is an exact JSON string constant: key order as compiled, ints stay ints.
    constant = _const(launch, "trainjob")
    assert constant == compiled.manifest
    assert json.loads(constant) == compiled.trainjob
    spec = json.loads(constant)["spec"]
    assert type(spec["trainer"]["numNodes"]) is int and type(spec["activeDeadlineSeconds"]) is int
    assert type(spec["trainer"]["resourcesPerNode"]["requests"]["cpu"]) is int
    assert _const(launch, "run_id") == "{{$.pipeline_job_uuid}}"
    assert launch["inputs"]["parameters"]["checkpoint_claim"]["taskOutputParameter"] == {
        "outputParameterKey": "name",
        "producerTask": "createpvc",
    }
    assert launch["dependentTasks"] == ["createpvc"]

    component = ir["components"]["comp-launch-trainjob"]
    assert component["inputDefinitions"]["parameters"]["task_config"]["parameterType"] == "TASK_CONFIG"
    assert component["inputDefinitions"]["parameters"]["trainjob"]["parameterType"] == "STRING"
    assert component["taskConfigPassthroughs"] == PASSTHROUGHS
    assert set(component["outputDefinitions"]["parameters"]) == {"name", "phase"}
    assert component["outputDefinitions"]["artifacts"]["status"]["artifactType"]["schemaTitle"] == "system.Artifact"

    pvc = tasks["createpvc"]
    assert _const(pvc, "storage_class_name") == "standard-rwx"  # explicit, from the spec
    assert _const(pvc, "size") == "10Gi"
    assert _const(pvc, "access_modes") == ["ReadWriteMany"]
    assert _const(pvc, "pvc_name_suffix") == "-kfp-ddp-cpu-checkpoints"
    delete = tasks["deletepvc"]
    assert set(delete["dependentTasks"]) == {"createpvc", "launch-trainjob"}  # only after a successful launch
    for task in tasks.values():
        assert _cache_off(task), task

    executor = ir["deploymentSpec"]["executors"]["exec-launch-trainjob"]["container"]
    command = " ".join(executor["command"])
    assert executor["image"] == IMAGE
    # The image has trainspec and kfp: nothing is installed at start-up.
    assert "pip install" not in command and "pip3" not in command
    assert "from trainspec.kfp.launcher import run_launcher" in command


def test_storage_class_is_required_for_the_pvc_step() -> None:
    compiled = compile_trainjob(EXAMPLES / "llama-sft")
    no_class = compiled.__class__(
        **{
            **compiled.__dict__,
            "claim": {
                **compiled.claim,
                "spec": {k: v for k, v in compiled.claim["spec"].items() if k != "storageClassName"},
            },
        }
    )
    with pytest.raises(KfpSpecError, match="storage class"):
        build_pipeline(no_class)
    build_pipeline(no_class, storage_class="fast-rwx", image=IMAGE)  # given explicitly: fine


def test_without_pvc_step(tmp_path: Path) -> None:
    ir = _ir(build_pipeline(compile_trainjob(CPU_JOB), create_pvc=False, image=IMAGE), tmp_path)[0]
    tasks = ir["root"]["dag"]["tasks"]
    assert list(tasks) == ["launch-trainjob"]
    assert _const(tasks["launch-trainjob"], "checkpoint_claim") == ""
    with pytest.raises(KfpSpecError, match="delete-pvc"):
        build_pipeline(compile_trainjob(CPU_JOB), create_pvc=False, delete_pvc=True, image=IMAGE)


def test_an_explicit_launcher_installs_nothing(tmp_path: Path) -> None:
    from trainspec.kfp import make_launcher

    launcher = make_launcher(image="registry.internal/ml/trainspec-kfp:0.1.0")
    ir = _ir(build_pipeline(compile_trainjob(CPU_JOB), create_pvc=False, launcher=launcher), tmp_path)[0]
    container = ir["deploymentSpec"]["executors"]["exec-launch-trainjob"]["container"]
    assert container["image"] == "registry.internal/ml/trainspec-kfp:0.1.0"
    assert "pip install" not in " ".join(container["command"])


def test_example_pipeline_ir(tmp_path: Path) -> None:
    module_spec = importlib.util.spec_from_file_location("trainspec_kfp_example", EXAMPLES / "kfp" / "pipeline.py")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    docs = _ir(module.example_pipeline, tmp_path)
    ir, platform = docs[0], docs[1]
    tasks = ir["root"]["dag"]["tasks"]
    assert set(tasks) == {"createpvc", "prepare-data", "launch-trainjob", "evaluate"}
    assert _const(tasks["createpvc"], "storage_class_name") == "standard-rwx"
    assert _const(tasks["launch-trainjob"], "trainjob") == module.JOB.manifest
    assert _cache_off(tasks["launch-trainjob"]) and _cache_off(tasks["createpvc"])
    assert tasks["evaluate"]["inputs"]["parameters"]["phase"]["taskOutputParameter"] == {
        "outputParameterKey": "phase",
        "producerTask": "launch-trainjob",
    }
    env = ir["deploymentSpec"]["executors"]["exec-launch-trainjob"]["container"]["env"]
    assert {"name": "TRAINSPEC_DATA_DIR", "value": "/checkpoints/data"} in env
    executors = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
    launcher = executors["exec-launch-trainjob"]
    assert launcher["tolerations"][0]["key"] == "dedicated"
    assert launcher["nodeSelector"] == {"labels": {"node-pool": "cpu-training"}}
    assert "pvcMount" not in launcher  # the claim reaches the TrainJob through checkpoint_claim
    assert executors["exec-prepare-data"]["pvcMount"][0]["mountPath"] == "/checkpoints"


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "trainspec", *args], cwd=cwd, check=False, capture_output=True, text=True, timeout=120
    )


def test_cli_compiles_llama_sft(tmp_path: Path) -> None:
    out = tmp_path / "pipeline.yaml"
    done = _cli("kfp", "examples/llama-sft", "-o", str(out), "--timeout", "3600", "--delete-pvc", "--image", IMAGE)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stderr and "torch-h100-ib-sharded" in done.stderr
    ir = yaml.safe_load_all(out.read_text(encoding="utf-8")).__next__()
    tasks = ir["root"]["dag"]["tasks"]
    manifest = _const(tasks["launch-trainjob"], "trainjob")
    # Exactly what `trainspec compile` emits for that TrainJob.
    stream = _cli("compile", "examples/llama-sft", "-o", "-")
    emitted = [d for d in yaml.safe_load_all(stream.stdout) if d["kind"] == "TrainJob"]
    assert json.loads(manifest) == emitted[0]
    assert json.loads(manifest)["spec"]["trainer"]["numNodes"] == 8
    assert _const(tasks["launch-trainjob"], "timeout_seconds") == 3600
    assert _const(tasks["createpvc"], "storage_class_name") == "lustre"
    assert _const(tasks["createpvc"], "size") == "3286Gi"
    assert "deletepvc" in tasks


def test_cli_errors(tmp_path: Path) -> None:
    done = _cli("kfp", "examples/invalid/TS103-syntax-error.yaml")
    # Located, as every command reports: path:line:col: error[TS103]: ...
    assert done.returncode == 1 and "TS103-syntax-error.yaml:" in done.stderr and "error[TS103]" in done.stderr
    done = _cli("kfp", "examples/ddp-cpu.yaml", "examples/kfp/cpu-job.yaml")
    assert done.returncode == 1 and "expected one job" in done.stderr and "--job" in done.stderr
    done = _cli(
        "kfp", "examples/ddp-cpu.yaml", "examples/kfp/cpu-job.yaml", "--job", "ddp-cpu", "-o", "-", "--image", IMAGE
    )
    assert done.returncode == 0 and "PIPELINE DEFINITION" in done.stdout
    done = _cli("kfp", "examples/ddp-cpu.yaml", "--trainer-api", "2.1", "--image", IMAGE)
    assert done.returncode == 1 and "Trainer 2.1 is not supported" in done.stderr
    done = _cli("kfp")
    assert done.returncode == 2


def test_cli_rbac() -> None:
    done = _cli("kfp", "--rbac", "--namespace", "team-nlp", "--service-account", "default-editor")
    assert done.returncode == 0, done.stderr
    objects = list(yaml.safe_load_all(done.stdout))
    assert [o["kind"] for o in objects] == ["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]
    role, binding, cluster_role, cluster_binding = objects
    assert role["metadata"]["namespace"] == "team-nlp"
    rules = {(tuple(r["apiGroups"]), tuple(r["resources"])): set(r["verbs"]) for r in role["rules"]}
    assert rules[(("trainer.kubeflow.org",), ("trainjobs",))] == {"get", "list", "watch", "create", "patch", "delete"}
    assert rules[(("trainer.kubeflow.org",), ("trainingruntimes",))] == {"get"}
    assert rules[(("",), ("pods",))] == {"get", "list", "watch"}
    assert rules[(("",), ("pods/log",))] == {"get"}
    assert rules[(("",), ("events",))] == {"list"}
    assert cluster_role["rules"] == [
        {"apiGroups": ["trainer.kubeflow.org"], "resources": ["clustertrainingruntimes"], "verbs": ["get"]}
    ]
    for bound, kind, name in ((binding, "Role", role), (cluster_binding, "ClusterRole", cluster_role)):
        assert bound["subjects"] == [{"kind": "ServiceAccount", "name": "default-editor", "namespace": "team-nlp"}]
        assert bound["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": kind,
            "name": name["metadata"]["name"],
        }
    assert "namespace" not in cluster_role["metadata"]


def test_checkpoint_claim_needs_a_checkpoint_volume() -> None:
    from kfp import dsl

    from trainspec.kfp import trainjob_task

    with pytest.raises(KfpSpecError, match="no checkpoint volume"):

        @dsl.pipeline
        def wrong():  # ddp-cpu has no checkpoint
            trainjob_task(EXAMPLES / "ddp-cpu.yaml", checkpoint_claim="some-pvc")
