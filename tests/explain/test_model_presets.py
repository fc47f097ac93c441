"""spec.model presets and the parameter count from the shape (issue 25, "fewer numbers to type").

Every preset's computed count is checked against the count its authors publish; the count itself
against the per-layer arithmetic of two papers that state it to the parameter; presets and the
count through the real pipeline (validation, TS420, TS460, the planner's inputs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from trainspec.compiler.parallelism import fromplan
from trainspec.compiler.parallelism.param_count import count
from trainspec.compiler.pipeline import Options, run
from trainspec.dsl import codes
from trainspec.dsl.errors import ValidationError
from trainspec.dsl.framework.measures import ParamCount
from trainspec.dsl.spec.model_presets import PRESETS
from trainspec.dsl.spec.parallelism import TransformerModel

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: torch-h100}
spec:
  framework: torch
  image: nvcr.io/nvidia/pytorch:25.01-py3
  resourcesPerNode: {gpu: 8}
  accelerator: {name: H100, memory: 80Gi, nvlinkBandwidth: 900GB/s}
"""


def job(model: str, extra: str = "", nodes: int = 8) -> str:
    return f"""\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: llm, namespace: team-nlp}}
spec:
  runtime: torch-h100
  command: [torchrun, -m, pretrain]
  queue: team-nlp
  nodes: {nodes}
  model: {model}
{extra}"""


def compiled(tmp_path: Path, *texts: str) -> Any:
    paths = []
    for index, text in enumerate(texts):
        path = tmp_path / f"spec{index}.yaml"
        path.write_text(text)
        paths.append(str(path))
    return run(paths, Options(project=None))


def planner_codes(result: Any) -> list[tuple[str, str]]:
    return [(d.code, d.severity.value) for d in result.diagnostics if d.code.startswith(("TS42", "TS46"))]


def model(**fields: Any) -> TransformerModel:
    return TransformerModel.model_validate({"sequenceLength": 4096, **fields})


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_each_preset_counts_to_its_published_size(name: str) -> None:
    preset = PRESETS[name]
    counted = count(model(preset=name))
    assert counted is not None
    published = ParamCount.parse(preset.published).count
    assert abs(counted.total - published) <= 0.01 * published, (counted.total, preset.published)
    if preset.active is not None:  # a mixture of experts: the parameters one token goes through
        active = ParamCount.parse(preset.active).count
        assert abs(counted.active - active) <= 0.02 * active, (counted.active, preset.active)
        assert counted.active < counted.total / 3
    else:
        assert counted.active == counted.total


def test_the_count_is_the_papers_to_the_parameter() -> None:
    # Gemma 2 report, Table 2: 9B has 917,504,000 embedding and 8,324,201,984 non-embedding
    # parameters. Gemma 2 has four norms per layer; the count takes two (42 x 2 x 3584 fewer).
    gemma = count(model(preset="gemma2-9b"))
    assert gemma is not None and gemma.total == 917_504_000 + 8_324_201_984 - 42 * 2 * 3584
    # Llama 3 70B by hand: per layer q and o 8192^2 each, k and v 8192 x 1024 each, three MLP
    # matrices of 8192 x 28672, two norms; untied embeddings of 128256 x 8192; a final norm.
    per_layer = 2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192
    llama = count(model(preset="llama3-70b"))
    assert llama is not None and llama.total == 80 * per_layer + 2 * 128256 * 8192 + 8192 == 70_553_706_496


def test_moe_counts_every_expert_and_active_counts_the_routed_ones() -> None:
    dense = count(model(preset="mistral-7b"))
    moe = count(model(preset="mixtral-8x7b"))  # Mistral 7B's attention, 8 experts of its MLP
    assert dense is not None and moe is not None
    mlp = 3 * 4096 * 14336
    router = 4096 * 8
    assert moe.total - dense.total == 32 * (7 * mlp + router)
    assert moe.active - dense.active == 32 * (1 * mlp + router)


def test_a_gelu_mlp_and_tied_embeddings_count_fewer() -> None:
    gated = count(model(preset="llama3-8b"))
    gelu = count(model(preset="llama3-8b", gatedMlp=False))
    tied = count(model(preset="llama3-8b", tiedEmbeddings=True))
    assert gated is not None and gelu is not None and tied is not None
    assert gated.total - gelu.total == 32 * 4096 * 14336
    assert gated.total - tied.total == 128256 * 4096


