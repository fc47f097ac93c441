"""``logs --tail/--since/--timestamps/--previous``: kubectl's options, mapped onto the pod log API
(``tailLines``, ``sinceSeconds``, ``timestamps``, ``previous``) and applied by the stand-in as
kubelet applies them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

from helpers import cli, write_job
from kube_standin import StandIn

from trainspec.kube.follow import PodLogs

POD = "ddp-ckpt-node-0-0-a"


def stamp(seconds_ago: int) -> str:
    """An RFC 3339 time that many seconds before now (the log API's sinceSeconds counts from now)."""
    return (datetime.now(timezone.utc) - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def job(api: StandIn, tmp_path: Path) -> StandIn:
    api.add_cluster_runtime("trainspec-torch")
    assert cli("submit", write_job(tmp_path), "--no-project")[0] == 0
    lines = [
        f"{stamp(3600)} [default0]:epoch 1 loss 0.9",
        f"{stamp(1800)} [default1]:epoch 2 loss 0.7",
        f"{stamp(30)} [default0]:epoch 3 loss 0.5",
        f"{stamp(10)} [default1]:epoch 4 loss 0.4",
    ]
    api.add_pod("ml-dev", POD, "ddp-ckpt", phase="Running", lines=lines, restarts=1)
    api.requests.clear()
    return api


def logs(*argv: str) -> tuple[int, list[str], str]:
    code, out, err = cli("logs", "ddp-ckpt", "-n", "ml-dev", *argv)
    return code, out.splitlines(), err


def log_queries(api: StandIn) -> list[dict[str, str]]:
    return [r.query for r in api.sent("GET", "/log$")]


def test_tail_is_tail_lines(job: StandIn) -> None:
    code, lines, err = logs("--tail", "2")
    assert code == 0, err
    assert lines == ["node-0 rank-0 | epoch 3 loss 0.5", "node-0 rank-1 | epoch 4 loss 0.4"]
    assert log_queries(job)[0]["tailLines"] == "2"


def test_tail_minus_one_is_every_line_and_asks_for_no_tail(job: StandIn) -> None:
    code, lines, _ = logs("--tail", "-1")
    assert code == 0 and len(lines) == 4
    assert "tailLines" not in log_queries(job)[0]


def test_since_is_since_seconds(job: StandIn) -> None:
    code, lines, _ = logs("--since", "2m")
    assert code == 0
    assert lines == ["node-0 rank-0 | epoch 3 loss 0.5", "node-0 rank-1 | epoch 4 loss 0.4"]
    assert log_queries(job)[0]["sinceSeconds"] == "120"
    assert logs("--since", "1h30m")[1][0].endswith("epoch 1 loss 0.9")


def test_timestamps_come_after_the_prefix(job: StandIn) -> None:
    code, lines, _ = logs("--timestamps", "--tail", "1")
    assert code == 0
    prefix, _, rest = lines[0].partition(" | ")
    when, _, text = rest.partition(" ")
    assert prefix == "node-0 rank-1" and text == "epoch 4 loss 0.4"  # kubectl --prefix --timestamps' order
    assert datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ")
    plain = logs("--tail", "1")[1]
    assert plain == ["node-0 rank-1 | epoch 4 loss 0.4"]  # without it, no time
    assert all(q["timestamps"] == "True" for q in log_queries(job))  # always asked: reconnects need them


def test_previous_reads_the_container_before_its_restart(job: StandIn) -> None:
    job.previous_logs[("ml-dev", POD)] = [f"{stamp(4000)} [default0]:CUDA error: out of memory"]
    code, lines, err = logs("--previous")
    assert code == 0, err
    assert lines == ["node-0 rank-0 | CUDA error: out of memory"]
    assert log_queries(job)[0]["previous"] == "True" and log_queries(job)[0]["follow"] == "False"


def test_previous_without_a_restart_says_so_and_fails(job: StandIn) -> None:
    code, lines, err = logs("-p")
    assert (code, lines) == (1, [])
    assert f"pod {POD} has no previous container instance" in err
    assert f'previous terminated container "node" in pod "{POD}" not found' in err  # the server's words
    assert "Traceback" not in err and "HTTP response headers" not in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("--tail", "-5"), "is not a number of lines"),
        (("--tail", "x"), "is not a number of lines"),
        (("--since", "5"), "is not a duration"),
        (("--since", "0s"), "is not a duration"),
        (("--previous", "--follow"), "not allowed with argument"),
    ],
)
def test_bad_options_are_usage_errors_before_any_request(job: StandIn, argv: tuple[str, ...], said: str) -> None:
    with pytest.raises(SystemExit) as exited:
        cli("logs", "ddp-ckpt", *argv)
    assert exited.value.code == 2
    assert job.requests == []


