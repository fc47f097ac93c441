"""``trainspec.stages.Tracker``: rank-0-only experiment tracking, against a real MLflow store
(sqlite under the test's directory) and W&B in offline mode (issue 25, part 5).

Each test names the job and run the way the compiler does (``TRAINSPEC_JOB_NAME``,
``TRAINSPEC_RUN_ID``, ``TRAINSPEC_TRACKING`` and the library's own variables) and hands the
Tracker that environment; the rank comes from the same mapping (``RANK``).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from status_standin import StatusStandIn, start

from trainspec.stages import ProgressReporter, StepMetrics, Tracker, TrackingError, tracking_backends as backends
from trainspec.stages.tracking_link import run_link

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def mlflow_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A job tracking to a fresh sqlite store; MLflow's active run is ended whatever the test did."""
    mlflow = pytest.importorskip("mlflow", reason="the test extra installs mlflow")
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    yield {
        "TRAINSPEC_TRACKING": "mlflow",
        "TRAINSPEC_JOB_NAME": "llama-sft",
        "TRAINSPEC_RUN_ID": "abc234",
        "MLFLOW_TRACKING_URI": store,
        "MLFLOW_EXPERIMENT_NAME": "sft",
        "RANK": "0",
        "WORLD_SIZE": "2",
    }
    while mlflow.active_run() is not None:
        mlflow.end_run()


def _runs(env: Mapping[str, str]) -> list[Any]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(env["MLFLOW_TRACKING_URI"])
    experiment = client.get_experiment_by_name(env["MLFLOW_EXPERIMENT_NAME"])
    return [] if experiment is None else list(client.search_runs([experiment.experiment_id]))


def _loss(env: Mapping[str, str], run_id: str) -> list[tuple[int, float]]:
    from mlflow.tracking import MlflowClient

    history = MlflowClient(env["MLFLOW_TRACKING_URI"]).get_metric_history(run_id, "loss")
    return sorted((m.step, m.value) for m in history)


def test_rank_0_opens_one_run_named_after_the_job_and_run_and_logs_to_it(mlflow_env: dict[str, str]) -> None:
    out = io.StringIO()
    with Tracker(params={"lr": 0.1, "batch": 8}, env=mlflow_env, out=out) as tracker:
        tracker.log_metrics(1, {"loss": 0.5, "tokens_per_second": 1200})
        tracker.log_metrics(2, {"loss": 0.25})
    (run,) = _runs(mlflow_env)
    assert run.info.run_name == "llama-sft-abc234" and run.info.status == "FINISHED"
    assert {k: v for k, v in run.data.tags.items() if k.startswith("trainspec.")} == {
        "trainspec.run": "llama-sft-abc234",
        "trainspec.job": "llama-sft",
        "trainspec.run_id": "abc234",
    }
    assert run.data.params == {"lr": "0.1", "batch": "8"}
    assert _loss(mlflow_env, run.info.run_id) == [(1, 0.5), (2, 0.25)]
    assert tracker.resumed is False and tracker.url is None  # a sqlite store has no pages
    assert tracker.status_metrics() == {
        "mlflow_run_id": run.info.run_id,
        "mlflow_experiment_id": run.info.experiment_id,
    }
    assert out.getvalue() == (
        f"trainspec tracking: mlflow run llama-sft-abc234 (new): run id {run.info.run_id}, experiment sft "
        f"(id {run.info.experiment_id}) at {mlflow_env['MLFLOW_TRACKING_URI']}\n"
    )


