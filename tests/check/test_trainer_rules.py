"""Trainer's plugin rules (TS503): reserved env per framework, envInjection targets, the Flux
installer, torchtune, Volcano's queue annotation, MPI's launcher; on TrainJobs and on runtimes.

Cases written from reading kubeflow/trainer's plugins (pkg/runtime/framework/plugins/*) at the
commit of ../shared/crds/trainer; each rule has an accepted and a rejected case.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from trainspec.check import check_webhooks
from trainspec.dsl.diagnostics import Severity

RJOBS = ("spec", "template", "spec", "replicatedJobs")
TUNE = ["tune", "run"]


def errors(found: list) -> list[tuple[str | None, str]]:
    return [(d.file, d.path) for d in found if d.code == "TS503" and d.severity is Severity.ERROR]


def warnings(found: list) -> list[tuple[str | None, str]]:
    return [(d.file, d.path) for d in found if d.code == "TS503" and d.severity is Severity.WARNING]


def run(*manifests: dict, **kwargs: Any) -> list:
    return check_webhooks([(f"m{i}.yaml", m) for i, m in enumerate(manifests)], policy=False, **kwargs)


def with_policy(runtime: dict, **policy: Any) -> dict:
    runtime["spec"]["mlPolicy"] = {"numNodes": 1, **policy}
    return runtime


def env_job(trainjob, *names: str) -> dict:
    tj = trainjob()
    tj["spec"]["trainer"]["env"] = [{"name": n, "value": "1"} for n in names]
    tj["spec"]["runtimePatches"] = []
    return tj


ALL_FAMILIES = ("PET_NNODES", "OMPI_MCA_plm_rsh_args", "DMLC_TASK_ID", "JAX_PROCESS_ID", "PET_RDZV_BACKEND")


# -- reserved env names, per mlPolicy source ------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "rejected"),
    [
        ({"torch": {}}, [0]),
        ({"mpi": {"numProcPerNode": 1}}, [1]),
        ({"xgboost": {}}, [2]),
        ({"jax": {}}, []),  # the JAX plugin validates nothing
        ({"flux": {"numProcPerNode": 1}}, []),
        ({}, []),  # no source: the plain-ML plugin has no reserved names
    ],
    ids=["torch", "mpi", "xgboost", "jax", "flux", "plain"],
)
def test_reserved_env_names_depend_on_the_runtimes_policy(runtime, trainjob, policy, rejected) -> None:
    found = run(with_policy(runtime(), **policy), env_job(trainjob, *ALL_FAMILIES))
    assert errors(found) == [("m1.yaml", f"spec.trainer.env[{i}].name") for i in rejected]
    assert warnings(found) == []


def test_reserved_env_message_names_the_plugin_and_the_webhook(runtime, trainjob) -> None:
    (found,) = run(runtime(), env_job(trainjob, "PET_MASTER_PORT"))
    assert "'PET_MASTER_PORT'" in found.message and "mlPolicy.torch" in found.message
    assert "Trainer's webhook" in found.message
    (found,) = run(with_policy(runtime(), xgboost={}), env_job(trainjob, "DMLC_NUM_WORKER"))
    assert "mlPolicy.xgboost" in found.message and "Trainer's webhook" in found.message


def test_reserved_names_are_exact_not_prefixes(runtime, trainjob) -> None:
    """torchrun reads any PET_<option>; Trainer reserves only the five it sets."""
    assert run(runtime(), env_job(trainjob, "PET_RDZV_BACKEND", "PET_MAX_RESTARTS", "OMPI_MCA_btl")) == []


def test_reserved_env_with_a_runtime_known_by_name_only_is_a_warning(trainjob) -> None:
    found = run(env_job(trainjob, *ALL_FAMILIES), known_runtimes=["ts-torch"])
    assert errors(found) == []
    assert warnings(found) == [("m0.yaml", f"spec.trainer.env[{i}].name") for i in (0, 1, 2)]
    assert "framework is not known" in found[0].message


def test_reserved_env_on_a_missing_runtime_is_only_a_warning(trainjob) -> None:
    found = run(env_job(trainjob, "PET_NNODES"))
    assert errors(found) == [("m0.yaml", "spec.runtimeRef.name")]
    assert warnings(found) == [("m0.yaml", "spec.trainer.env[0].name")]


# -- torch envInjection ------------------------------------------------------------------------


def injection_runtime(runtime, rjob, *targets: dict) -> dict:
    rt = runtime()
    node = rt["spec"]["template"]["spec"]["replicatedJobs"][0]
    node["template"]["spec"]["template"]["spec"]["initContainers"] = [{"name": "preflight", "image": "x:1"}]
    node["template"]["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "x:1"})
    rt["spec"]["template"]["spec"]["replicatedJobs"].insert(0, rjob("prep", "prep"))
    rt["spec"]["template"]["spec"]["replicatedJobs"][1]["dependsOn"] = [{"name": "prep", "status": "Complete"}]
    rt["spec"]["mlPolicy"]["torch"] = {"envInjection": {"targets": list(targets)}}
    return rt


def test_env_injection_targets_that_exist_pass(runtime, rjob, trainjob) -> None:
    rt = injection_runtime(
        runtime,
        rjob,
        {"jobName": "node", "containerNames": ["preflight", "sidecar"]},  # an init container counts too
        {"jobName": "prep", "containerNames": ["prep"]},
    )
    assert run(rt, trainjob()) == []


def test_env_injection_target_container_missing(runtime, rjob, trainjob) -> None:
    rt = injection_runtime(runtime, rjob, {"jobName": "node", "containerNames": ["preflight", "monitor"]})
    found = run(rt, trainjob())
    base = "spec.mlPolicy.torch.envInjection.targets[0]"
    assert errors(found) == [("m0.yaml", f"{base}.containerNames[1]"), ("m1.yaml", "spec.runtimeRef.name")]
    assert "'monitor'" in found[0].message and "every TrainJob" in found[0].message
    assert "Trainer's webhook" in found[1].message and found[1].related[0].file == "m0.yaml"


def test_env_injection_target_job_missing(runtime, rjob) -> None:
    rt = injection_runtime(runtime, rjob, {"jobName": "launcher", "containerNames": ["node"]})
    assert errors(run(rt)) == [("m0.yaml", "spec.mlPolicy.torch.envInjection.targets[0].jobName")]


def test_env_injection_counts_containers_a_runtime_patch_adds(runtime, rjob, trainjob) -> None:
    """The plugin looks at the runtime merged with the TrainJob's patches."""
    rt = injection_runtime(runtime, rjob, {"jobName": "node", "containerNames": ["monitor"]})
    tj = trainjob()
    pod = tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"][
        "spec"
    ]["template"]["spec"]
    pod["containers"].append({"name": "monitor"})
    found = run(rt, tj)
    # The runtime alone is still incomplete; the TrainJob's patch adds the container (which the
    # JobSet plugin then refuses as a container the runtime lacks).
    assert ("m0.yaml", "spec.mlPolicy.torch.envInjection.targets[0].containerNames[0]") in errors(found)
    assert ("m1.yaml", "spec.runtimeRef.name") not in errors(found)


