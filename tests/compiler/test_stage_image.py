"""The data-sharding stage's image comes from the runtime or the project default, never from nowhere.

trainspec used to fill in ``ghcr.io/trainspec/trainspec:0.1.0``, an image nobody had published, so
every sharded job would have sat in ImagePullBackOff. Now the runtime's ``dataSharding.image`` or
the project's ``spec.defaults.stageImage`` names it, and a sharded job with neither is TS416.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from trainspec.compiler.emit import render_stream
from trainspec.compiler.pipeline import compile_paths
from trainspec.dsl.diagnostics import CODES
from trainspec.k8s.wellknown import STAGE_UID
from trainspec.runtimes import builtin_names

PROJECT_IMAGE = "registry.example.com/platform/trainspec:0.1.0"
RUNTIME_IMAGE = "registry.example.com/team/stage:1.2.3"


def job(runtime: str = "trainspec-torch", data: bool = True) -> str:
    text = textwrap.dedent(f"""\
        apiVersion: trainspec.dev/v1alpha1
        kind: TrainingJob
        metadata: {{name: sft, namespace: ml}}
        spec:
          runtime: {runtime}
          queue: research
          nodes: 2
        """)
    return text + ("  data: {source: s3://datasets/sft/}\n" if data else "")


def runtime(image: str | None) -> str:
    sharding = f"{{image: {image}}}" if image else "{}"
    return textwrap.dedent(f"""\
        apiVersion: trainspec.dev/v1alpha1
        kind: Runtime
        metadata: {{name: team-torch}}
        spec:
          framework: torch
          image: nvcr.io/nvidia/pytorch:25.01-py3
          dataSharding: {sharding}
        """)


def compile_docs(tmp_path: Path, *docs: str, stage_image: str | None = None):
    spec = tmp_path / "specs.yaml"
    spec.write_text("---\n".join(docs))
    project = None
    if stage_image is not None:
        project = tmp_path / "trainspec.yaml"
        project.write_text(
            f"apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec: {{defaults: {{stageImage: {stage_image}}}}}\n"
        )
    return compile_paths([str(spec)], project=str(project) if project else None)


def stage_containers(result) -> list[dict]:
    """The pod spec of every runtime's dataset-initializer (the sharding stage)."""
    out = []
    for data in yaml.safe_load_all(render_stream(result.outputs)):
        if not data or not data["kind"].endswith("TrainingRuntime"):
            continue
        out.extend(
            rjob["template"]["spec"]["template"]["spec"]
            for rjob in data["spec"]["template"]["spec"]["replicatedJobs"]
            if rjob["name"] == "dataset-initializer"
        )
    return out


def runtime_names(result) -> list[str]:
    return sorted(
        o.metadata.name for out in result.outputs for o in out.objects if type(o).__name__.endswith("TrainingRuntime")
    )


def test_ts416_is_registered() -> None:
    assert "TS416" in CODES


@pytest.mark.parametrize("name", builtin_names())
def test_a_sharded_job_on_a_builtin_runtime_without_a_project_image_is_ts416(tmp_path: Path, name: str) -> None:
    result = compile_docs(tmp_path, job(name))
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.code, d.line, d.column, d.path) for d in errors] == [("TS416", 8, 3, "spec.data")]
    (diag,) = errors
    assert diag.file.endswith("specs.yaml")
    assert "spec.defaults.stageImage" in diag.hint and "dataSharding.image" in diag.hint
    assert "docs/stage-image.md" in diag.hint
    assert diag.related and diag.related[0].file == f"<built-in>/{name}.yaml"
    assert result.outputs == []


def test_the_project_default_names_the_stage_image(tmp_path: Path) -> None:
    result = compile_docs(tmp_path, job(), stage_image=PROJECT_IMAGE)
    assert result.ok, [d.message for d in result.diagnostics]
    assert runtime_names(result) == ["trainspec-torch-sharded"]
    (pod,) = stage_containers(result)
    assert pod["containers"][0]["image"] == PROJECT_IMAGE
    assert pod["securityContext"] == {"fsGroup": STAGE_UID}  # the image's non-root user can write


def test_the_runtime_image_wins_over_the_project_default(tmp_path: Path) -> None:
    result = compile_docs(tmp_path, runtime(RUNTIME_IMAGE), job("team-torch"), stage_image=PROJECT_IMAGE)
    assert result.ok
    (pod,) = stage_containers(result)
    assert pod["containers"][0]["image"] == RUNTIME_IMAGE


def test_a_user_runtime_without_an_image_takes_the_project_default(tmp_path: Path) -> None:
    result = compile_docs(tmp_path, runtime(None), job("team-torch"), stage_image=PROJECT_IMAGE)
    assert result.ok
    (pod,) = stage_containers(result)
    assert pod["containers"][0]["image"] == PROJECT_IMAGE


def test_a_user_runtime_without_any_image_is_ts416_pointing_at_its_data_sharding(tmp_path: Path) -> None:
    result = compile_docs(tmp_path, runtime(None), job("team-torch"))
    (diag,) = [d for d in result.diagnostics if d.is_error]
    assert diag.code == "TS416" and "runtime team-torch" in diag.message
    assert diag.related[0].file.endswith("specs.yaml") and diag.related[0].line == 7


def test_without_an_image_no_sharded_variant_is_emitted_for_jobs_without_data(tmp_path: Path) -> None:
    result = compile_docs(tmp_path, runtime(None), job("team-torch", data=False))
    assert result.ok and runtime_names(result) == ["team-torch"]
    assert "dataset-initializer" not in render_stream(result.outputs)


def test_a_job_without_data_on_a_builtin_names_no_stage_image(tmp_path: Path) -> None:
    result = compile_docs(tmp_path, job(data=False))
    assert result.ok and runtime_names(result) == ["trainspec-torch"]
    assert "trainspec.stages.shard" not in render_stream(result.outputs)


def test_the_project_default_adds_no_sharding_to_a_runtime_without_it(tmp_path: Path) -> None:
    plain = runtime(None).replace("  dataSharding: {}\n", "")
    result = compile_docs(tmp_path, plain, job("team-torch", data=False), stage_image=PROJECT_IMAGE)
    assert result.ok and runtime_names(result) == ["team-torch"]


def test_every_emitted_image_was_named_by_an_input(tmp_path: Path) -> None:
    """Jobs on every built-in, with data, under a project default: each image in the output
    appears in the inputs or in the built-in runtime files, none comes from trainspec's code."""
    from trainspec.runtimes import CATALOG_DIR

    jobs = [job(name).replace("name: sft", f"name: sft-{i}") for i, name in enumerate(builtin_names())]
    result = compile_docs(tmp_path, *jobs, stage_image=PROJECT_IMAGE)
    assert result.ok, [d.message for d in result.diagnostics]
    named = (tmp_path / "specs.yaml").read_text() + (tmp_path / "trainspec.yaml").read_text()
    named += "".join(p.read_text() for p in Path(CATALOG_DIR).glob("*.yaml"))
    images = [
        line.split("image:", 1)[1].strip()
        for line in render_stream(result.outputs).splitlines()
        if line.strip().startswith(("image:", "- image:"))
    ]
    assert images and PROJECT_IMAGE in images
    assert all(image in named for image in images), images
