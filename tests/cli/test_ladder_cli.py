"""``compile --ladder`` and ``explain --ladder`` as a team measuring scaling runs them."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import run_cli
from trainspec.k8s.wellknown import LADDER_LABEL, LADDER_RUNG_LABEL

TAGS = ("1gpu", "1n", "2n", "4n", "8n")


def test_compile_ladder_writes_one_job_per_rung_and_check_passes_them(tmp_path: Path) -> None:
    out = tmp_path / "ladder"
    proc = run_cli("compile", "--ladder", "examples/llama-sft", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    jobs = sorted(p.name for p in (out / "team-nlp").iterdir())
    assert jobs == sorted(f"llama-sft-ladder-{t}.yaml" for t in TAGS)
    for tag in TAGS:
        docs = list(yaml.safe_load_all((out / "team-nlp" / f"llama-sft-ladder-{tag}.yaml").read_text()))
        assert [d["kind"] for d in docs] == ["PersistentVolumeClaim", "TrainJob"]
        labels = docs[1]["metadata"]["labels"]
        assert (labels[LADDER_LABEL], labels[LADDER_RUNG_LABEL]) == ("llama-sft", tag)
    # What a cluster would say about the written manifests: nothing.
    checked = run_cli("check", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 errors, 0 warnings" in checked.stdout
    # The ladder's own --check agrees; the plain job into the same directory drops the rungs' claims
    # from the tree, and they stay on the cluster (protected from pruning), each said so.
    assert run_cli("compile", "--ladder", "examples/llama-sft", "-o", str(out), "--check").returncode == 0
    plain = run_cli("compile", "examples/llama-sft", "-o", str(out))
    assert plain.returncode == 0, plain.stderr
    assert plain.stderr.count("left the tree and stays on the cluster") == len(TAGS)


def test_compile_ladder_refuses_an_existing_claim_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "ladder"
    proc = run_cli("compile", "--ladder", "examples/deepspeed.yaml", "-o", str(out))
    assert proc.returncode == 1
    assert "examples/deepspeed.yaml:" in proc.stderr and "error[TS430]: spec.checkpoint.claimName" in proc.stderr
    assert not out.exists()


def test_explain_ladder_text_lists_every_rung() -> None:
    proc = run_cli("explain", "--ladder", "examples/llama-sft")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("team-nlp/llama-sft: scaling ladder  (examples/llama-sft/job.yaml:")
    rows = [line.split() for line in lines[2:-1]]
    assert [(r[0], r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows] == [
        ("1gpu", "llama-sft-ladder-1gpu", "1", "1", "1", "1", "1"),
        ("1n", "llama-sft-ladder-1n", "1", "8", "8", "8", "8"),
        ("2n", "llama-sft-ladder-2n", "2", "16", "8", "16", "16"),
        ("4n", "llama-sft-ladder-4n", "4", "32", "8", "32", "32"),
        ("8n", "llama-sft-ladder-8n", "8", "64", "8", "64", "64"),
    ]
    assert "121 GPU-hours at most" in lines[-1]


def test_explain_ladder_json_and_markdown() -> None:
    proc = run_cli("explain", "--ladder", "--format", "json", "examples/jax.yaml")
    assert proc.returncode == 0, proc.stderr
    (ladder,) = json.loads(proc.stdout)["ladders"]
    assert (ladder["namespace"], ladder["job"]) == ("team-research", "t5x-pretrain")
    assert [r["rung"] for r in ladder["rungs"]] == ["1gpu", "1n", "2n", "4n"]
    assert [r["worldSize"] for r in ladder["rungs"]] == [1, 1, 2, 4]  # JAX: one process per node
    locations = [r["checkpoint"]["location"] for r in ladder["rungs"]]
    assert len(set(locations)) == 4 and all(r["checkpoint"]["kind"] == "uri" for r in ladder["rungs"])
    assert ladder["gpuHours"] == 57.0
    markdown = run_cli("explain", "--ladder", "--format", "markdown", "examples/jax.yaml")
    assert markdown.returncode == 0
    assert markdown.stdout.startswith("### Scaling ladder of `team-research/t5x-pretrain`")
    assert markdown.stdout.count("| t5x-pretrain-ladder-") == 4


def test_explain_ladder_has_no_mermaid_picture() -> None:
    proc = run_cli("explain", "--ladder", "--format", "mermaid", "examples/jax.yaml")
    assert proc.returncode == 2 and "--ladder" in proc.stderr and proc.stdout == ""


def test_the_docs_show_the_real_ladder() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "explain-and-diff.md").read_text(encoding="utf-8")
    proc = run_cli("explain", "--ladder", "examples/llama-sft")
    assert proc.returncode == 0
    assert f"```\n{proc.stdout}```" in docs
