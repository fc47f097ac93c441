"""Reports to Trainer's TrainJob status endpoint, against a loopback HTTPS stand-in (issue 15, part 5).

What the stand-in checks is what the controller's status server accepts upstream: the path
``/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/{name}/status``, a bearer token
(the projected token file's content, read again for each post), a JSON body; the body is
validated here against the shipped TrainJob CRD's ``status.trainerStatus`` schema.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from status_standin import StatusStandIn, make_certificate, start

from trainspec.stages import ProgressReporter, StepMetrics
from trainspec.stages.trainer_status import TrainerEndpoint, TrainerStatusSink, Update

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "trainspec" / "check" / "schema" / "data" / "trainer.kubeflow.org_trainjobs.json"
RANK_VARS = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "PET_NODE_RANK",
    "PET_NPROC_PER_NODE",
    "PET_NNODES",
    "JAX_PROCESS_ID",
    "JAX_NUM_PROCESSES",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
)


def _trainer_status_schema() -> dict[str, Any]:
    """The CRD's ``status.trainerStatus``, strict: no field the API would prune, its CEL rule as ``required``."""
    crd = json.loads(CRD.read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    trainer = dict(schema["trainerStatus"], additionalProperties=False, required=["lastUpdatedTime"])
    return {
        "type": "object",
        "properties": {"trainerStatus": trainer},
        "required": ["trainerStatus"],
        "additionalProperties": False,
    }


SCHEMA = _trainer_status_schema()


def check_payload(body: Any) -> dict[str, Any]:
    jsonschema.validate(body, SCHEMA)
    status = body["trainerStatus"]
    datetime.strptime(status["lastUpdatedTime"], "%Y-%m-%dT%H:%M:%SZ")  # RFC 3339, as metav1.Time parses
    for key in ("progressPercentage", "estimatedRemainingSeconds"):
        assert key not in status or -(1 << 31) <= status[key] < 1 << 31  # int32
    return status


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def standin(tmp_path: Path) -> Any:
    server = start(tmp_path)
    yield server
    server.close()


def _env(standin: StatusStandIn, tmp_path: Path, token: str = "token-1") -> dict[str, str]:
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    return {
        "KUBEFLOW_TRAINER_SERVER_URL": standin.url,
        "KUBEFLOW_TRAINER_SERVER_CA_CERT": str(standin.ca_file),
        "KUBEFLOW_TRAINER_SERVER_TOKEN": str(token_file),
    }


def test_posts_carry_the_path_token_content_type_and_a_valid_body(
    standin: StatusStandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = FakeClock()
    meter = StepMetrics(clock)
    reporter = ProgressReporter(metrics=meter, clock=clock, env=_env(standin, tmp_path))
    for step in range(1, 101):
        with meter.step():
            with meter.data_wait():
                clock.now += 0.1
            clock.now += 0.4
        reporter.report(step, 100, metrics={"loss": 1 / step})
    reporter.close()
    posts = standin.posts()
    # At most the first, one per 10 s of a 50 s run and the final flush; fewer when the sending thread
    # was still busy and newer values replaced waiting ones (the latest win).
    assert 1 <= len(posts) <= 1 + 50 // 10 + 1
    for post in posts:
        assert post.path == "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ml-dev/trainjobs/train-ddp/status"
        assert post.headers["Authorization"] == "Bearer token-1"  # the file's content, newline stripped
        assert post.headers["Content-Type"] == "application/json"
        check_payload(post.json())
    last = posts[-1].json()["trainerStatus"]
    assert last["progressPercentage"] == 100 and last["estimatedRemainingSeconds"] == 0
    assert {m["name"]: m["value"] for m in last["metrics"]} == {
        "loss": "0.01",
        "steps_per_second": "2",
        "data_wait_fraction": "0.2",
        # What trainspec ladder report reads back: the meter's last 49 step-to-step intervals.
        "recent_data_wait_fraction": "0.2",
        "recent_steps": "49",
        "recent_spread": "0",
    }
    assert capsys.readouterr().err == ""  # every post accepted: nothing said
    assert reporter.sink.sent == len(posts) and reporter.sink.failed == 0  # type: ignore[union-attr]


def test_the_token_is_read_again_for_each_post(standin: StatusStandIn, tmp_path: Path) -> None:
    env = _env(standin, tmp_path)
    clock = FakeClock()
    reporter = ProgressReporter(metrics=StepMetrics(clock), clock=clock, env=env, interval=10)
    reporter.report(1, 10)
    reporter.flush()
    Path(env["KUBEFLOW_TRAINER_SERVER_TOKEN"]).write_text("token-2")  # the kubelet rotated it
    standin.tokens = {"token-2"}  # and the old one no longer passes
    clock.now += 10
    reporter.report(2, 10)
    reporter.close()
    assert [p.headers["Authorization"] for p in standin.posts()] == ["Bearer token-1", "Bearer token-2"]
    assert reporter.sink.failed == 0  # type: ignore[union-attr]


def test_the_ca_file_is_read_again_for_each_post(
    standin: StatusStandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = _env(standin, tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    wrong_ca, _key = make_certificate(other)
    ca = tmp_path / "ca.crt"
    ca.write_bytes(wrong_ca.read_bytes())
    env["KUBEFLOW_TRAINER_SERVER_CA_CERT"] = str(ca)
    sink = TrainerStatusSink(TrainerEndpoint(standin.url, ca, Path(env["KUBEFLOW_TRAINER_SERVER_TOKEN"])))
    assert sink.send(Update(progress=1, time=0)) is False  # not our CA: the TLS handshake fails
    assert "failed (TLS)" in capsys.readouterr().err and standin.posts() == []
    ca.write_bytes(standin.ca_file.read_bytes())  # the CA ConfigMap was synced
    assert sink.send(Update(progress=2, time=0)) is True
    assert [p.json()["trainerStatus"]["progressPercentage"] for p in standin.posts()] == [2]


def test_a_down_endpoint_never_stops_training_and_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cert, _key = make_certificate(tmp_path)
    (tmp_path / "token").write_text("t")
    env = {
        "KUBEFLOW_TRAINER_SERVER_URL": f"https://127.0.0.1:{port}/apis/x",
        "KUBEFLOW_TRAINER_SERVER_CA_CERT": str(cert),
        "KUBEFLOW_TRAINER_SERVER_TOKEN": str(tmp_path / "token"),
    }
    clock = FakeClock()
    reporter = ProgressReporter(metrics=StepMetrics(clock), clock=clock, env=env, interval=1)
    for step in range(20):
        clock.now += 1
        reporter.report(step, 20)  # never raises
        reporter.flush()  # wait for each attempt, so every one of them fails for real
    reporter.close()
    err = capsys.readouterr().err
    assert err.count("failed (connection)") == 1, err
    assert "training continues" in err
    assert reporter.sink.failed >= 20 and reporter.sink.sent == 0  # type: ignore[union-attr]


def test_refusals_are_said_once_per_kind_with_the_controllers_message(
    standin: StatusStandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = _env(standin, tmp_path, token="not-this-job")
    sink = TrainerStatusSink(TrainerEndpoint(standin.url, standin.ca_file, Path(env["KUBEFLOW_TRAINER_SERVER_TOKEN"])))
    assert not sink.send(Update(time=0)) and not sink.send(Update(time=0))
    standin.fail_with = 500
    assert not sink.send(Update(time=0))
    err = capsys.readouterr().err.splitlines()
    assert [line.split("(")[1].split(")")[0] for line in err] == ["HTTP 403", "HTTP 500"]
    assert err[0].endswith("Forbidden; training continues and the report is retried later")


def test_the_token_never_leaves_https_or_follows_a_redirect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "token").write_text("secret")
    sink = TrainerStatusSink(TrainerEndpoint("http://127.0.0.1:9/apis/x", tmp_path / "ca", tmp_path / "token"))
    assert sink.send(Update(time=0)) is False
    assert "failed (not https)" in capsys.readouterr().err


def test_a_missing_token_file_is_said_not_raised(
    standin: StatusStandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sink = TrainerStatusSink(TrainerEndpoint(standin.url, standin.ca_file, tmp_path / "absent"))
    assert sink.send(Update(time=0)) is False
    assert "failed (token file)" in capsys.readouterr().err and standin.posts() == []


def test_report_never_waits_for_a_hanging_endpoint(tmp_path: Path) -> None:
    """The post runs on a thread: a server that accepts and never answers does not hold the step."""
    cert, _key = make_certificate(tmp_path)
    (tmp_path / "token").write_text("t")
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = threading.Event()
    release = threading.Event()

    def hang() -> None:  # holds the first connection until released; later ones are closed at once
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.set()
            release.wait(60)
            conn.close()

    threading.Thread(target=hang, daemon=True).start()
    env = {
        "KUBEFLOW_TRAINER_SERVER_URL": f"https://127.0.0.1:{listener.getsockname()[1]}/apis/x",
        "KUBEFLOW_TRAINER_SERVER_CA_CERT": str(cert),
        "KUBEFLOW_TRAINER_SERVER_TOKEN": str(tmp_path / "token"),
    }
    clock = FakeClock()
    reporter = ProgressReporter(metrics=StepMetrics(clock), clock=clock, env=env, interval=1, flush_timeout=30)
    reporter.report(1, 10)
    assert accepted.wait(30)  # the post is under way, and stuck ...
    for step in range(2, 10):  # ... while the loop goes on reporting (newer values replace waiting ones)
        clock.now += 1
        reporter.report(step, 10)
    release.set()
    reporter.close()
    listener.close()
    assert reporter.reports >= 2


SCRIPT = """
import sys
from trainspec.stages import report_progress, train_step
for step in range(1, 31):
    with train_step():
        pass
    report_progress(step, 30, metrics={"rank": sys.argv[1]})
"""


def test_simulated_ranks_only_rank_zero_posts(standin: StatusStandIn, tmp_path: Path) -> None:
    """Four processes with RANK 0..3 and the controller's variables: the endpoint hears rank 0 only."""
    env = {k: v for k, v in os.environ.items() if k not in RANK_VARS} | _env(standin, tmp_path)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(rank)],
            cwd=REPO,
            env=env | {"RANK": str(rank), "WORLD_SIZE": "4"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(4)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out == "" and err == ""  # nothing on stdout either: the reports went to Trainer
    posts = standin.posts()
    ranks = {m["value"] for p in posts for m in p.json()["trainerStatus"]["metrics"] if m["name"] == "rank"}
    assert ranks == {"0"}
    # The first report (unless the final one replaced it before it went), then the final flush at exit:
    # 30 quick steps are within one 10 s window.
    assert [p.json()["trainerStatus"]["progressPercentage"] for p in posts] in ([3, 100], [100])
