"""``explain --format mermaid`` is valid Mermaid flowchart syntax (checked at the syntax level here).

The checker accepts exactly the subset the renderer may use: a ``flowchart LR`` header,
``subgraph ID["label"]`` / ``direction`` / ``end``, node definitions ``ID<shape>"label"<shape>``
with the four shapes below, and ``A --> B`` edges between defined nodes. Labels are double-quoted;
inside them the only markup allowed is ``<br/>`` and entity codes (``#quot;``, ``#35;``).
"""

from __future__ import annotations

import json
import re

import pytest

from trainspec.explain import render
from trainspec.explain.render_mermaid import escape

ID = r"[A-Za-z][A-Za-z0-9_]*"
RESERVED = {"end", "subgraph", "graph", "flowchart", "direction", "click", "style", "class", "classDef", "linkStyle"}
SHAPES = [("[", "]"), ("([", "])"), ("[[", "]]"), ("[(", ")]")]
NODE = re.compile(rf"^(?P<id>{ID})(?P<open>\(\[|\[\[|\[\(|\[)\"(?P<label>[^\"]*)\"(?P<close>\]\)|\]\]|\)\]|\])$")
SUBGRAPH = re.compile(rf"^subgraph (?P<id>{ID})\[\"(?P<label>[^\"]*)\"\]$")
EDGE = re.compile(rf"^(?P<a>{ID}) --> (?P<b>{ID})$")
ENTITY = re.compile(r"#(?:[a-z]+|[0-9]+);")


def check_label(label: str) -> None:
    rest = label.replace("<br/>", "")
    assert "<" not in rest and ">" not in rest, f"raw markup in label {label!r}"
    assert "#" not in ENTITY.sub("", rest), f"bare # in label {label!r}"
    assert "`" not in rest and "\n" not in rest, f"unescaped character in {label!r}"


def check_flowchart(text: str) -> dict[str, str]:
    """Assert ``text`` is a well-formed flowchart; return its node labels by id."""
    assert text.endswith("\n")
    lines = text.rstrip("\n").split("\n")
    assert lines[0] == "flowchart LR"
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str]] = []
    depth = 0
    subgraphs: set[str] = set()
    for number, raw in enumerate(lines[1:], start=2):
        line = raw.strip()
        assert line, f"line {number} is blank"
        if m := SUBGRAPH.match(line):
            assert m["id"] not in RESERVED and m["id"] not in subgraphs | set(nodes), f"line {number}: id reused"
            check_label(m["label"])
            subgraphs.add(m["id"])
            depth += 1
        elif line == "end":
            depth -= 1
            assert depth >= 0, f"line {number}: end without subgraph"
        elif re.fullmatch(r"direction (LR|RL|TB|BT)", line):
            assert depth > 0, f"line {number}: direction outside a subgraph"
        elif m := NODE.match(line):
            assert (m["open"], m["close"]) in SHAPES, f"line {number}: mismatched shape {m['open']}...{m['close']}"
            assert m["id"] not in RESERVED and m["id"] not in nodes and m["id"] not in subgraphs, f"line {number}"
            check_label(m["label"])
            nodes[m["id"]] = m["label"]
        elif m := EDGE.match(line):
            edges.append((m["a"], m["b"]))
        else:
            raise AssertionError(f"line {number} is not flowchart syntax: {raw!r}")
    assert depth == 0, "unclosed subgraph"
    for a, b in edges:
        assert a in nodes and b in nodes, f"edge {a} --> {b} names an undefined node"
    return nodes


def test_examples_render_as_a_valid_flowchart(run_cli) -> None:
    code, out, _ = run_cli("explain", "examples", "--no-project", "--format", "mermaid")
    assert code == 0
    nodes = check_flowchart(out)
    _, listed, _ = run_cli("explain", "examples", "--no-project", "--format", "json")
    assert out.count("subgraph ") == len(json.loads(listed)["jobs"]) >= 6  # one per example job
    labels = "\n".join(nodes.values())
    assert "queue team-nlp<br/>priority high" in labels
    assert "data sharding<br/>s3://datasets/sft/v3/<br/>64 shards" in labels
    assert "node: 8 pods<br/>8 x H100 each" in labels
    assert "checkpoints<br/>volume 3286Gi (3.5 TB)<br/>keep 3" in labels


def test_llama_sft_flows_queue_sharding_trainers_checkpoints(run_cli) -> None:
    code, out, _ = run_cli("explain", "examples/llama-sft", "--no-project", "--format", "mermaid")
    assert code == 0
    check_flowchart(out)
    assert 'subgraph j1["team-nlp/llama-sft: 64 x H100"]' in out
    edges = [line.strip() for line in out.splitlines() if "-->" in line]
    assert edges == ["j1_queue --> j1_shard", "j1_shard --> j1_train0", "j1_train0 --> j1_ckpt"]


def test_no_jobs_is_still_a_chart() -> None:
    check_flowchart(render([], "mermaid"))


@pytest.mark.parametrize("text", ['H100 "SXM"', "a<b>c", "#1 & #2", "tick`s", "x#quot;y"])
def test_escaped_text_is_a_safe_label(text: str) -> None:
    check_label(escape(text))
    assert '"' not in escape(text)


def test_escape_round_trips_entities() -> None:
    assert escape('say "hi" #1') == "say #quot;hi#quot; #35;1"


def test_hostile_accelerator_name_keeps_the_chart_valid(run_cli, tmp_path) -> None:
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text(
        "apiVersion: trainspec.dev/v1alpha1\nkind: Runtime\nmetadata: {name: odd}\n"
        "spec:\n  framework: torch\n  image: example.com/t:1\n  resourcesPerNode: {gpu: 2}\n"
        "  accelerator: {name: 'H100 \"SXM\" <80GB> #1 end', memory: 80Gi}\n"
        "---\napiVersion: trainspec.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: odd-job}\n"
        "spec: {runtime: odd, nodes: 1}\n"
    )
    code, out, err = run_cli("explain", str(runtime), "--no-project", "--format", "mermaid")
    assert code == 0, err
    nodes = check_flowchart(out)
    assert any("#quot;SXM#quot; #lt;80GB#gt; #35;1 end" in label for label in nodes.values())
