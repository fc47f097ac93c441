"""The planner in explain's text, markdown and JSON, on the Llama pre-training example."""

from __future__ import annotations

import json
import re
from pathlib import Path

EXAMPLE = "examples/llama-pretrain"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "parallelism.md"


def _block(text: str, job: str) -> str:
    return next(b for b in text.split("\n\n") if b.startswith(job))


def test_text_states_the_recommendation_and_why(run_cli) -> None:
    code, out, err = run_cli("explain", EXAMPLE, "--no-project")
    assert code == 0, err
    block = _block(out, "team-nlp/llama-70b")
    assert (
        "recommended layout            TP 8 within the node over NVLink, DP 8 across nodes over InfiniBand "
        "with ZeRO-1" in block
    )
    assert "memory per GPU                69.2 GB per GPU of 85.9 GB" in block
    assert "why                           the smallest model-parallel size (TP x PP = 8) that fits" in block
    assert re.search(r"TP 8 traffic +all-reduce x4 per layer over NVLink", block)
    assert re.search(r"DP 8 traffic +reduce-scatter \+ all-gather over InfiniBand, 30.6 GB per GPU per step", block)
    # The table: the chosen row is marked, every TP x PP split has a row.
    assert re.search(
        r"^    \*  8   1   1   8   1     selective  48.1 GB      21.0 GB      69.2 GB  yes$", block, re.MULTILINE
    )
    assert "parallel layouts (best of each TP x CP x PP; * chosen):" in block


def test_text_states_a_checked_pin(run_cli) -> None:
    _, out, _ = run_cli("explain", EXAMPLE, "--no-project")
    block = _block(out, "team-nlp/llama-405b")
    assert (
        "pinned layout                 TP 8 within the node over NVLink, PP 16 across nodes over InfiniBand "
        "(the first and last stages 7 and 7 layers), DP 4 across nodes over InfiniBand with ZeRO-1" in block
    )
    # the uneven split in the table: 7 layers on the first and last of 16 stages
    assert re.search(r"^    \*  8   1   16 \(7/\.\./7\)  4   1     full ", block, re.MULTILINE)
    assert "pinned in spec.parallelism, and it fits" in block


def test_markdown_has_the_rows_and_the_table(run_cli) -> None:
    code, out, _ = run_cli("explain", EXAMPLE, "--no-project", "--format", "markdown")
    assert code == 0
    lines = out.splitlines()
    assert any(line.startswith("| recommended layout | TP 8 within the node over NVLink") for line in lines)
    assert "| * | 8 | 1 | 1 | 8 | 1 | selective | 48.1 GB | 21.0 GB | 69.2 GB | yes |" in lines
    assert "|  | TP | CP | PP | DP | ZeRO | recompute | model state | activations | per GPU | fits |" in lines


def test_json_carries_the_whole_table(run_cli) -> None:
    code, out, _ = run_cli("explain", EXAMPLE, "--no-project", "--format", "json")
    assert code == 0
    jobs = {j["name"]: j for j in json.loads(out)["jobs"]}
    planner = jobs["llama-70b"]["planner"]
    assert planner["chosen"]["tp"] == 8 and planner["chosen"]["pp"] == 1 and planner["chosen"]["dp"] == 8
    assert planner["chosen"]["perGpuBytes"] == 69_152_094_528  # tests/explain/test_planner_formulas.py works it out
    assert planner["validLayouts"] == len(planner["layouts"]) > 100  # every layout, not only the summary rows
    assert planner["fittingLayouts"] == sum(1 for lay in planner["layouts"] if lay["fits"])
    assert planner["reasons"][0].startswith("TP 8 within the node over NVLink")
    assert {t["axis"]: t["acrossNodes"] for t in planner["chosen"]["traffic"]} == {"TP": False, "DP": True}
    assert planner["inputs"]["kvHeads"] == 8 and planner["inputs"]["bytesPerParam"] == {
        "weights": 2,
        "gradients": 2,
        "optimizer": 12,
    }
    pinned = jobs["llama-405b"]["planner"]
    assert pinned["pinned"] is True
    assert (pinned["chosen"]["firstStageLayers"], pinned["chosen"]["lastStageLayers"]) == (7, 7)
    assert pinned["inputs"]["pin"]["firstStageLayers"] == 7 and pinned["chosen"]["cp"] == 1


def test_the_docs_show_the_real_output(run_cli) -> None:
    docs = DOCS.read_text(encoding="utf-8")
    for job in ("llama-70b", "llama-405b"):
        args = (f"{EXAMPLE}/runtime.yaml", f"{EXAMPLE}/{job}.yaml")
        _, text, _ = run_cli("explain", *args, "--no-project")
        assert f"```\n$ trainspec explain {' '.join(args)}\n{text}```" in docs
