"""A misspelled choice (``format: jsnl``) says which choice was meant, as a misspelled key does."""

from __future__ import annotations

from trainspec.compiler.pipeline import Options, run

SPEC = """apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {name: probe, namespace: ml}
spec:
  runtime: trainspec-torch
  image: python:3.12
  nodes: 2
  data: {source: /data/x, format: jsnl, shardBy: nodes, mode: whatever}
"""


def test_a_misspelled_choice_gets_did_you_mean_and_a_far_one_lists_the_choices(tmp_path) -> None:
    spec = tmp_path / "job.yaml"
    spec.write_text(SPEC)
    result = run([str(spec)], Options(project=None))
    found = {d.path: d for d in result.diagnostics}
    assert found["spec.data.format"].hint == "did you mean 'jsonl'?"
    assert found["spec.data.shardBy"].hint == "did you mean 'node'?"
    assert found["spec.data.mode"].hint == "choose one of 'index' or 'copy'"
    assert {d.code for d in result.diagnostics} == {"TS203"}
    assert (found["spec.data.format"].line, found["spec.data.format"].column) == (8, 35)
