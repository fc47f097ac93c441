"""``TRAINSPEC_RUN_ID`` under ``run --local``: every node gets the compiled run's id (the one in
``<job>-<run id>``), never a stale one from the shell; a job compiled without one gets an id of
its own local run. The checkpoint lease (tests/stages) tells runs apart by it."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from run_testlib import RUNTIME, clean_env

from trainspec.compiler.emit import manifest_dicts
from trainspec.compiler.pipeline import CompileResult, compile_paths
from trainspec.compiler.plan import JobPlan
from trainspec.dsl.kube_facts import RUN_ID_ENV
from trainspec.k8s.wellknown import JOB_LABEL, RUN_LABEL
from trainspec.run.job import LocalJob, local_job
from trainspec.run.local import Prepared, RunOptions, prepare


def _compile(tmp_path: Path, *, args: str = "[a]", framework: str = "torch") -> CompileResult:
    spec = tmp_path / f"job-{len(list(tmp_path.glob('job-*.yaml')))}.yaml"
    spec.write_text(
        RUNTIME.format(name="rt", framework=framework)
        + f"""---
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: ids, namespace: team-a}}
spec:
  runtime: rt
  command: [python, train.py]
  args: {args}
  nodes: 2
  checkpoint: {{path: /checkpoints, size: 1Gi}}
"""
    )
    result = compile_paths([str(spec)])
    assert result.ok, result.diagnostics
    return result


def _prepare(tmp_path: Path, result: CompileResult) -> Prepared:
    environ = {**clean_env(), RUN_ID_ENV: "stale-from-the-shell"}
    prepared, problems = prepare(result, RunOptions(workdir=str(tmp_path / "work"), environ=environ))
    assert prepared is not None, problems
    return prepared


def _compiled_run_id(result: CompileResult) -> str:
    (trainjob,) = [d for d in manifest_dicts(result.objects()) if d["kind"] == "TrainJob"]
    labels = trainjob["metadata"]["labels"]
    assert labels[JOB_LABEL] == "ids" and trainjob["metadata"]["name"] == f"ids-{labels[RUN_LABEL]}"
    return str(labels[RUN_LABEL])


@pytest.mark.parametrize("framework", ["torch", "jax", "mpi"])
def test_every_node_gets_the_compiled_run_id(tmp_path: Path, framework: str) -> None:
    result = _compile(tmp_path, framework=framework)
    prepared = _prepare(tmp_path, result)
    assert prepared.job.name == "ids"  # the job, found under its run's name <job>-<run id>
    ids = {member.env[RUN_ID_ENV] for member in prepared.members}
    assert ids == {_compiled_run_id(result)}
    assert prepared.stage is None


def test_a_new_shape_is_a_new_run_and_the_same_spec_the_same_run(tmp_path: Path) -> None:
    first = _compiled_run_id(_compile(tmp_path))
    again = _compiled_run_id(_compile(tmp_path))
    changed = _compiled_run_id(_compile(tmp_path, args="[b]"))
    assert first == again != changed


def test_a_job_compiled_without_a_run_id_gets_one_per_local_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def without_run_id(result: CompileResult, plan: JobPlan) -> LocalJob:
        job = local_job(result, plan)
        return dataclasses.replace(job, env=tuple(e for e in job.env if e.name != RUN_ID_ENV))

    monkeypatch.setattr("trainspec.run.local.local_job", without_run_id)
    prepared = _prepare(tmp_path, _compile(tmp_path))
    assert {member.env[RUN_ID_ENV] for member in prepared.members} == {f"local-{os.getpid()}"}