def test_a_restarted_process_of_the_same_run_resumes_it_and_a_new_run_gets_its_own(
    mlflow_env: dict[str, str],
) -> None:
    first = Tracker(params={"lr": 0.1}, env=mlflow_env, out=io.StringIO()).start()
    first.log_metrics(1, {"loss": 0.5})
    # The process is killed here (no close): the run stays RUNNING; its restart finds it by its tag.
    import mlflow

    mlflow.end_run("RUNNING")  # what the dead process left: no end; the fluent stack is cleared for the next
    log = io.StringIO()
    again = Tracker(params={"lr": 0.2}, env=mlflow_env, out=io.StringIO(), log=log).start()
    again.log_metrics(2, {"loss": 0.25})
    again.close()
    (run,) = _runs(mlflow_env)
    assert again.resumed and run.info.run_id == first.status_metrics()["mlflow_run_id"]
    assert _loss(mlflow_env, run.info.run_id) == [(1, 0.5), (2, 0.25)]
    assert run.data.params == {"lr": "0.1"}  # MLflow keeps a parameter's first value, and the change is named
    assert "param lr: its value differs from the one the run logged first" in log.getvalue()

    changed = Tracker(env={**mlflow_env, "TRAINSPEC_RUN_ID": "xyz567"}, out=io.StringIO()).start()  # a new run
    changed.close()
    assert sorted(r.info.run_name for r in _runs(mlflow_env)) == ["llama-sft-abc234", "llama-sft-xyz567"]


