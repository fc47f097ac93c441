"""``trainspec diff`` on examples/diff: exactly the planted changes, nothing else, in every format."""

from __future__ import annotations

import json
from pathlib import Path

from trainspec.compiler.pipeline import compile_paths
from trainspec.diff import diff_results

PAIR = Path(__file__).resolve().parents[2] / "examples" / "diff"

#: What examples/diff/new changes against examples/diff/old, and nothing more.
PLANTED = [
    ("runtime", "torch-h100-ib", "restarts", "restarts.max 3 -> 10 (JobSet failurePolicy.maxRestarts)"),
    ("job", "team-nlp/llama-sft", "gpus", "nodes 8 -> 16 (+64 GPUs)"),
    (
        "job",
        "team-nlp/llama-sft",
        "image",
        "image nvcr.io/nvidia/pytorch:25.01-py3 -> nvcr.io/nvidia/pytorch:25.02-py3",
    ),
    ("job", "team-nlp/llama-sft", "queue", "queue team-nlp -> team-nlp-large"),
    ("job", "team-nlp/llama-sft", "deadline", "maxRunTime removed (was 72h)"),
    (
        "job",
        "team-nlp/llama-sft",
        "checkpoint",
        "checkpoint keep 3 -> 5 (2.9 TB -> 4.9 TB kept, volume 3286Gi -> 5477Gi)",
    ),
]

EXPECTED_TEXT = """\
runtime torch-h100-ib:
  restarts.max 3 -> 10 (JobSet failurePolicy.maxRestarts)
    affects: team-nlp/llama-sft
job team-nlp/llama-sft:
  nodes 8 -> 16 (+64 GPUs)
  image nvcr.io/nvidia/pytorch:25.01-py3 -> nvcr.io/nvidia/pytorch:25.02-py3
  queue team-nlp -> team-nlp-large
  maxRunTime removed (was 72h)
  checkpoint keep 3 -> 5 (2.9 TB -> 4.9 TB kept, volume 3286Gi -> 5477Gi)
  {run}
6 changes in 1 job and 1 runtime
"""


def run_line() -> str:
    """What the changes cause on the cluster: the job's new run replaces its old one."""
    names = []
    for side in ("old", "new"):
        result = compile_paths([str(PAIR / side)])
        (job,) = [
            o
            for o in result.objects()
            if type(o).__name__ == "TrainJob" and o.metadata.labels["trainspec.dev/job"] == "llama-sft"
        ]
        names.append(job.metadata.name)
    return f"new run {names[1]} replaces {names[0]}; resumes from claim llama-sft-checkpoints"


def expected_text() -> str:
    return EXPECTED_TEXT.format(run=run_line())


def planted() -> list[tuple[str, str, str, str]]:
    return [*PLANTED, ("job", "team-nlp/llama-sft", "run", run_line())]


def test_the_pair_reports_exactly_the_planted_changes() -> None:
    report = diff_results(compile_paths([str(PAIR / "old")]), compile_paths([str(PAIR / "new")]))
    assert [(c.scope, c.key, c.category, c.message) for c in report.changes] == planted()
    restarts = report.changes[0]
    assert restarts.affects == ("team-nlp/llama-sft",)
    assert [(f.path, f.old, f.new) for f in restarts.fields] == [("spec.restarts.max", 3, 10)]
    by_category = {c.category: c for c in report.changes if c.scope == "job"}
    assert [(f.path, f.old, f.new) for f in by_category["deadline"].fields] == [("spec.maxRunTime", "72h", None)]
    assert [(f.path, f.old, f.new) for f in by_category["checkpoint"].fields] == [("spec.checkpoint.keep", 3, 5)]


def test_text_output_and_exit_code(run_cli) -> None:
    code, out, err = run_cli("diff", str(PAIR / "old"), str(PAIR / "new"), "--no-project")
    assert code == 1
    assert out == expected_text()
    # The updates the cluster would refuse (the runtime's failurePolicy) and warn about (the claim grows).
    assert err.count("error[TS440]") == 2 and "warning[TS443]" in err and err.endswith("2 errors, 1 warning\n")


def test_markdown_output(run_cli) -> None:
    code, out, _ = run_cli("diff", str(PAIR / "old"), str(PAIR / "new"), "--no-project", "--format", "markdown")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "**trainspec diff:** 6 changes in 1 job and 1 runtime."
    assert lines[2:4] == ["| object | kind | change | affects |", "|---|---|---|---|"]
    assert lines[4] == (
        "| runtime `torch-h100-ib` | restarts | restarts.max 3 -> 10 "
        "(JobSet failurePolicy.maxRestarts) | `team-nlp/llama-sft` |"
    )
    assert lines[5] == "| job `team-nlp/llama-sft` | gpus | nodes 8 -> 16 (+64 GPUs) |  |"
    assert len(lines) == 4 + len(planted())


def test_json_output(run_cli) -> None:
    code, out, _ = run_cli("diff", str(PAIR / "old"), str(PAIR / "new"), "--no-project", "--format", "json")
    assert code == 1
    payload = json.loads(out)
    assert payload["changed"] is True
    assert [(c["scope"], c["key"], c["category"], c["message"]) for c in payload["changes"]] == planted()
    nodes = payload["changes"][1]
    assert nodes["fields"] == [{"path": "spec.nodes", "old": 8, "new": 16}]


def test_each_side_against_itself_has_no_changes(run_cli) -> None:
    for side in ("old", "new"):
        code, out, _ = run_cli("diff", str(PAIR / side), str(PAIR / side), "--no-project")
        assert (code, out) == (0, "no changes\n")


def test_reformatted_files_alone_have_no_changes(run_cli) -> None:
    # new/ddp-cpu.yaml only reformats old/ddp-cpu.yaml (block style, quotes, key order).
    code, out, _ = run_cli("diff", str(PAIR / "old" / "ddp-cpu.yaml"), str(PAIR / "new" / "ddp-cpu.yaml"))
    assert (code, out) == (0, "no changes\n")
    code, out, _ = run_cli(
        "diff", str(PAIR / "old" / "ddp-cpu.yaml"), str(PAIR / "new" / "ddp-cpu.yaml"), "--format", "markdown"
    )
    assert (code, out) == (0, "**trainspec diff:** no changes.\n")


def test_the_docs_show_the_real_output(run_cli) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "explain-and-diff.md").read_text()
    _, markdown, _ = run_cli("diff", str(PAIR / "old"), str(PAIR / "new"), "--no-project", "--format", "markdown")
    quoted = "".join(f"> {line}\n" if line else ">\n" for line in markdown.splitlines())
    assert quoted in docs
    assert f"```\n{expected_text()}```" in docs


def test_two_trees_of_manifests_are_no_spec_not_no_changes(run_cli, tmp_path: Path) -> None:
    """Two compiled ``deploy/`` trees hold no spec: "no changes" (exit 0) said nothing of them."""
    for side, nodes in (("old", "2"), ("new", "3")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "job.yaml").write_text(
            "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: a, namespace: n}\n"
            f"spec: {{runtimeRef: {{name: r}}, trainer: {{numNodes: {nodes}}}}}\n"
        )
    code, out, err = run_cli("diff", str(tmp_path / "old"), str(tmp_path / "new"), "--no-project")
    assert code == 2 and out == "" and "TS418" in err and "no spec on either side" in err, err
