"""Cluster commands and runs: a job's object is its run, ``<job>-<run id>`` (docs/gitops.md).

Users name the job; ``status``, ``logs`` and ``cancel`` find its newest run. ``submit`` of a
changed job creates the new run and deletes the earlier ones, as a GitOps prune would; the
checkpoint claim keeps the job's name and stays.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

from helpers import RUNS_YAML, cli, write_job
from kube_standin import StandIn

RUN = re.compile(r"^ddp-ckpt-[a-z2-7]{6}$")


def runs(api: StandIn) -> list[str]:
    return sorted(name for (ns, name) in api.trainjobs if ns == "ml-dev")


def test_submit_creates_the_run_and_a_changed_job_replaces_it(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    spec = write_job(tmp_path, RUNS_YAML)
    code, out, err = cli("submit", spec, "--no-project")
    assert code == 0, err
    (first,) = runs(api)
    assert RUN.match(first)
    assert out.splitlines()[1] == f"trainjob.trainer.kubeflow.org/ml-dev/{first} created"
    labels = api.trainjobs[("ml-dev", first)]["metadata"]["labels"]
    assert labels["trainspec.dev/job"] == "ddp-ckpt" and first.endswith(labels["trainspec.dev/run"])
    # The same spec again: the same run, unchanged.
    code, out, _ = cli("submit", spec, "--no-project")
    assert code == 0 and out.splitlines()[1] == f"trainjob.trainer.kubeflow.org/ml-dev/{first} unchanged"
    # A new shape: a new run; the earlier one is deleted; the claim is the same.
    Path(spec).write_text(RUNS_YAML.replace("nodes: 2", "nodes: 3"))
    code, out, err = cli("submit", spec, "--no-project")
    assert code == 0, err
    (second,) = runs(api)
    assert second != first and RUN.match(second)
    assert out.splitlines() == [
        "persistentvolumeclaim/ml-dev/ddp-ckpt-checkpoints unchanged",
        f"trainjob.trainer.kubeflow.org/ml-dev/{second} created",
        f"trainjob.trainer.kubeflow.org/ml-dev/{first} deleted: run {second} replaces it and resumes from the same "
        + "checkpoints",
    ]
    assert ("ml-dev", "ddp-ckpt-checkpoints") in api.claims


def test_a_dry_run_says_which_run_would_be_deleted(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    spec = write_job(tmp_path, RUNS_YAML)
    assert cli("submit", spec, "--no-project")[0] == 0
    (first,) = runs(api)
    Path(spec).write_text(RUNS_YAML.replace("nodes: 2", "nodes: 3"))
    code, out, _ = cli("submit", spec, "--no-project", "--dry-run")
    assert code == 0
    assert out.splitlines()[-1].startswith(f"trainjob.trainer.kubeflow.org/ml-dev/{first} would be deleted: run ")
    assert runs(api) == [first]  # nothing changed


def test_status_and_cancel_find_the_jobs_newest_run(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    assert cli("submit", write_job(tmp_path, RUNS_YAML), "--no-project")[0] == 0
    (run,) = runs(api)
    code, out, err = cli("status", "ddp-ckpt", "-n", "ml-dev")
    assert code == 0, err
    assert out.splitlines()[0].startswith(f"TrainJob ml-dev/{run}: ")
    code, out, err = cli("cancel", "ddp-ckpt", "-n", "ml-dev", "--no-wait")
    assert code == 0, err
    assert f"trainjob.trainer.kubeflow.org/ml-dev/{run}" in out
    code, _, err = cli("status", "no-such-job", "-n", "ml-dev")
    assert code == 1 and "TS716" in err
