"""``spec.tracking`` (issue 25, part 5): the block is checked like every other (exactly one tracker,
typos with did-you-mean, no credentials inline, no clash with the job's env), and compiles to the
variables MLflow and W&B read, plus ``TRAINSPEC_TRACKING`` / ``TRAINSPEC_JOB_NAME``, on every
container that runs training code, on every engine; the project file may give it as a default."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

import trainspec
from trainspec.compiler.pipeline import Options, run
from trainspec.dsl.spec.models import TrainingJob
from trainspec.dsl.spec.tracking import MlflowTracking, Tracking, WandbTracking

ROOT = Path(__file__).resolve().parents[2]
MLFLOW = "tracking: {mlflow: {uri: 'http://mlflow.mlflow:5000', experiment: sft}}"
RUNTIMES = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: ray-cpu}
spec: {engine: ray, framework: torch, image: rayproject/ray:2.52.0-py311}
---
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: torch-op}
spec: {engine: training-operator, framework: torch, image: nvcr.io/nvidia/pytorch:25.01-py3}
"""


def _job(extra: str, *, runtime: str = "trainspec-torch", name: str = "sft") -> str:
    return textwrap.dedent(f"""\
        apiVersion: trainspec.dev/v1alpha1
        kind: TrainingJob
        metadata: {{name: {name}, namespace: ml}}
        spec:
          runtime: {runtime}
          command: [python, train.py]
          nodes: 2
        """) + textwrap.indent(textwrap.dedent(extra), "  ")


def _write(tmp_path: Path, text: str, name: str = "job.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _problems(tmp_path: Path, extra: str) -> list[tuple[str, str, int | None, str]]:
    path = _write(tmp_path, _job(extra))
    return [(d.code, d.path, d.line, d.message) for d in trainspec.validate(path, project=None) if d.is_error]


def _objects(paths: list[Path], project: str | None = None) -> list[dict[str, Any]]:
    result = run([str(p) for p in paths], Options(project=project))
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
    return list(yaml.safe_load_all(result.to_yaml()))


def _env_lists(obj: dict[str, Any]) -> list[dict[str, str]]:
    """The plain env of every container in ``obj`` (TrainJob trainer, pod templates), by name."""
    found: list[dict[str, str]] = []
    if obj["kind"] == "TrainJob":
        return [{e["name"]: e.get("value", "<secret>") for e in obj["spec"]["trainer"]["env"]}]

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if "containers" in value:
                found.extend(
                    {e["name"]: e.get("value", "<secret>") for e in c.get("env") or []} for c in value["containers"]
                )
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(obj["spec"])
    return found


def _run_object(objs: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] in ("TrainJob", "RayJob", "PyTorchJob")]
    return found


@pytest.mark.parametrize(
    ("runtime", "kind", "containers"),
    [("trainspec-torch", "TrainJob", 1), ("ray-cpu", "RayJob", 2), ("torch-op", "PyTorchJob", 2)],
)
def test_every_engine_gets_the_tracker_env_on_every_training_container(
    tmp_path: Path, runtime: str, kind: str, containers: int
) -> None:
    spec = _write(tmp_path, RUNTIMES + "---\n" + _job(MLFLOW, runtime=runtime))
    obj = _run_object(_objects([spec]))
    assert obj["kind"] == kind
    envs = _env_lists(obj)
    assert len(envs) == containers  # Ray: head and workers; PyTorchJob: master and workers
    run_id = obj["metadata"]["labels"]["trainspec.dev/run"]
    for env in envs:
        assert {k: v for k, v in env.items() if k.startswith(("MLFLOW_", "TRAINSPEC_TRACKING", "TRAINSPEC_JOB"))} == {
            "MLFLOW_TRACKING_URI": "http://mlflow.mlflow:5000",
            "MLFLOW_EXPERIMENT_NAME": "sft",
            "TRAINSPEC_TRACKING": "mlflow",
            "TRAINSPEC_JOB_NAME": "sft",
        }
        assert env["TRAINSPEC_RUN_ID"] == run_id  # the run name in the pod: sft-<run id>