class _Fake:
    """Pods of one node index whose log streams are scripted; each read's options are recorded.

    ``pods`` is what each pod listing returns, in turn (the last one again when they run out).
    ``streams`` holds each pod's reads, in turn: pods are read in threads of their own, so a read
    is matched to its pod, never to the order the threads happen to call in.
    """

    def __init__(self, pods: list[list[str]], streams: dict[str, list[list[str]]]) -> None:
        self.pods, self.reads = pods, streams
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def streams(self) -> bool:
        """Whether a scripted read is left."""
        return any(self.reads.values())

    def list_pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        uids = self.pods.pop(0) if len(self.pods) > 1 else self.pods[0]
        labels = {"batch.kubernetes.io/job-completion-index": "0", "jobset.sigs.k8s.io/replicatedjob-name": "node"}
        return [
            {
                "metadata": {"name": uid, "uid": uid, "labels": labels, "creationTimestamp": f"2026-01-01T00:00:0{n}Z"},
                "status": {"phase": "Running"},
            }
            for n, uid in enumerate(uids)
        ]

    def stream_log(self, namespace: str, pod: str, container: str, **options: Any) -> Any:
        self.calls.append((pod, options))
        reads = self.reads.get(pod) or []
        yield from reads.pop(0) if reads else []


def _follow(kube: _Fake, **options: Any) -> list[str]:
    """``logs --follow`` with ``options`` until the scripted streams are read; the lines printed."""
    import io

    out = io.StringIO()
    follower = PodLogs(kube, "ml", "job", out=out, err=io.StringIO(), poll_seconds=0, **options)
    follower.run(follow=True, finished=lambda: not kube.streams)
    return [line.split(" | ")[1] for line in out.getvalue().splitlines()]


def test_tail_and_since_shape_the_first_read_a_reconnect_reads_on() -> None:
    kube = _Fake(
        [["p0"]],
        {
            "p0": [
                ["2026-01-01T00:00:01Z one", "2026-01-01T00:00:02Z two"],
                ["2026-01-01T00:00:02Z two", "2026-01-01T00:00:03Z three"],
            ]
        },
    )
    assert _follow(kube, tail=5, since=600) == ["one", "two", "three"]
    (_, first), (_, again) = kube.calls[:2]  # the stream ended while the pod ran (a restart): read again
    assert (first["tail_lines"], first["since_seconds"]) == (5, 600)
    assert "tail_lines" not in again and again["since_seconds"] > 600  # from the last line printed


def test_a_pod_that_replaces_one_is_read_from_its_start() -> None:
    kube = _Fake([["p0"], ["p0", "p1"]], {"p0": [["2026-01-01T00:00:01Z old"]], "p1": [["2026-01-01T00:00:09Z new"]]})
    # Each pod is read in a thread of its own: the two lines may come in either order.
    assert sorted(_follow(kube, tail=1, since=60)) == ["new", "old"]
    first = next(options for pod, options in kube.calls if pod == "p0")
    second = next(options for pod, options in kube.calls if pod == "p1")
    assert (first["tail_lines"], first["since_seconds"]) == (1, 60)
    assert "tail_lines" not in second and second["since_seconds"] is None  # the new pod from its start
