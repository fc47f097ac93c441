"""The planner's diagnostics and the layout it hands the training code, through the real pipeline.

Errors (TS420-TS423, TS425, TS426) also have files in examples/invalid/; the warnings
(TS424, TS427, TS428) and the rest of the contract are here.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from trainspec.compiler.emit import render_stream
from trainspec.compiler.pipeline import Options, run
from trainspec.dsl.diagnostics import Diagnostic

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: torch-h100}
spec:
  framework: torch
  image: nvcr.io/nvidia/pytorch:25.01-py3
  resourcesPerNode: {gpu: 8}
  accelerator: {name: H100, memory: 80Gi, nvlinkBandwidth: 900GB/s}
  network: {resources: {rdma/ib: 8}, portBandwidth: 400Gb/s}
"""
MODEL_70B = (
    "{parameters: 70B, layers: 80, hiddenSize: 8192, attentionHeads: 64, kvHeads: 8, "
    "sequenceLength: 8192, globalBatch: 128, vocabulary: 128256}"
)


def job(extra: str = "", nodes: int = 8, model: str = MODEL_70B) -> str:
    body = f"""\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: llama, namespace: team-nlp}}
spec:
  runtime: torch-h100
  command: [torchrun, -m, pretrain]
  queue: team-nlp
  nodes: {nodes}
"""
    if model:
        body += f"  model: {model}\n"
    return body + extra


def compile_texts(tmp_path: Path, *texts: str, target: Any = None) -> Any:
    paths = []
    for index, text in enumerate(texts):
        path = tmp_path / f"spec{index}.yaml"
        path.write_text(text)
        paths.append(str(path))
    return run(paths, Options(project=None, target=target))


def codes(result: Any) -> list[tuple[str, str]]:
    return [(d.code, d.severity.value) for d in result.diagnostics if d.code.startswith("TS42")]


def found(result: Any, code: str) -> Diagnostic:
    return next(d for d in result.diagnostics if d.code == code)


def trainer_env(result: Any) -> dict[str, str]:
    docs = [d for d in yaml.safe_load_all(render_stream(result.outputs)) if d and d.get("kind") == "TrainJob"]
    (trainjob,) = docs
    return {e["name"]: e.get("value") for e in trainjob["spec"]["trainer"].get("env", [])}


def test_a_job_without_model_or_parallelism_gets_nothing(tmp_path: Path) -> None:
    result = compile_texts(tmp_path, RUNTIME, job(model=""))
    assert result.ok and codes(result) == []
    assert not any(name.startswith(("TRAINSPEC_TP", "TRAINSPEC_PP")) for name in trainer_env(result))


def test_the_recommended_layout_reaches_the_trainer_as_env(tmp_path: Path) -> None:
    result = compile_texts(tmp_path, RUNTIME, job())
    assert result.ok, [d.message for d in result.diagnostics]
    env = trainer_env(result)
    assert {
        k: env[k]
        for k in (
            "TRAINSPEC_TP_SIZE",
            "TRAINSPEC_PP_SIZE",
            "TRAINSPEC_DP_SIZE",
            "TRAINSPEC_ZERO_STAGE",
            "TRAINSPEC_RECOMPUTE",
        )
    } == {
        "TRAINSPEC_TP_SIZE": "8",
        "TRAINSPEC_PP_SIZE": "1",
        "TRAINSPEC_DP_SIZE": "8",
        "TRAINSPEC_ZERO_STAGE": "1",
        "TRAINSPEC_RECOMPUTE": "selective",
    }
    assert "TRAINSPEC_PARALLEL_ARGS" not in env  # no framework named: env only


def test_a_partial_pin_is_honoured_and_dp_is_derived(tmp_path: Path) -> None:
    result = compile_texts(tmp_path, RUNTIME, job("  parallelism: {tp: 4, pp: 4}\n"))
    assert result.ok, [d.message for d in result.diagnostics]
    env = trainer_env(result)
    assert (env["TRAINSPEC_TP_SIZE"], env["TRAINSPEC_PP_SIZE"], env["TRAINSPEC_DP_SIZE"]) == ("4", "4", "4")


