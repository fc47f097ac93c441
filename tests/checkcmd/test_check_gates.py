"""JobSet rules behind feature gates: refused by default, admitted when the target says the gate is on
(``--target jobset-gate=NAME`` or the project file's ``spec.target.jobsetFeatureGates``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.checkcmd.conftest import check
from trainspec.compiler.targets import Target, parse_target_option

JOBSET = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: ml}
spec:
  failurePolicy: {maxRestarts: 2, restartStrategy: InPlaceRestart}
  replicatedJobs:
  - name: node
    replicas: 1
    template:
      spec:
        completions: 1
        parallelism: 1
        backoffLimit: 2147483647
        podReplacementPolicy: Failed
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: busybox}]
"""


def _gate_findings(found: list[dict]) -> list[dict]:
    return [d for d in found if "feature gate" in d["message"]]


def test_a_gated_action_is_refused_by_default(tmp_path: Path) -> None:
    (tmp_path / "js.yaml").write_text(JOBSET)
    status, found = check(str(tmp_path / "js.yaml"), "--no-project")
    assert status == 1
    [finding] = _gate_findings(found)
    assert finding["path"] == "spec.failurePolicy.restartStrategy" and "JobSet webhook" in finding["message"]


def test_the_target_turns_the_gate_on(tmp_path: Path) -> None:
    (tmp_path / "js.yaml").write_text(JOBSET)
    status, found = check(str(tmp_path / "js.yaml"), "--no-project", "--target", "jobset-gate=InPlaceRestart")
    assert _gate_findings(found) == [] and status == 0, found


def test_the_project_file_turns_the_gate_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "js.yaml").write_text(JOBSET)
    project = tmp_path / "trainspec.yaml"
    project.write_text(
        "apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec: {target: {jobsetFeatureGates: [InPlaceRestart]}}\n"
    )
    status, found = check(str(tmp_path / "js.yaml"), "--project", str(project))
    assert _gate_findings(found) == [] and status == 0, found


def test_gates_parse_and_print() -> None:
    assert parse_target_option("jobset-gate=InPlaceRestart,jobset-gate=RestartJob") == {
        "jobset_gates": ["InPlaceRestart", "RestartJob"]
    }
    assert str(Target(jobset_gates=("InPlaceRestart",))).endswith(",jobset-gate=InPlaceRestart")