def test_wandb_and_the_defaults_named_after_the_job() -> None:
    job = TrainingJob(name="llama", runtime="trainspec-torch", tracking=Tracking(wandb=WandbTracking()))
    env = _env_lists(_run_object(list(yaml.safe_load_all(trainspec.compile(job).to_yaml()))))[0]
    assert (env["WANDB_PROJECT"], env["TRAINSPEC_TRACKING"], env["TRAINSPEC_JOB_NAME"]) == ("llama", "wandb", "llama")
    assert "WANDB_ENTITY" not in env  # the API key's default entity
    tracking = Tracking(mlflow=MlflowTracking(uri="databricks"))
    assert tracking.env("llama")["MLFLOW_EXPERIMENT_NAME"] == "llama"
    with_entity = Tracking(wandb=WandbTracking(project="p", entity="nlp")).env("llama")
    assert (with_entity["WANDB_PROJECT"], with_entity["WANDB_ENTITY"]) == ("p", "nlp")


def test_a_job_without_tracking_compiles_as_before(tmp_path: Path) -> None:
    env = _env_lists(_run_object(_objects([_write(tmp_path, _job(""))])))[0]
    assert not [k for k in env if k.startswith(("MLFLOW", "WANDB", "TRAINSPEC_TRACKING", "TRAINSPEC_JOB"))]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            "tracking: {mlfow: {uri: 'http://m:5000'}}",
            [("TS200", "spec.tracking.mlfow", 8, "unknown field 'mlfow'")],
        ),
        (
            "tracking: {mlflow: {uri: 'http://m:5000', experimnt: x}}",
            [("TS200", "spec.tracking.mlflow.experimnt", 8, "unknown field 'experimnt'")],
        ),
        (
            "tracking: {mlflow: {uri: 'http://m:5000'}, wandb: {project: p}}",
            [("TS203", "spec.tracking", 8, "tracking names both mlflow and wandb: a job logs to one tracker")],
        ),
        ("tracking: {}", [("TS203", "spec.tracking", 8, "tracking names no tracker")]),
        (
            "tracking: {mlflow: {uri: 'ftp://m'}}",
            [("TS207", "spec.tracking.mlflow.uri", 8, "scheme ftp:// is not an MLflow tracking store")],
        ),
        ("tracking: {mlflow: {experiment: x}}", [("TS201", "spec.tracking.mlflow.uri", 8, "uri is required")]),
        (
            "tracking: {wandb: {project: 'a/b'}}",
            [
                (
                    "TS203",
                    "spec.tracking.wandb.project",
                    8,
                    "'a/b' is not a W&B project or entity name: W&B refuses /, \\, #, ?, %, : and blanks in it",
                )
            ],
        ),
    ],
)
def test_the_block_is_checked_and_located(tmp_path: Path, extra: str, expected: list) -> None:
    found = _problems(tmp_path, extra)
    assert [(c, p, line) for c, p, line, _ in found] == [(c, p, line) for c, p, line, _ in expected]
    for (_, _, _, message), (_, _, _, part) in zip(found, expected, strict=True):
        assert part in message


@pytest.mark.parametrize(
    "uri",
    [
        "https://glpat-0123456789abcdef@mlflow.example.com",  # a token in the user's place
        "https://ml:s3cret-password@mlflow.example.com",  # user and password
        "https://ml:$(MLFLOW_PASSWORD)@mlflow.example.com",  # a reference, still a credential's place
        "postgresql+psycopg2://ml@db.example.com/mlflow",
    ],
)
def test_a_credential_in_the_uri_is_ts304_never_shown(tmp_path: Path, uri: str) -> None:
    found = _problems(tmp_path, f"tracking: {{mlflow: {{uri: '{uri}'}}}}")
    assert [(c, p) for c, p, _, _ in found] == [("TS304", "spec.tracking.mlflow.uri")]
    secret = uri.split("://", 1)[1].split("@", 1)[0]
    assert secret not in found[0][3] and "://***@" in found[0][3]