@pytest.mark.parametrize(
    ("framework", "expected"),
    [
        (
            "megatron",
            [
                "--tensor-model-parallel-size",
                "8",
                "--pipeline-model-parallel-size",
                "2",
                "--sequence-parallel",
                "--use-distributed-optimizer",
                "--recompute-granularity",
                "selective",
            ],
        ),
        (
            "torchtitan",
            [
                "--parallelism.tensor_parallel_degree",
                "8",
                "--parallelism.pipeline_parallel_degree",
                "2",
                "--parallelism.data_parallel_replicate_degree",
                "4",
                "--parallelism.data_parallel_shard_degree",
                "1",
                "--parallelism.context_parallel_degree",
                "1",
                "--activation_checkpoint.mode",
                "selective",
            ],
        ),
        (
            "nemo",
            [
                "model.tensor_model_parallel_size=8",
                "model.pipeline_model_parallel_size=2",
                "model.sequence_parallel=true",
                "model.optim.name=distributed_fused_adam",
                "model.activations_checkpoint_granularity=selective",
            ],
        ),
        (
            "deepspeed",
            [
                "--tensor-model-parallel-size",
                "8",
                "--pipeline-model-parallel-size",
                "2",
                "--zero-stage",
                "1",
                "--checkpoint-activations",
            ],
        ),
    ],
)
def test_a_named_framework_gets_its_flags(tmp_path: Path, framework: str, expected: list[str]) -> None:
    zero = 0 if framework == "torchtitan" else 1
    pin = f"  parallelism: {{tp: 8, pp: 2, zeroStage: {zero}, recompute: selective, framework: {framework}}}\n"
    result = compile_texts(tmp_path, RUNTIME, job(pin))
    assert result.ok, [d.message for d in result.diagnostics]
    assert shlex.split(trainer_env(result)["TRAINSPEC_PARALLEL_ARGS"]) == expected


@pytest.mark.parametrize("target", ["training-operator", "ray"])
def test_every_engine_passes_the_layout(tmp_path: Path, target: str) -> None:
    result = compile_texts(tmp_path, RUNTIME, job("  parallelism: {tp: 8, pp: 1}\n"), target={"engine": target})
    assert result.ok, [d.message for d in result.diagnostics]
    text = render_stream(result.outputs)
    assert "TRAINSPEC_TP_SIZE" in text and "TRAINSPEC_DP_SIZE" in text


def test_tp_across_nodes_is_a_warning_at_the_pin(tmp_path: Path) -> None:
    model = MODEL_70B.replace("kvHeads: 8", "kvHeads: 16")
    result = compile_texts(tmp_path, RUNTIME, job("  parallelism: {tp: 16}\n", model=model))
    assert ("TS424", "warning") in codes(result)
    diagnostic = found(result, "TS424")
    assert diagnostic.path == "spec.parallelism.tp" and diagnostic.line == 10
    assert diagnostic.related and diagnostic.related[0].file.endswith("spec0.yaml")


def test_a_pin_that_only_activations_overflow_is_a_warning(tmp_path: Path) -> None:
    # TP 8, no recomputation: 48 GB of model state fits, 238 GB of activations do not.
    result = compile_texts(tmp_path, RUNTIME, job("  parallelism: {tp: 8, pp: 1, zeroStage: 1, recompute: none}\n"))
    assert codes(result) == [("TS425", "warning")]
    assert "does not fit" in found(result, "TS425").message
    assert "recommends TP 8 x PP 1 x DP 8, ZeRO-1, selective" in (found(result, "TS425").hint or "")


