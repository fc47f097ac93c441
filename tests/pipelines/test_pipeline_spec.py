"""``kind: Pipeline``: steps that fit together, checked and located, and job steps that go through
the whole compile pipeline like any other job (issue 24, items 1 and 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from trainspec.check.manifests import compiled_manifests
from trainspec.compiler.pipeline import Options, Stop, run
from trainspec.dsl.spec.models import TrainingJob

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pipeline"

HEAD = "apiVersion: trainspec.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: p, namespace: team}\nspec:\n"


def _run(tmp_path: Path, text: str, stop: Stop = Stop.LOWER) -> object:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return run([str(path)], Options(project=None, stop=stop, cwd=str(tmp_path)))


def _found(result: object) -> set[tuple[str, int | None, int | None, str]]:
    return {(d.code, d.line, d.column, d.path) for d in result.diagnostics if d.is_error}  # type: ignore[attr-defined]


def test_the_example_pipeline_checks_and_its_train_step_is_a_located_job() -> None:
    result = run([str(EXAMPLE)], Options(project=None, stop=Stop.LOWER))
    assert result.ok, [str(d) for d in result.diagnostics]
    (graph,) = result.pipelines
    order = [(s.name, s.kind, s.needs) for s in graph.steps]
    assert order == [
        ("prep", "container", ()),
        ("train", "job", ("prep",)),  # it reads prep's dataset: data flow is a dependency
        ("evaluate", "container", ("prep", "train")),
        ("register", "container", ("evaluate", "train")),
    ]
    (plan,) = result.plans
    job = plan.resolved
    assert (job.namespace, job.name) == ("ml-dev", "finetune-train")
    assert isinstance(job.loaded.spec, TrainingJob) and job.loaded.file.endswith("examples/pipeline/pipeline.yaml")
    lines = (EXAMPLE / "pipeline.yaml").read_text(encoding="utf-8").splitlines()
    # `nodes: $(params.nodes)` in the pipeline file
    assert job.loaded.mark(("spec", "nodes")).line == 1 + lines.index("        nodes: $(params.nodes)")
    assert job.nodes.value == 2  # the parameter's default, typed
    assert job.loaded.spec.spec.args == [
        "--epochs",
        "3",
        "--save-every",
        "2",
    ]  # a whole-scalar reference in text stays text
    assert job.loaded.spec.spec.data.source == "s3://trainspec-pipeline-artifacts/finetune/prep/dataset"


def test_a_pipelines_jobs_are_checked_but_never_written_into_a_gitops_tree(tmp_path: Path) -> None:
    result = run([str(EXAMPLE)], Options(project=None, stop=Stop.LOWER))
    kinds = sorted(m.data["kind"] for m in compiled_manifests(result))
    assert kinds == ["ClusterTrainingRuntime", "ClusterTrainingRuntime", "PersistentVolumeClaim", "TrainJob"]
    assert [o.path for o in result.pipeline_jobs] == ["ml-dev/finetune-train.yaml"]
    assert all(o.path.startswith("runtimes/") for o in result.outputs)
    done = run_cli("compile", str(EXAMPLE), "--no-project", "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    written = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.yaml"))
    assert written == ["kustomization.yaml", "runtimes/pipeline-cpu-sharded.yaml", "runtimes/pipeline-cpu.yaml"]


def test_every_problem_is_reported_at_once_and_located(tmp_path: Path) -> None:
    text = HEAD + (
        "  parameters:\n"  # 5
        "    nodes: {type: int, default: 2}\n"  # 6
        "    lr: {type: float, default: yes}\n"  # 7
        "    dataset: {type: string}\n"  # 8
        "  steps:\n"  # 9
        "    - name: prep\n"  # 10
        "      container: {image: python:3.12, args: [$(outputs.data)]}\n"  # 11
        "      outputs: [dataset]\n"  # 12
        "    - name: train\n"  # 13
        "      job: {runtime: trainspec-torch, image: python:3.12, command: [python], nods: 3}\n"  # 14
        "    - name: evaluate\n"  # 15
        "      after: [trian]\n"  # 16
        "      when: $(steps.train.status) == Succeeded\n"  # 17
        "      container: {image: python:3.12, args: [$(steps.train.outputs.model), $(params.missing)]}\n"  # 18
        "    - name: evaluate\n"  # 19
        "      jobRef: nope\n"  # 20
        "    - name: a\n"  # 21
        "      after: [b]\n"  # 22
        "      container: {image: x}\n"  # 23
        "    - name: b\n"  # 24
        "      after: [a]\n"  # 25
        "      container: {image: x}\n"  # 26
    )
    assert _found(_run(tmp_path, text)) == {
        ("TS315", 7, 32, "spec.parameters.lr.default"),
        ("TS315", 8, 5, "spec.parameters.dataset"),
        ("TS313", 11, 46, "spec.steps[0].container.args[0]"),  # writes an output it does not declare
        ("TS200", 14, 78, "spec.steps[1].job.nods"),  # the job's own fields, at the pipeline's lines
        ("TS313", 16, 15, "spec.steps[2].after[0]"),
        ("TS313", 18, 46, "spec.steps[2].container.args[0]"),  # a job step's outputs: checkpoint
        ("TS313", 18, 76, "spec.steps[2].container.args[1]"),
        ("TS312", 19, 13, "spec.steps[3].name"),  # two steps named evaluate
        ("TS313", 20, 15, "spec.steps[3].jobRef"),
        ("TS314", 21, 13, "spec.steps[4].name"),
    }


@pytest.mark.parametrize(
    ("where", "reference", "message"),
    [
        ("args", "$(steps.train.status)", "cannot be used here"),  # a status is for when:
        ("args", "$(outputs.x)", "output 'x' of this step does not exist"),
        ("args", "$(steps.b.outputs.x)", "step 'b' does not exist"),
        ("args", "$(steps.a.outputs.x)", "cannot be used here"),  # its own output: $(outputs.x)
        ("args", "$(param.x)", "cannot be used here"),
        ("when", "$(outputs.x) == 1", "cannot be used here"),
    ],
)
def test_each_misused_reference_is_named(tmp_path: Path, where: str, reference: str, message: str) -> None:
    step = (
        f"      container: {{image: x, args: ['{reference}']}}\n"
        if where == "args"
        else f"      when: '{reference}'\n      container: {{image: x}}\n"
    )
    text = HEAD + "  steps:\n    - name: train\n      container: {image: x}\n    - name: a\n" + step
    result = _run(tmp_path, text)
    (problem,) = [d for d in result.diagnostics if d.is_error]
    assert problem.code == "TS313" and message in problem.message


def test_a_step_must_be_exactly_one_kind(tmp_path: Path) -> None:
    result = _run(tmp_path, HEAD + "  steps:\n    - name: empty\n")
    (problem,) = [d for d in result.diagnostics if d.is_error]
    assert (problem.code, problem.line) == ("TS312", 6) and "none of job, jobRef and container" in problem.message


def test_a_job_step_by_name_runs_a_training_job_among_the_inputs(tmp_path: Path) -> None:
    job = (
        "---\napiVersion: trainspec.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: tj, namespace: team}\n"
        "spec: {runtime: trainspec-torch, image: python:3.12, command: [python, t.py]}\n"
    )
    result = _run(tmp_path, HEAD + "  steps:\n    - name: train\n      jobRef: tj\n" + job)
    assert result.ok and [s.job for s in result.pipelines[0].steps] == ["tj"]


def test_parameter_types_hold_for_yaml_1_1_booleans(tmp_path: Path) -> None:
    text = HEAD + (
        "  parameters:\n    a: {type: int, default: no}\n    b: {type: bool, default: yes}\n"
        "    c: {type: float, default: 3}\n    d: {type: string, default: '3'}\n"
        "  steps:\n    - name: s\n      container: {image: x, args: ['$(params.a)$(params.b)$(params.c)$(params.d)']}\n"
    )
    assert _found(_run(tmp_path, text)) == {("TS315", 6, 29, "spec.parameters.a.default")}


def test_a_python_pipeline_is_the_same_model() -> None:
    from trainspec.dsl.spec.parts import Metadata
    from trainspec.dsl.spec.pipeline_spec import ContainerStep, Pipeline, PipelineSpec, Step

    built = Pipeline(
        metadata=Metadata(name="p"),
        spec=PipelineSpec(steps=[Step(name="prep", container=ContainerStep(image="python:3.12"))]),
    )
    assert built.spec.steps[0].container is not None and built.name == "p"
    with pytest.raises(ValueError, match="retrys"):
        Step(name="s", retrys=1)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("when", "ok"),
    [
        ("$(steps.train.status) == Succeeded", True),
        ("$(params.x) >= 0.9", True),
        ("$(steps.train.status)", False),  # no operator
        ("$(steps.train.status) == $(params.x) extra", False),  # a side is one reference or one literal
        ("$(steps.train.nope) == 1", False),
    ],
)
def test_a_condition_is_one_comparison(tmp_path: Path, when: str, ok: bool) -> None:
    text = HEAD + (
        "  parameters:\n    x: {type: float, default: 1.0}\n  steps:\n    - name: train\n      container: {image: x}\n"
        f"    - name: after\n      when: '{when}'\n      container: {{image: x}}\n"
    )
    problems = [(d.code, d.path) for d in _run(tmp_path, text).diagnostics if d.is_error]
    assert (problems == []) is ok, problems
    assert all(code == "TS313" and path == "spec.steps[1].when" for code, path in problems)


def test_conditions_compare_numbers_as_numbers_and_text_as_text() -> None:
    from trainspec.dsl.spec.pipeline_refs import Ref, holds, parse_condition, substitute

    values = {"score": "0.93\n", "status": "Succeeded", "n": "10"}

    def value_of(ref: Ref) -> str:
        return values[ref.name or "status"].strip()

    assert holds(parse_condition("$(steps.e.outputs.score) >= 0.9"), value_of)
    assert not holds(parse_condition("$(steps.e.outputs.score) >= 0.95"), value_of)
    assert holds(parse_condition("$(steps.t.status) == Succeeded"), value_of)
    assert holds(parse_condition("$(params.n) > 9"), value_of)  # 10 > 9 as numbers, not '10' < '9'
    assert not holds(parse_condition("$(steps.t.status) > 3"), value_of)  # text against a number: never ordered
    assert substitute("--lr=$(params.n) $(nope)", value_of) == "--lr=10 $(nope)"


def test_names_that_become_kfp_inputs_and_outputs_are_identifiers(tmp_path: Path) -> None:
    text = HEAD + (
        "  parameters:\n    learning-rate: {type: float, default: 0.1}\n"
        "  steps:\n    - name: s\n      container: {image: x}\n      outputs: [good_one, bad.one]\n"
    )
    assert {(c, p) for c, _, _, p in _found(_run(tmp_path, text))} == {
        ("TS315", "spec.parameters.learning-rate"),
        ("TS312", "spec.steps[0].outputs[1]"),
    }


def test_a_pipeline_has_at_least_one_step_and_at_most_200(tmp_path: Path) -> None:
    assert {(c, p) for c, _, _, p in _found(_run(tmp_path, HEAD + "  steps: []\n"))} == {("TS203", "spec.steps")}
    many = "".join(f"    - name: s{k}\n      container: {{image: x}}\n" for k in range(201))
    assert {(c, p) for c, _, _, p in _found(_run(tmp_path, HEAD + "  steps:\n" + many))} == {("TS203", "spec.steps")}


def test_a_pipeline_written_in_python_is_loaded_checked_and_located(tmp_path: Path) -> None:
    """A spec module's module-level Pipeline is a spec like its TrainingJobs (run in the supervised
    child, handed back as data, checked with the constructor call's line)."""
    (tmp_path / "pipe.py").write_text(
        "from trainspec import ContainerStep, Metadata, Pipeline, PipelineSpec, Step\n"
        "\n"
        "pipeline = Pipeline(\n"
        "    metadata=Metadata(name='py-pipe', namespace='team'),\n"
        "    spec=PipelineSpec(steps=[\n"
        "        Step(name='prep', container=ContainerStep(image='python:3.12', command=['python', 'p.py'])),\n"
        "        Step(name='eval', after=['prpe'], container=ContainerStep(image='python:3.12')),\n"
        "    ]),\n"
        ")\n"
    )
    result = run([str(tmp_path / "pipe.py")], Options(project=None, stop=Stop.VALIDATE, cwd=str(tmp_path)))
    assert {(d.code, d.line, d.path) for d in result.diagnostics} == {("TS313", 3, "spec.steps[1].after[0]")}


def test_the_pipeline_kinds_are_public_names() -> None:
    import trainspec
    from trainspec.dsl.spec import pipeline_spec

    for name in ("Pipeline", "PipelineSpec", "Step", "ContainerStep", "Parameter", "ParamType"):
        assert name in trainspec.__all__ and getattr(trainspec, name) is getattr(pipeline_spec, name)