def test_tracker_credentials_only_through_secret_env(tmp_path: Path) -> None:
    plain = _problems(
        tmp_path,
        f"""\
        {MLFLOW}
        env: {{MLFLOW_TRACKING_PASSWORD: hunter2hunter2, MLFLOW_TRACKING_USERNAME: ml, WANDB_API_KEY: {"0123456789abcdef" * 2}01234567}}
        """,
    )
    assert sorted((c, p) for c, p, _, _ in plain) == [
        ("TS304", "spec.env.MLFLOW_TRACKING_PASSWORD"),
        ("TS304", "spec.env.WANDB_API_KEY"),
    ]
    secret = _problems(
        tmp_path,
        f"""\
        {MLFLOW}
        env: {{MLFLOW_TRACKING_USERNAME: ml}}
        secretEnv: {{MLFLOW_TRACKING_PASSWORD: {{secret: mlflow, key: password}}}}
        """,
    )
    assert secret == []


def test_env_that_tracking_sets_is_ts303_at_the_env_key(tmp_path: Path) -> None:
    found = _problems(
        tmp_path,
        f"""\
        {MLFLOW}
        env: {{MLFLOW_EXPERIMENT_NAME: other, WANDB_PROJECT: p, TRAINSPEC_JOB_NAME: x}}
        secretEnv: {{MLFLOW_TRACKING_URI: {{secret: mlflow, key: uri}}}}
        """,
    )
    assert sorted((c, p) for c, p, _, _ in found) == [
        ("TS303", "spec.env.MLFLOW_EXPERIMENT_NAME"),
        ("TS303", "spec.env.TRAINSPEC_JOB_NAME"),
        ("TS303", "spec.secretEnv.MLFLOW_TRACKING_URI"),
    ]  # WANDB_PROJECT is the job's own business: it tracks to MLflow
    message = next(m for c, p, _, m in found if p == "spec.env.MLFLOW_EXPERIMENT_NAME")
    assert message == "MLFLOW_EXPERIMENT_NAME is set by trainspec from spec.tracking.mlflow.experiment"


PROJECT = """\
apiVersion: trainspec.dev/v1alpha1
kind: Project
spec:
  defaults:
    tracking: {mlflow: {uri: 'http://mlflow.platform:5000'}}
"""


def test_the_project_default_fills_jobs_without_tracking_and_the_jobs_own_env_wins(tmp_path: Path) -> None:
    project = _write(tmp_path, PROJECT, "trainspec.yaml")
    plain = _write(tmp_path, _job("", name="plain"), "plain.yaml")
    named = _write(tmp_path, _job("env: {MLFLOW_EXPERIMENT_NAME: shared}", name="named"), "named.yaml")
    own = _write(tmp_path, _job("tracking: {wandb: {project: mine}}", name="own"), "own.yaml")
    envs = {
        obj["metadata"]["labels"]["trainspec.dev/job"]: _env_lists(obj)[0]
        for obj in _objects([plain, named, own], project=str(project))
        if obj["kind"] == "TrainJob"
    }
    assert (envs["plain"]["MLFLOW_TRACKING_URI"], envs["plain"]["MLFLOW_EXPERIMENT_NAME"]) == (
        "http://mlflow.platform:5000",
        "plain",
    )
    assert envs["named"]["MLFLOW_EXPERIMENT_NAME"] == "shared"  # the job said so: the default does not override it
    assert envs["own"]["WANDB_PROJECT"] == "mine" and "MLFLOW_TRACKING_URI" not in envs["own"]


def test_a_credential_in_the_projects_default_is_ts304_in_the_project_file(tmp_path: Path) -> None:
    project = _write(tmp_path, PROJECT.replace("http://mlflow", "http://token@mlflow"), "trainspec.yaml")
    job = _write(tmp_path, _job(""))
    found = [(d.code, d.path, d.file) for d in trainspec.validate(job, project=str(project)) if d.is_error]
    assert found == [("TS304", "spec.defaults.tracking.mlflow.uri", str(project))]


def test_the_example_compiles_with_its_token_from_a_secret() -> None:
    obj = _run_object(_objects([ROOT / "examples" / "tracking-mlflow.yaml"]))
    env = _env_lists(obj)[0]
    assert env["MLFLOW_TRACKING_TOKEN"] == "<secret>"
    assert (env["TRAINSPEC_TRACKING"], env["TRAINSPEC_JOB_NAME"]) == ("mlflow", "ddp-tracked")
