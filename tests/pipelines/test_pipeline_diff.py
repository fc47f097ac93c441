"""``diff`` of pipelines: a job step's fields as a job, the pipeline's own changes by step name
(issue 24, item 6)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "pipeline" / "pipeline.yaml").read_text()


def _diff(tmp_path: Path, old: str, new: str) -> str:
    for side, text in (("old", old), ("new", new)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "pipeline.yaml").write_text(text)
    done = run_cli("diff", "old", "new", "--no-project", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def test_a_parameter_default_changes_the_pipeline_and_its_job(tmp_path: Path) -> None:
    new = EXAMPLE.replace("nodes: {type: int, default: 2}", "nodes: {type: int, default: 4}")
    out = _diff(tmp_path, EXAMPLE, new)
    assert "job ml-dev/finetune-train:\n  nodes 2 -> 4 (world size 2 -> 4)\n" in out
    assert "pipeline ml-dev/finetune:\n  parameters.nodes.default 2 -> 4\n" in out


def test_steps_are_compared_by_name_and_a_new_step_is_one_line(tmp_path: Path) -> None:
    new = EXAMPLE.replace("      retries: 1\n", "      retries: 2\n") + (
        "    - name: notify\n      after: [register]\n      container: {image: curlimages/curl:8.10.1}\n"
    )
    out = _diff(tmp_path, EXAMPLE, new)
    assert "  step notify added: curlimages/curl:8.10.1, after register; step train.retries 1 -> 2\n" in out
    assert "job ml-dev/finetune-train" not in out  # the job itself did not change


def test_reordering_the_steps_as_written_is_no_change(tmp_path: Path) -> None:
    head, _, steps = EXAMPLE.partition("  steps:\n")
    blocks = steps.split("    - name: ")
    moved = head + "  steps:\n" + "    - name: ".join([blocks[0], blocks[2], blocks[1], *blocks[3:]])
    assert "pipeline ml-dev/finetune" not in _diff(tmp_path, EXAMPLE, moved)