def test_without_a_run_id_each_start_is_a_new_run(mlflow_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A script started by hand (no TRAINSPEC_RUN_ID) has no run to come back to; it is named after the script."""
    monkeypatch.setattr(sys, "argv", ["/jobs/finetune.py", "--lr", "0.1"])
    by_hand = {k: v for k, v in mlflow_env.items() if k not in ("TRAINSPEC_RUN_ID", "TRAINSPEC_JOB_NAME")}
    for _ in range(2):
        Tracker(env=by_hand, out=io.StringIO()).start().close()
    runs = _runs(by_hand)
    assert len(runs) == 2 and {(r.info.run_name, r.data.tags["trainspec.job"]) for r in runs} == {
        ("finetune", "finetune")
    }
    assert not [r for r in runs if "trainspec.run" in r.data.tags]


def test_every_other_rank_does_nothing(mlflow_env: dict[str, str]) -> None:
    out = io.StringIO()
    for rank_vars in (
        {"RANK": "1"},
        {
            "RANK": "",
            "WORLD_SIZE": "",
            "PET_NODE_RANK": "1",
            "PET_NPROC_PER_NODE": "2",
            "PET_NNODES": "2",
            "LOCAL_RANK": "0",
        },
    ):
        with Tracker(params={"lr": 0.1}, env={**mlflow_env, **rank_vars}, out=out) as tracker:
            tracker.log_metrics(1, {"loss": 0.5})
        assert tracker.active is False and tracker.status_metrics() == {}
    assert _runs(mlflow_env) == [] and out.getvalue() == ""


def test_without_spec_tracking_it_is_a_no_op_that_never_imports_a_tracker() -> None:
    code = textwrap.dedent(
        """
        import sys
        from trainspec.stages import ProgressReporter, Tracker
        with Tracker(params={"lr": 1}, env={}) as tracker:
            tracker.log_metrics(1, {"loss": 0.5})
            ProgressReporter(env={}, tracker=tracker).report(1, 2, metrics={"loss": 0.5})
        print(tracker.active, sorted(m for m in ("mlflow", "wandb") if m in sys.modules))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "False []"


def test_a_missing_library_stops_the_start_with_what_to_install(
    mlflow_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)  # `import mlflow` raises ImportError, as in an image without it
    with pytest.raises(TrackingError, match=r"logs to mlflow \(spec.tracking\).*pip install mlflow"):
        Tracker(env=mlflow_env).start()
    log = io.StringIO()
    optional = Tracker(env=mlflow_env, required=False, log=log).start()
    optional.log_metrics(1, {"loss": 0.5})  # off: nothing happens
    assert optional.active is False
    assert "training continues without tracking" in log.getvalue()


def test_an_unusable_store_is_a_tracking_error_at_start(mlflow_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    env = {**mlflow_env, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'a-file' / 'below-a-file.db'}"}
    with pytest.raises(TrackingError, match="mlflow run llama-sft-abc234 cannot be opened"):
        Tracker(env=env, out=io.StringIO()).start()


class _Failing:
    """A backend whose logging fails (a tracking server gone mid-run): the test double of an outage."""

    calls = 0

    def __init__(self) -> None:
        pass

    def start(self, run: backends.RunInfo) -> backends.Started:
        return backends.Started(resumed=False, url=None, where="nowhere", link={})

    def log_metrics(self, step: int, metrics: Mapping[str, float]) -> None:
        _Failing.calls += 1
        raise ConnectionError("tracking server unreachable")

    def log_params(self, params: Mapping[str, Any]) -> list[str]:
        return []

    def finish(self, status: str) -> None:
        pass


def test_a_logging_failure_never_stops_training_and_is_said_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(backends.BACKENDS, "mlflow", _Failing)
    log = io.StringIO()
    tracker = Tracker(env={"TRAINSPEC_TRACKING": "mlflow"}, out=io.StringIO(), log=log).start()
    for step in range(5):
        tracker.log_metrics(step, {"loss": 1.0, "note": "text"})
    tracker.close()
    assert _Failing.calls == 5
    lines = log.getvalue().splitlines()
    assert lines == [
        "trainspec: tracking: metric note: 'text' is not a number: not logged to mlflow",
        (
            "trainspec: tracking: log ConnectionError: tracking server unreachable; training continues, later steps "
            "are logged when it can"
        ),
    ]


def test_an_unknown_tracker_name_is_an_error() -> None:
    with pytest.raises(TrackingError, match="unknown tracker 'neptune'"):
        Tracker(env={"TRAINSPEC_TRACKING": "neptune"})


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[StatusStandIn]:
    server = start(tmp_path)
    yield server
    server.close()


def test_the_run_is_linked_from_the_trainjob_status_and_the_reporter_keeps_the_link(
    mlflow_env: dict[str, str], standin: StatusStandIn, tmp_path: Path
) -> None:
    (tmp_path / "token").write_text("token-1")
    env = {
        **mlflow_env,
        "KUBEFLOW_TRAINER_SERVER_URL": standin.url,
        "KUBEFLOW_TRAINER_SERVER_CA_CERT": str(standin.ca_file),
        "KUBEFLOW_TRAINER_SERVER_TOKEN": str(tmp_path / "token"),
    }
    tracker = Tracker(env=env, out=io.StringIO()).start()
    posted = standin.posts()
    assert len(posted) == 1  # the link, at once: a job that never reports progress shows it too
    link = {m["name"]: m["value"] for m in posted[0].json()["trainerStatus"]["metrics"]}
    assert link == tracker.status_metrics() and set(link) == {"mlflow_run_id", "mlflow_experiment_id"}

    reporter = ProgressReporter(metrics=StepMetrics(), env=env, tracker=tracker)
    reporter.report(1, 10, metrics={"loss": 0.5})
    reporter.close()
    tracker.close()
    last = {m["name"]: m["value"] for m in standin.posts()[-1].json()["trainerStatus"]["metrics"]}
    assert last == {**link, "loss": "0.5"}  # each post replaces the metrics: the link rides along
    assert _loss(mlflow_env, link["mlflow_run_id"]) == [(1, 0.5)]  # the report's metrics went to the tracker
    # What `trainspec status` shows from it: the tracking URI is the TrainJob's; a store has no page.
    assert run_link({"MLFLOW_TRACKING_URI": "http://mlflow.mlflow:5000/"}, last) == (
        f"http://mlflow.mlflow:5000/#/experiments/{link['mlflow_experiment_id']}/runs/{link['mlflow_run_id']}"
    )


def test_on_stdout_the_reporter_leaves_the_run_ids_out(mlflow_env: dict[str, str]) -> None:
    out = io.StringIO()
    tracker = Tracker(env=mlflow_env, out=io.StringIO()).start()
    from trainspec.stages.progress_report import StdoutSink

    with ProgressReporter(StdoutSink(out), metrics=StepMetrics(), env=mlflow_env, tracker=tracker) as reporter:
        reporter.report(3, 10, metrics={"loss": 0.5})
    tracker.close()
    assert out.getvalue() == "trainspec progress: step 3/10 (30%), loss=0.5\n"


_WANDB_SCRIPT = """
import json, sys
from trainspec.stages import Tracker
with Tracker(params={"lr": 0.1}) as tracker:
    for step in json.loads(sys.argv[1]):
        tracker.log_metrics(step, {"loss": 1.0 / step})
print(json.dumps({"resumed": tracker.resumed, "link": tracker.status_metrics()}))
"""


def _wandb_records(path: Path) -> list[Any]:
    """The records of a W&B offline run file (``run-<id>.wandb``): a LevelDB-style log of protobuf
    ``Record`` messages in 32 KiB blocks, after a 7-byte header (``:W&B``, a magic number, a version)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    block, pos, pending, out = 32768, 7, b"", []
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:  # a block's tail too short for a header is padding
            pos += left
            continue
        length, kind = int.from_bytes(data[pos + 4 : pos + 6], "little"), data[pos + 6]
        if kind == 0 and length == 0:
            pos += left
            continue
        chunk, pos = data[pos + 7 : pos + 7 + length], pos + 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk  # full / first; middle / last append
        if kind in (1, 4):
            record = pb.Record()  # type: ignore[attr-defined]  # generated protobuf module, no stubs
            record.ParseFromString(pending)
            out.append(record)
    return out


@pytest.mark.slow  # two processes that each start W&B's service
def test_wandb_offline_resumes_the_same_run_id_with_the_run_named_and_grouped(tmp_path: Path) -> None:
    pytest.importorskip("wandb", reason="the test extra installs wandb")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(REPO),
        "WANDB_MODE": "offline",
        "WANDB_DIR": str(tmp_path),
        "WANDB_SILENT": "true",
        "TRAINSPEC_TRACKING": "wandb",
        "TRAINSPEC_JOB_NAME": "llama-sft",
        "TRAINSPEC_RUN_ID": "abc234",
        "WANDB_PROJECT": "sft",
    }
    said = []
    for steps in ([1, 2, 3], [3, 4]):  # the second process repeats step 3 (resumed from an earlier checkpoint)
        done = subprocess.run(
            [sys.executable, "-c", _WANDB_SCRIPT, json.dumps(steps)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        said.append(done.stdout.splitlines())
    for lines in said:
        assert lines[0] == (
            "trainspec tracking: wandb run llama-sft-abc234 (new): run id llama-sft-abc234, project sft "
            "(offline: `wandb sync` uploads it)"
        )
        assert json.loads(lines[-1])["link"] == {"wandb_run_id": "llama-sft-abc234", "wandb_project": "sft"}
    files = sorted((tmp_path / "wandb").glob("offline-run-*/run-llama-sft-abc234.wandb"))
    assert len(files) == 2  # one offline session each, one run id: `wandb sync` appends both to one run
    logged = []
    for path in files:
        records = _wandb_records(path)
        (run,) = [r.run for r in records if r.WhichOneof("record_type") == "run"]
        assert (run.run_id, run.display_name, run.run_group, run.project) == ("llama-sft-abc234",) * 2 + (
            "llama-sft",
            "sft",
        )
        for record in records:
            if record.WhichOneof("record_type") == "history":
                items = {
                    item.nested_key[0] if item.nested_key else item.key: item.value_json for item in record.history.item
                }
                logged.append((int(items["step"]), json.loads(items["loss"])))
    assert logged == [(1, 1.0), (2, 0.5), (3, 1 / 3), (3, 1 / 3), (4, 0.25)]  # the repeated step is kept