def test_no_layout_fits_is_a_warning_at_the_model(tmp_path: Path) -> None:
    model = "{parameters: 405B, layers: 126, hiddenSize: 16384, attentionHeads: 128, kvHeads: 8, sequenceLength: 8192}"
    result = compile_texts(tmp_path, RUNTIME, job(model=model))
    assert codes(result) == [("TS427", "warning")]
    diagnostic = found(result, "TS427")
    assert diagnostic.path == "spec.model" and "no layout of 64 GPUs fits" in diagnostic.message
    assert result.ok  # a warning: the job still compiles, with no layout variables
    assert "TRAINSPEC_TP_SIZE" not in trainer_env(result)


def test_without_gpu_memory_the_planner_says_it_cannot_check(tmp_path: Path) -> None:
    runtime = RUNTIME.replace("  accelerator: {name: H100, memory: 80Gi, nvlinkBandwidth: 900GB/s}\n", "")
    result = compile_texts(tmp_path, runtime, job())
    assert codes(result) == [("TS428", "warning")]


def test_a_model_without_any_parameter_count(tmp_path: Path) -> None:
    model = "{layers: 80, hiddenSize: 8192, attentionHeads: 64, sequenceLength: 8192}"
    result = compile_texts(tmp_path, RUNTIME, job(model=model))
    assert codes(result) == [("TS420", "error")]


def test_parameters_come_from_the_checkpoint_model(tmp_path: Path) -> None:
    model = "{layers: 80, hiddenSize: 8192, attentionHeads: 64, kvHeads: 8, sequenceLength: 8192}"
    ckpt = "  checkpoint: {uri: s3://ckpt/llama/, model: {parameters: 70B}}\n"
    result = compile_texts(tmp_path, RUNTIME, job(ckpt, model=model))
    assert result.ok and codes(result) == []
    assert trainer_env(result)["TRAINSPEC_TP_SIZE"] == "8"


def test_deepspeed_pipeline_refuses_zero_2(tmp_path: Path) -> None:
    result = compile_texts(tmp_path, RUNTIME, job("  parallelism: {pp: 2, zeroStage: 2, framework: deepspeed}\n"))
    assert ("TS426", "error") in codes(result)


def test_the_layout_names_are_reserved(tmp_path: Path) -> None:
    result = compile_texts(tmp_path, RUNTIME, job("  env: {TRAINSPEC_TP_SIZE: '4'}\n"))
    assert any(d.code == "TS303" for d in result.diagnostics)


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("  parallelism: {fsdp: true, zeroStage: 1}\n", "fsdp is ZeRO stage 3"),
        ("  parallelism: {distributedOptimizer: true, zeroStage: 2}\n", "distributedOptimizer is ZeRO stage 1"),
    ],
)
def test_contradictory_pins_are_schema_errors(tmp_path: Path, block: str, message: str) -> None:
    result = compile_texts(tmp_path, RUNTIME, job(block))
    assert any(message in d.message for d in result.diagnostics if d.is_error)


@pytest.mark.parametrize("raw", ["900GiB/s", "fast", "0GB/s", "12"])
def test_a_bad_bandwidth_is_located(tmp_path: Path, raw: str) -> None:
    runtime = RUNTIME.replace(
        "nvlinkBandwidth: 900GB/s", f"nvlinkBandwidth: {raw!r}" if raw == "12" else f"nvlinkBandwidth: {raw}"
    )
    result = compile_texts(tmp_path, runtime, job())
    bad = [d for d in result.diagnostics if d.is_error]
    assert bad and bad[0].path == "spec.accelerator.nvlinkBandwidth"


def test_zero_2_with_a_pipeline_is_refused_without_a_framework(tmp_path: Path) -> None:
    result = compile_texts(tmp_path, RUNTIME, job("  parallelism: {pp: 2, zeroStage: 2}\n"))
    assert ("TS426", "error") in codes(result)
    assert "no framework runs ZeRO stage 2 with pp 2" in found(result, "TS426").message


MODEL_405B = (
    "{parameters: 405B, layers: 126, hiddenSize: 16384, attentionHeads: 128, kvHeads: 8, "
    "sequenceLength: 8192, globalBatch: 2048, vocabulary: 128256, microBatch: 1}"
)