def test_a_preset_fills_the_shape_and_any_field_overrides_it() -> None:
    m = model(preset="llama3-70b", layers=40, kvHeads=16)
    assert (m.layers, m.kv_heads, m.hidden_size, m.ffn_hidden_size, m.vocabulary) == (40, 16, 8192, 28672, 128256)
    py = TransformerModel(preset="qwen2.5-72b", sequence_length=8192, hidden_size=4096)
    assert (py.hidden_size, py.layers, py.vocabulary) == (4096, 80, 152064)
    # filled in as if written: the dump validates back to an equal model
    again = TransformerModel.model_validate(py.model_dump(by_alias=True, exclude_defaults=True))
    assert again == py and again.model_fields_set == py.model_fields_set


@pytest.mark.parametrize(
    "fields",
    [
        {"preset": None, "hiddenSize": 64, "attentionHeads": 4},
        {"layers": None, "hiddenSize": 64, "attentionHeads": 4},
    ],
)
def test_a_null_is_not_a_value(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as raised:
        model(**fields)
    assert [(e["type"], e["loc"]) for e in raised.value.errors()] == [("required", ("layers",))]
    assert model(preset="llama3-8b", layers=None).layers == 32  # the preset fills a null


def test_the_sequence_length_is_never_a_presets() -> None:
    with pytest.raises(ValidationError) as raised:
        TransformerModel.model_validate({"preset": "llama3-70b"})
    assert [(e["type"], e["loc"]) for e in raised.value.errors()] == [("required", ("sequenceLength",))]


def test_the_schema_lists_every_preset_and_the_docs_give_each_its_source() -> None:
    schema = json.loads((ROOT / "trainspec" / "schemas" / "trainingjob.schema.json").read_text())
    preset = schema["$defs"]["TransformerModel"]["properties"]["preset"]
    assert preset["anyOf"][0]["enum"] == list(PRESETS)
    docs = (ROOT / "docs" / "parallelism.md").read_text()
    for name, entry in PRESETS.items():
        assert f"| `{name}` |" in docs, name
        assert entry.source.split(" (")[0].split(";")[0] in docs, entry.source


def test_an_unknown_preset_is_located_with_the_close_names(tmp_path: Path) -> None:
    result = compiled(tmp_path, RUNTIME, job("{preset: llama3-7b, sequenceLength: 8192}"))
    (diagnostic,) = result.diagnostics  # no "layers is required" besides it
    assert (diagnostic.code, diagnostic.path, diagnostic.line, diagnostic.column) == (
        codes.OUT_OF_RANGE,
        "spec.model.preset",
        9,
        19,  # the value: "  model: {preset: " is 18 characters
    )
    assert "unknown model preset 'llama3-7b'" in diagnostic.message
    assert diagnostic.hint is not None and "'llama3-70b'" in diagnostic.hint and "'llama3-8b'" in diagnostic.hint


def test_without_a_preset_the_shape_is_required(tmp_path: Path) -> None:
    result = compiled(tmp_path, RUNTIME, job("{hiddenSize: 8192, attentionHeads: 64, sequenceLength: 8192}"))
    assert [(d.code, d.path) for d in result.diagnostics] == [(codes.MISSING_FIELD, "spec.model.layers")]


def test_the_planner_counts_a_preset_and_uses_the_total_of_an_moe(tmp_path: Path) -> None:
    result = compiled(tmp_path, RUNTIME, job("{preset: mixtral-8x7b, sequenceLength: 4096}"))
    assert result.ok and planner_codes(result) == [(codes.MODEL_APPROXIMATED, "note")]
    (note,) = result.diagnostics
    assert "memory counts all 8 experts" in note.message and "46.70B, 12.88B active" in note.message
    assert note.path == "spec.model" and "latent" not in note.message
    (plan,) = result.plans
    found = fromplan.arch(plan)
    assert found is not None and found.parameters == 46_702_792_704  # every expert is stored
    assert found.shape is not None
    assert (found.shape.experts, found.shape.experts_per_token, found.shape.ffn_hidden) == (8, 2, 14336)
    assert found.shape.gated_mlp and found.shape.moe_ffn_hidden == 14336


def test_a_written_count_far_from_the_shapes_is_a_warning_naming_both(tmp_path: Path) -> None:
    result = compiled(tmp_path, RUNTIME, job("{preset: llama3-70b, parameters: 65B, sequenceLength: 8192}"))
    assert planner_codes(result) == [(codes.MODEL_COUNT_SHAPE, "warning")]
    (diagnostic,) = [d for d in result.diagnostics if d.code == codes.MODEL_COUNT_SHAPE]
    assert diagnostic.path == "spec.model.parameters" and diagnostic.line == 9
    assert "65B" in diagnostic.message and "70.55B" in diagnostic.message and "8% fewer" in diagnostic.message
    (plan,) = result.plans
    assert fromplan.parameters(plan) == 65 * 10**9  # the written count is used


def test_a_rounded_name_within_five_percent_is_quiet(tmp_path: Path) -> None:
    result = compiled(tmp_path, RUNTIME, job("{preset: llama3-70b, parameters: 70B, sequenceLength: 8192}"))
    assert planner_codes(result) == []


def test_the_checkpoints_count_is_checked_against_the_shape_too(tmp_path: Path) -> None:
    extra = "  checkpoint: {size: auto, model: {parameters: 8B, dtype: bf16, optimizer: adamw}}\n"
    result = compiled(tmp_path, RUNTIME, job("{preset: llama3-70b, sequenceLength: 8192}", extra))
    (diagnostic,) = [d for d in result.diagnostics if d.code == codes.MODEL_COUNT_SHAPE]
    assert diagnostic.path == "spec.checkpoint.model.parameters" and "checkpoint.model says 8B" in diagnostic.message


def test_a_shape_that_cannot_be_counted_needs_a_count(tmp_path: Path) -> None:
    shape = "{layers: 80, hiddenSize: 8192, attentionHeads: 64, kvHeads: 8, sequenceLength: 8192, vocabulary: 128256}"
    result = compiled(tmp_path, RUNTIME, job(shape))
    assert planner_codes(result) == [(codes.MODEL_PARAMS, "error")]
    (diagnostic,) = result.diagnostics
    assert "without ffnHiddenSize" in diagnostic.message and diagnostic.path == "spec.model"
    counted = shape.replace("vocabulary", "ffnHiddenSize: 28672, vocabulary")
    assert planner_codes(compiled(tmp_path, RUNTIME, job(counted))) == []


def test_a_shape_with_a_count_but_no_mlp_width_is_not_cross_checked(tmp_path: Path) -> None:
    # Specs from before the count existed: the shape says nothing of the MLP, so nothing to compare.
    shape = "{parameters: 70B, layers: 80, hiddenSize: 8192, attentionHeads: 64, kvHeads: 8, sequenceLength: 8192}"
    result = compiled(tmp_path, RUNTIME, job(shape))
    assert planner_codes(result) == []
    (plan,) = result.plans
    found = fromplan.arch(plan)
    assert found is not None and found.shape is not None and found.shape.gated_mlp is False


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"layers": 4, "hiddenSize": 64, "attentionHeads": 4, "denseLayers": 1}, "only apply to a mixture of experts"),
        ({"preset": "mixtral-8x7b", "expertsPerToken": 9}, "more than the 8 experts"),
        ({"preset": "deepseek-v3", "denseLayers": 61}, "leaves none of the 61 layers"),
        ({"layers": 4, "hiddenSize": 100, "attentionHeads": 8}, "or give headDim"),
    ],
)
def test_shapes_that_cannot_be(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        model(**fields)


def test_latent_attention_is_said_to_be_approximated(tmp_path: Path) -> None:
    result = compiled(tmp_path, RUNTIME, job("{preset: deepseek-v3, sequenceLength: 4096}", nodes=256))
    (note,) = [d for d in result.diagnostics if d.code == codes.MODEL_APPROXIMATED]
    assert "all 256 experts" in note.message and "latent attention is taken as multi-head" in note.message
    dense = compiled(tmp_path, RUNTIME, job("{preset: qwen2.5-72b, sequenceLength: 4096}"))
    assert [d for d in dense.diagnostics if d.code == codes.MODEL_APPROXIMATED] == []