# -- Flux ----------------------------------------------------------------------------------------


def flux_runtime(runtime, rjob, rjob_name: str = "node", policy: bool = True) -> dict:
    rt = runtime()
    rt["spec"]["mlPolicy"] = {"numNodes": 1, **({"flux": {"numProcPerNode": 1}} if policy else {})}
    job = rjob(rjob_name, "node", ancestor="trainer")
    job["template"]["spec"]["template"]["spec"]["initContainers"] = [
        {"name": "setup", "image": "x:1"},
        {"name": "flux-installer", "image": "x:1"},
    ]
    rt["spec"]["template"]["spec"]["replicatedJobs"] = [job]
    rt["spec"]["template"]["spec"]["successPolicy"]["targetReplicatedJobs"] = [rjob_name]
    return rt


def test_flux_installer_init_container_is_reserved(runtime, rjob, trainjob) -> None:
    tj = trainjob()
    tj["spec"]["runtimePatches"] = []
    found = run(flux_runtime(runtime, rjob), tj)
    init = "spec.template.spec.replicatedJobs[0].template.spec.template.spec.initContainers[1].name"
    assert errors(found) == [("m0.yaml", init), ("m1.yaml", "spec.runtimeRef.name")]
    assert "'flux-installer'" in found[0].message and "Flux plugin" in found[0].message


