"""``trainspec explain`` on the examples: the key figures in text, markdown and JSON, and origins."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

LLAMA = "examples/llama-sft"


def rows_of(text: str) -> dict[str, str]:
    """The ``label  value  [origin]`` rows of a text explanation, by label."""
    out = {}
    for line in text.splitlines()[1:]:
        label, _, rest = line.strip().partition("  ")
        out[label] = rest.strip()
    return out


def test_text_shows_the_resolved_plan_with_origins(run_cli) -> None:
    code, out, err = run_cli("explain", LLAMA, "--no-project")
    assert code == 0, err
    assert out.splitlines()[0] == "team-nlp/llama-sft  (examples/llama-sft/job.yaml:3:1)"
    rows = rows_of(out)
    assert rows["nodes"] == "8  [job]"
    assert rows["processes per node"] == "8  [job]"
    assert rows["world size"] == "64 processes (8 x 8)  [computed]"
    assert rows["GPUs per node"] == "8 x H100  [runtime]"
    assert rows["GPUs in total"] == "64 x H100  [computed]"
    assert rows["GPU memory"] == "80Gi (85.9 GB) per GPU, 8 x 80Gi = 640Gi (687 GB) per node  [runtime]"
    assert rows["queue"] == "team-nlp  [job]"
    assert rows["priority"] == "high  [job]"
    assert rows["restarts"] == "3 (JobSet failurePolicy.maxRestarts)  [runtime]"
    # The model state the parallelism planner uses: 16 bytes/param; the checkpoint saves the same optimizer
    # state (the fp32 master copy and the moments) with the bf16 weights: 980 GB, as any framework writes it.
    assert rows["model state"] == (
        "weights 140 GB + gradients 140 GB + optimizer 840 GB (fp32 master 280 GB + moments 560 GB) = 1.1 TB "
        "(16 bytes/param)  [computed]"
    )
    assert rows["plain data parallel (ZeRO-0)"] == (
        "1.1 TB per GPU: does not fit (85.9 GB per GPU), model state only  [computed]"
    )
    assert rows["ZeRO-3 / FSDP over 64 GPUs"] == "17.5 GB per GPU: fits (20% of 85.9 GB), model state only  [computed]"
    assert rows["parallel layout"].startswith("not planned: add spec.model")
    assert rows["checkpoint size"].startswith(
        "980 GB each (weights 140 GB + fp32 master 280 GB + optimizer moments 560 GB, as any framework writes it), "
        "2.9 TB for 3"
    )
    assert rows["checkpoint volume"].startswith("3286Gi (3.5 TB), ReadWriteMany")
    assert rows["data shards"] == "64 (one per rank)  [computed]"
    assert rows["GPU-hours"] == "4608 (64 GPUs x 72 h of maxRunTime, at most)  [computed]"
    assert rows["cost"].startswith("unknown: no price")


def test_price_flag_gives_the_cost(run_cli) -> None:
    code, out, _ = run_cli("explain", LLAMA, "--no-project", "--gpu-hour-price", "2.49")
    assert code == 0
    assert rows_of(out)["cost"] == "11,473.92 USD at 2.49 USD per GPU-hour, at most  [--gpu-hour-price]"


def test_bad_price_is_a_usage_error(run_cli) -> None:
    with pytest.raises(SystemExit) as exc:
        run_cli("explain", LLAMA, "--gpu-hour-price", "cheap")
    assert exc.value.code == 2


def _project(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "trainspec.yaml"
    path.write_text("apiVersion: trainspec.dev/v1alpha1\nkind: Project\n" + textwrap.dedent(body))
    return path


def test_project_pricing_by_accelerator_then_default(run_cli, tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        """\
        spec:
          pricing: {currency: EUR, gpuHour: {H100: 3.0, default: 1.0}}
        """,
    )
    code, out, _ = run_cli("explain", LLAMA, "examples/jax.yaml", "--project", str(project))
    assert code == 0
    blocks = out.split("\n\n")
    assert rows_of(blocks[0])["cost"] == "13,824.00 EUR at 3 EUR per GPU-hour, at most  [pricing.gpuHour.H100]"
    # The JAX job's runtime names no accelerator: the 'default' price applies (32 GPUs x 48 h).
    assert rows_of(blocks[1])["cost"] == "1,536.00 EUR at 1 EUR per GPU-hour, at most  [pricing.gpuHour.default]"


def test_project_defaults_are_named_as_the_origin(run_cli, tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        """\
        spec:
          defaults: {queue: shared, priority: low, namespace: sandbox}
        """,
    )
    job = tmp_path / "job.yaml"
    job.write_text(
        textwrap.dedent("""\
        apiVersion: trainspec.dev/v1alpha1
        kind: TrainingJob
        metadata: {name: tiny}
        spec:
          runtime: trainspec-torch
          resourcesPerNode: {gpu: 1}
        """)
    )
    code, out, err = run_cli("explain", str(job), "--project", str(project))
    assert code == 0, err
    rows = rows_of(out)
    assert out.startswith("sandbox/tiny  (")
    assert rows["namespace"] == "sandbox  [project defaults]"
    assert rows["queue"] == "shared  [project defaults]"
    assert rows["priority"] == "low  [project defaults]"
    # The built-in torch runtime does not write nodes: its 1 is trainspec's built-in default.
    assert rows["nodes"] == "1  [built-in default]"
    assert rows["image"] == "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime  [runtime]"
    assert rows["max run time"] == "none (no deadline)"
    assert rows["GPU-hours"] == "unbounded: no maxRunTime"


def test_markdown_is_a_table_with_the_key_figures(run_cli) -> None:
    code, out, _ = run_cli("explain", LLAMA, "--no-project", "--format", "markdown")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "### `team-nlp/llama-sft`"
    assert "| | value | from |" in lines and "|---|---|---|" in lines
    assert "| GPUs in total | 64 x H100 | computed |" in lines
    assert (
        "| ZeRO-3 / FSDP over 64 GPUs | 17.5 GB per GPU: fits (20% of 85.9 GB), model state only | computed |" in lines
    )
    assert "| GPU-hours | 4608 (64 GPUs x 72 h of maxRunTime, at most) | computed |" in lines
    assert all(line.count("|") - line.count("\\|") == 4 for line in lines if line.startswith("|"))


def test_json_carries_every_figure_in_bytes(run_cli) -> None:
    code, out, _ = run_cli("explain", LLAMA, "--no-project", "--format", "json", "--gpu-hour-price", "2.49")
    assert code == 0
    (job,) = json.loads(out)["jobs"]
    # Every value says who set it and, when a spec wrote it, where (the resolver's provenance).
    assert job["namespace"] == {
        "value": "team-nlp",
        "origin": "job",
        "at": {"file": "examples/llama-sft/job.yaml", "line": 7, "column": 14, "path": "metadata.namespace"},
    }
    assert job["nodes"]["at"]["path"] == "spec.nodes" and job["nodes"]["at"]["file"].endswith("job.yaml")
    job["nodes"].pop("at")
    assert job["nodes"] == {"value": 8, "origin": "job"}
    assert job["gpusPerNode"]["at"]["file"] == "examples/llama-sft/runtime.yaml"
    assert {k: v for k, v in job["gpusPerNode"].items() if k != "at"} == {"value": 8, "origin": "runtime"}
    assert (job["worldSize"], job["gpusTotal"]) == (64, 64)
    assert {k: v for k, v in job["accelerator"].items() if k != "at"} == {"value": "H100", "origin": "runtime"}
    assert job["gpuMemoryBytes"] == 80 * 1024**3
    memory = job["memory"]
    assert memory["weightsBytes"] == 140 * 10**9 and memory["optimizerBytes"] == 840 * 10**9
    assert memory["modelStateBytes"] == 1120 * 10**9
    assert memory["zero0"] == {"perGpuBytes": 1120 * 10**9, "fits": False}
    assert memory["zero3"] == {"perGpuBytes": 17_500_000_000, "fits": True}
    assert job["planner"] is None  # no spec.model: no layouts to plan
    assert job["checkpoint"]["perCheckpointBytes"] == 980 * 10**9
    assert job["checkpoint"]["savedBytes"] == {
        "format": "unknown",
        "weights": 140 * 10**9,
        "master": 280 * 10**9,
        "moments": 560 * 10**9,
    }
    assert job["checkpoint"]["totalBytes"] == 2940 * 10**9  # 980 GB x keep 3
    assert job["checkpoint"]["volume"] == "3286Gi"
    assert job["data"]["shards"] == 64
    assert {k: v for k, v in job["queue"].items() if k != "at"} == {"value": "team-nlp", "origin": "job"}
    assert job["maxRunTimeSeconds"] == 72 * 3600
    assert job["gpuHours"] == 4608
    assert job["cost"] == 11473.92
    assert job["price"] == {"perGpuHour": 2.49, "currency": "USD", "source": "--gpu-hour-price"}


def test_every_example_job_is_explained(run_cli) -> None:
    code, out, _ = run_cli("explain", "examples", "--no-project", "--format", "json")
    assert code == 0
    jobs = {f"{j['namespace']['value']}/{j['name']}": j for j in json.loads(out)["jobs"]}
    # Every engine's examples (other engines add theirs): at least these.
    assert {
        "ml-dev/ddp-cpu",
        "ml-dev/ddp-cpu-upstream",
        "team-nlp/bert-zero3",
        "team-nlp/llama-sft",
        "team-research/t5x-pretrain",
        "team-ml/ray-finetune",
    } <= set(jobs)
    assert jobs["ml-dev/ddp-cpu"]["gpusTotal"] == 0 and jobs["ml-dev/ddp-cpu"]["gpuHours"] is None
    assert jobs["team-research/t5x-pretrain"]["worldSize"] == 4  # JAX: one process per node
    assert jobs["team-research/t5x-pretrain"]["gpusTotal"] == 32
    assert jobs["team-nlp/bert-zero3"]["gpuHours"] == 192  # 16 GPUs x 12 h


def test_errors_still_explain_what_resolved_and_exit_1(run_cli, tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        """\
        spec:
          policy: {maxGpusPerJob: 32}
        """,
    )
    code, out, err = run_cli("explain", LLAMA, "--project", str(project))
    assert code == 1
    assert "GPUs in total" in out and "64 x H100" in out
    assert "error[TS602]" in err


def test_the_docs_show_the_real_output(run_cli) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "explain-and-diff.md").read_text()
    _, text, _ = run_cli("explain", LLAMA, "--no-project", "--gpu-hour-price", "2.49")
    _, mermaid, _ = run_cli("explain", LLAMA, "--no-project", "--format", "mermaid")
    assert f"```\n{text}```" in docs
    assert f"```mermaid\n{mermaid}```" in docs