def test_126_layers_on_16_stages_need_the_split_named(tmp_path: Path) -> None:
    # The split Llama 3 405B trained with is refused unless the spec says it: the framework must be told.
    text = job("  parallelism: {tp: 8, pp: 16}\n", nodes=2048, model=MODEL_405B)
    result = compile_texts(tmp_path, RUNTIME, text)
    problem = found(result, "TS422")
    assert problem.path == "spec.parallelism.pp"
    assert problem.message == "pp 16 does not divide the model's 126 layers into equal pipeline stages"
    assert "firstStageLayers: 7, lastStageLayers: 7" in (problem.hint or "")
    pinned = "  parallelism: {tp: 8, pp: 16, firstStageLayers: 7, lastStageLayers: 7, framework: megatron}\n"
    result = compile_texts(tmp_path, RUNTIME, job(pinned, nodes=2048, model=MODEL_405B))
    assert [c for c, severity in codes(result) if severity == "error"] == [], result.diagnostics
    env = trainer_env(result)
    assert (env["TRAINSPEC_FIRST_STAGE_LAYERS"], env["TRAINSPEC_LAST_STAGE_LAYERS"]) == ("7", "7")
    args = shlex.split(env["TRAINSPEC_PARALLEL_ARGS"])
    assert args[args.index("--decoder-first-pipeline-num-layers") + 1] == "7"
    assert args[args.index("--decoder-last-pipeline-num-layers") + 1] == "7"
    # a split that leaves the middle stages uneven is located at the split
    bad = "  parallelism: {tp: 8, pp: 16, firstStageLayers: 6, lastStageLayers: 7}\n"
    problem = found(compile_texts(tmp_path, RUNTIME, job(bad, nodes=2048, model=MODEL_405B)), "TS422")
    assert problem.path == "spec.parallelism.firstStageLayers"
    assert "the other 113 layers do not divide over the 14 middle stages" in problem.message
    # virtual stages that split no stage evenly are located at virtualStages, with their own hint
    bad = "  parallelism: {tp: 8, pp: 16, firstStageLayers: 7, lastStageLayers: 7, virtualStages: 3}\n"
    problem = found(compile_texts(tmp_path, RUNTIME, job(bad, nodes=2048, model=MODEL_405B)), "TS422")
    assert problem.path == "spec.parallelism.virtualStages"
    assert "3 virtual stages do not divide the stages' layers (7, 8)" in problem.message
    assert "virtualStages" in (problem.hint or "") and "pp that divides" not in (problem.hint or "")


def test_context_parallelism_must_divide_the_sequence_and_reaches_the_flags(tmp_path: Path) -> None:
    problem = found(compile_texts(tmp_path, RUNTIME, job("  parallelism: {tp: 8, cp: 3}\n", nodes=6)), "TS429")
    assert problem.path == "spec.parallelism.cp" and "8192 tokens" in problem.message
    pinned = "  parallelism: {tp: 8, cp: 2, pp: 1, framework: megatron, sequenceParallel: false}\n"
    result = compile_texts(tmp_path, RUNTIME, job(pinned))
    env = trainer_env(result)
    assert (env["TRAINSPEC_CP_SIZE"], env["TRAINSPEC_DP_SIZE"], env["TRAINSPEC_SEQUENCE_PARALLEL"]) == (
        "2",
        "4",
        "false",
    )
    args = shlex.split(env["TRAINSPEC_PARALLEL_ARGS"])
    assert args[args.index("--context-parallel-size") + 1] == "2" and "--sequence-parallel" not in args


def test_the_spec_refuses_half_a_split_and_virtual_stages_without_a_pipeline(tmp_path: Path) -> None:
    for pin, words in (
        ("{tp: 8, pp: 16, firstStageLayers: 7}", "firstStageLayers and lastStageLayers go together"),
        ("{tp: 8, virtualStages: 2}", "virtualStages needs pp > 1"),
    ):
        result = compile_texts(tmp_path, RUNTIME, job(f"  parallelism: {pin}\n"))
        assert any(words in d.message for d in result.diagnostics if d.is_error), result.diagnostics