def test_flux_installer_name_is_free_without_flux_or_outside_node(runtime, rjob, trainjob) -> None:
    tj = trainjob()
    tj["spec"]["runtimePatches"] = []
    assert run(flux_runtime(runtime, rjob, policy=False), tj) == []
    assert run(flux_runtime(runtime, rjob, rjob_name="trainer"), tj) == []


def test_flux_installer_added_by_a_runtime_patch(runtime, rjob, trainjob) -> None:
    rt = flux_runtime(runtime, rjob)
    pod = rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["initContainers"] = pod["initContainers"][:1]
    tj = trainjob()
    patch_pod = tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0][
        "template"
    ]["spec"]["template"]["spec"]
    patch_pod["initContainers"] = [{"name": "flux-installer"}]
    found = run(rt, tj)
    path = (
        "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
        ".template.spec.template.spec.initContainers[0].name"
    )
    flux = [d for d in found if "Flux plugin" in d.message]
    assert [(d.file, d.path) for d in flux] == [("m1.yaml", path)]


# -- torchtune -------------------------------------------------------------------------------------


def tune_runtime(runtime, name: str, gpus: int = 2) -> dict:
    rt = runtime()
    rt["metadata"]["name"] = name
    node = rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    node["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return rt


def tune_job(trainjob, runtime_name: str, *args: str, nodes: int | None = None, **trainer: Any) -> dict:
    tj = trainjob()
    tj["metadata"]["name"] = "tune"
    tj["spec"]["runtimeRef"] = {"name": runtime_name}
    tj["spec"]["runtimePatches"] = []
    body: dict[str, Any] = {"command": list(TUNE), "args": list(args), **trainer}
    if nodes is not None:
        body["numNodes"] = nodes
    tj["spec"]["trainer"] = body
    return tj


def tune(runtime, trainjob, runtime_name: str, *args: str, gpus: int = 2, **kw: Any) -> list:
    return run(tune_runtime(runtime, runtime_name, gpus), tune_job(trainjob, runtime_name, *args, **kw))


@pytest.mark.parametrize(
    "name", ["torchtune-llama3.2-1b", "torchtune-llama3.2-3b", "torchtune-qwen2.5-1.5b", "torchtune-llama3.3-70b"]
)
def test_torchtune_supported_models_pass(runtime, trainjob, name) -> None:
    assert tune(runtime, trainjob, name, "dataset.source=parquet") == []


@pytest.mark.parametrize("name", ["torchtune-llama3.1-8b", "my-tune", "torchtune-llama3.2-1b-custom"])
def test_torchtune_unsupported_model(runtime, trainjob, name) -> None:
    found = tune(runtime, trainjob, name)
    assert errors(found) == [("m1.yaml", "spec.runtimeRef.name")]
    assert "supported" in found[0].message and "Trainer's webhook" in found[0].message


def test_torchtune_rules_need_the_exact_entrypoint_and_the_torch_policy(runtime, trainjob) -> None:
    name = "torchtune-llama3.1-8b"
    rt, tj = tune_runtime(runtime, name), tune_job(trainjob, name)
    tj["spec"]["trainer"]["command"] = ["tune", "run", "--config", "x"]
    assert run(rt, tj) == []
    tj["spec"]["trainer"]["command"] = list(TUNE)
    assert errors(run(with_policy(rt, mpi={}), tj)) == []


def test_torchtune_multi_node_only_for_llama_3_3_70b(runtime, trainjob) -> None:
    found = tune(runtime, trainjob, "torchtune-llama3.2-1b", nodes=2)
    assert errors(found) == [("m1.yaml", "spec.trainer.numNodes")]
    assert "must be 1" in found[0].message
    assert tune(runtime, trainjob, "torchtune-llama3.3-70b", nodes=2) == []
    # Only the TrainJob's numNodes counts (the runtime's mlPolicy.numNodes is not read here).
    rt = tune_runtime(runtime, "torchtune-llama3.2-1b")
    rt["spec"]["mlPolicy"]["numNodes"] = 4
    assert run(rt, tune_job(trainjob, "torchtune-llama3.2-1b")) == []


def test_torchtune_lora_is_single_node(runtime, trainjob) -> None:
    lora = "model.lora_attn_modules=[q_proj,v_proj]"
    found = tune(runtime, trainjob, "torchtune-llama3.3-70b", lora, nodes=2)
    assert errors(found) == [("m1.yaml", "spec.trainer.numNodes")]
    assert "LoRA" in found[0].message
    assert tune(runtime, trainjob, "torchtune-llama3.3-70b", lora, nodes=1) == []
    qlora = tune(runtime, trainjob, "torchtune-llama3.3-70b", "model.quantize_base=True", nodes=3)
    assert errors(qlora) == [("m1.yaml", "spec.trainer.numNodes")]


def test_torchtune_qlora_not_for_qwen(runtime, trainjob) -> None:
    found = tune(runtime, trainjob, "torchtune-qwen2.5-1.5b", "model.quantize_base=True")
    assert errors(found) == [("m1.yaml", "spec.runtimeRef.name")]
    assert "QLoRA" in found[0].message
    # DoRA turns the quantized base into a plain LoRA run; a false flag is no QLoRA either.
    assert tune(runtime, trainjob, "torchtune-qwen2.5-1.5b", "model.quantize_base=True", "model.use_dora=True") == []
    assert tune(runtime, trainjob, "torchtune-qwen2.5-1.5b", "model.quantize_base= false") == []


def test_torchtune_qlora_on_llama_3_2_needs_one_device(runtime, trainjob) -> None:
    name = "torchtune-llama3.2-3b"
    found = tune(runtime, trainjob, name, "model.quantize_base=TRUE", gpus=2)
    assert errors(found) == [("m1.yaml", "spec.trainer.numProcPerNode"), ("m1.yaml", "spec.trainer.resourcesPerNode")]
    # One GPU (from the runtime, or from the TrainJob's resourcesPerNode) or one process: single device.
    assert tune(runtime, trainjob, name, "model.quantize_base=True", gpus=1) == []
    assert tune(runtime, trainjob, name, "model.quantize_base=True", gpus=4, numProcPerNode=1) == []
    assert (
        tune(
            runtime,
            trainjob,
            name,
            "model.quantize_base=True",
            gpus=4,
            resourcesPerNode={"requests": {"nvidia.com/gpu": "1"}},
        )
        == []
    )


def test_torchtune_immutable_configs_in_args(runtime, trainjob) -> None:
    found = tune(
        runtime,
        trainjob,
        "torchtune-llama3.2-1b",
        "epochs=2",
        "output_dir=/tmp/out",
        "tokenizer.path=/t",
        "checkpointer.checkpoint_dir=/c",
        "tokenizer.merges_file=/m",
        "checkpointer.output_dir=/fine",
    )
    assert errors(found) == [("m1.yaml", f"spec.trainer.args[{i}]") for i in (1, 2, 3, 4)]
    assert "'output_dir'" in found[0].message and "managed by the runtime" in found[0].message


# -- Volcano ----------------------------------------------------------------------------------------


QUEUE = "scheduling.volcano.sh/queue-name"


def volcano_runtime(runtime, queue: str | None) -> dict:
    rt = runtime()
    rt["spec"]["podGroupPolicy"] = {"volcano": {}}
    if queue is not None:
        rt["spec"]["template"]["metadata"] = {"annotations": {QUEUE: queue}}
    return rt


def test_volcano_queue_annotation_must_not_be_empty(runtime, trainjob) -> None:
    found = run(volcano_runtime(runtime, ""), trainjob())
    assert errors(found) == [
        ("m0.yaml", f"spec.template.metadata.annotations['{QUEUE}']"),
        ("m1.yaml", "spec.runtimeRef.name"),
    ]
    assert "Volcano" in found[0].message
    assert run(volcano_runtime(runtime, "research"), trainjob()) == []
    assert run(volcano_runtime(runtime, None), trainjob()) == []


def test_volcano_queue_annotation_from_a_runtime_patch(runtime, trainjob) -> None:
    tj = trainjob()
    tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["metadata"] = {"annotations": {QUEUE: ""}}
    path = f"spec.runtimePatches[0].trainingRuntimeSpec.template.metadata.annotations['{QUEUE}']"
    assert errors(run(volcano_runtime(runtime, "research"), tj)) == [("m1.yaml", path)]
    rt = runtime()  # without podGroupPolicy.volcano the annotation is nobody's business
    assert run(rt, tj) == []


# -- MPI launcher -------------------------------------------------------------------------------------


def test_mpi_launcher_rule_reads_the_trainjobs_num_nodes_only(runtime, rjob, trainjob) -> None:
    rt = runtime()
    rt["spec"]["mlPolicy"] = {"numNodes": 4, "mpi": {"runLauncherAsNode": True}}
    rt["spec"]["template"]["spec"]["replicatedJobs"] = [rjob("node", "node", ancestor="trainer")]
    tj = trainjob()
    tj["spec"]["runtimePatches"] = []
    del tj["spec"]["trainer"]["numNodes"]
    assert run(rt, tj) == []
    tj["spec"]["trainer"]["numNodes"] = 2
    found = run(rt, tj)
    assert errors(found) == [("m1.yaml", "spec.trainer.numNodes")]
    assert "missing ['launcher']" in found[0].message and "Trainer's webhook" in found[0].message


# -- runtime webhook warning ------------------------------------------------------------------------


def test_deprecated_cluster_runtime_warns(runtime) -> None:
    rt = runtime()
    rt["metadata"]["labels"]["trainer.kubeflow.org/support"] = "deprecated"
    assert warnings(run(rt)) == [("m0.yaml", "metadata.labels['trainer.kubeflow.org/support']")]
    namespaced = copy.deepcopy(rt)
    namespaced["kind"] = "TrainingRuntime"
    assert run(namespaced) == []


# -- against the CRDs: the cases above are valid objects, so only the webhook rules speak ----------


def test_rule_fixtures_are_valid_for_the_api_server(check, runtime, rjob, trainjob) -> None:
    """The server accepts these objects; every finding is a webhook's (TS503)."""
    cases = [
        (injection_runtime(runtime, rjob, {"jobName": "node", "containerNames": ["monitor"]}), trainjob()),
        (flux_runtime(runtime, rjob), trainjob()),
        (
            tune_runtime(runtime, "torchtune-llama3.2-1b"),
            tune_job(trainjob, "torchtune-llama3.2-1b", "output_dir=/x", nodes=2),
        ),
        (volcano_runtime(runtime, ""), trainjob()),
        (runtime(), env_job(trainjob, "PET_NNODES")),
    ]
    for rt, tj in cases:
        found = check(rt, tj)
        assert found and {d.code for d in found} == {"TS503"}, [(d.code, d.path, d.message) for d in found]


# -- Kubeflow Trainer's own runtimes pass, and so do TrainJobs the SDK would write for them -----------

UPSTREAM = Path(__file__).resolve().parents[2].parent / "shared" / "upstream" / "trainer-runtimes"


def _upstream_runtimes() -> list[dict]:
    if not UPSTREAM.is_dir():
        pytest.skip(f"{UPSTREAM} not found")
    docs = [yaml.safe_load(p.read_text()) for p in sorted(UPSTREAM.rglob("*.yaml"))]
    return [d for d in docs if isinstance(d, dict) and d.get("kind") == "ClusterTrainingRuntime"]


def test_upstream_runtimes_and_their_torchtune_jobs_pass(trainjob) -> None:
    runtimes = _upstream_runtimes()
    assert len(runtimes) >= 8
    assert errors(run(*runtimes)) == []
    tune_runtimes = [r["metadata"]["name"] for r in runtimes if r["metadata"]["name"].startswith("torchtune-")]
    assert tune_runtimes
    for name in tune_runtimes:
        tj = tune_job(trainjob, name, "dataset.source=parquet", "epochs=1")
        assert errors(run(*runtimes, tj)) == [], name
