"""A ladder on a cluster: ``ladder run`` (``submit --ladder``) climbs the rungs one after the other and
``ladder report`` reads back what each measured, against the loopback API stand-in.

The test plays the controllers: on each watch (``StandIn.on_watch``) every unfinished rung's TrainJob
moves one step (Running, then its scripted end), and a finished one gets what its rank-0
``ProgressReporter`` reported: the Trainer status of a real reporter's last update, or its JSON
line in the rank-0 pod's log. Outcomes never depend on timing: the climb waits on watches that
the test answers, with ``--poll 0``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the kube extra is not installed: pip install 'trainspec[kube]'")

from helpers import RUNS_YAML, cli, write_job
from kube_standin import StandIn
from ladder_standin import Controller, Rung, json_line, reported

from trainspec.client.ladder_readback import rung_end
from trainspec.kube.state import JobView, view
from trainspec.stages.trainer_status import Update

#: The helpers' job on 4 nodes: rungs 1n, 2n and 4n, 2 processes a node, no GPUs.
SPEC = RUNS_YAML.replace("nodes: 2", "nodes: 4")
TRAINJOBS = re.compile(r"^/apis/trainer\.kubeflow\.org/v1alpha1/namespaces/[^/]+/trainjobs/")


def _applied(api: StandIn) -> list[tuple[str, int]]:
    """The rungs whose TrainJob was applied (not dry-run), with the index of the request."""
    return [
        (r.path.rsplit("/", 1)[1].split("-ladder-")[1].split("-")[0], i)
        for i, r in enumerate(api.requests)
        if r.method == "PATCH" and TRAINJOBS.match(r.path) and "dryRun" not in r.query
    ]


def _climb(tmp: Path, *extra: str) -> tuple[int, str, str]:
    return cli("ladder", "run", write_job(tmp, SPEC), "--no-project", "--poll", "0", *extra)


SCRIPTED = {
    # Per rank: 10 samples a step. 1n: 10 steps/s, 2n: 9.5 (95% of linear), 4n: 7 (70%); the wait grows.
    "1n": Rung(status=reported(0.095, 0.005)),
    "2n": Rung(status=reported(0.0953, 0.0100)),
    "4n": Rung(status=reported(0.0929, 0.0500)),
}


def test_the_climb_submits_each_rung_after_the_previous_one_completed(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    controller = Controller(dict(SCRIPTED))
    api.on_watch = controller
    code, out, err = _climb(tmp_path)
    assert code == 0, err
    applied = _applied(api)
    assert [tag for tag, _ in applied] == ["1n", "2n", "4n"]
    assert [tag for tag, _ in controller.ended] == ["1n", "2n", "4n"]
    # Each rung was applied only after the one before it had completed.
    (_, ended_1n), (_, ended_2n), _ = controller.ended
    assert ended_1n < applied[1][1] and ended_2n < applied[2][1]
    assert "rung 1n: submitting TrainJob ml-dev/ddp-ckpt-ladder-1n-" in err
    assert "    persistentvolumeclaim/ml-dev/ddp-ckpt-ladder-1n-checkpoints created" in err
    assert "  rung 2n: Running" in err and "  rung 2n: Complete" in err
    lines = out.splitlines()
    assert lines[0] == "ml-dev/ddp-ckpt: measured scaling ladder"
    assert lines[1].split() == ["rung", "processes", "throughput", "speed-up", "efficiency", "data", "wait", "measured"]
    assert [line.split()[:2] for line in lines[2:5]] == [["1n", "2"], ["2n", "4"], ["4n", "8"]]
    assert "  recommendation: 2n (4 processes): the largest rung at or above 80% efficiency; 4n (8 processes)" in out
    assert "  bottleneck: the data pipeline: the loop waits for data 5% of its time at 1n and 35% at 4n" in out
    assert "  note: 2n: 1 of 4 ranks measured; their counts are scaled to every rank" in out
    assert lines[-1].startswith("  figures: rank 0's last progress report of each rung, over its StepMetrics'")


def test_ladder_report_reads_the_rungs_back_as_json(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    api.on_watch = Controller(dict(SCRIPTED))
    assert _climb(tmp_path, "--rungs", "1n,2n")[0] == 0
    code, out, err = cli(
        "ladder", "report", str(tmp_path / "job.yaml"), "--no-project", "--format", "json", "--min-efficiency", "0.9"
    )
    assert code == 0, err
    (ladder,) = json.loads(out)["ladders"]
    assert (ladder["unit"], ladder["scaleUnit"], ladder["warmup"], ladder["minEfficiency"]) == (
        "samples/s",
        "processes",
        None,
        0.9,
    )
    assert ladder["window"].startswith("rank 0's last progress report")
    rows = {r["rung"]: r for r in ladder["rungs"]}
    assert [r["status"] for r in ladder["rungs"]] == ["measured", "measured", "not run"]
    # Rank 0's 100 samples/s, counted on each of the rung's 2 and 4 ranks.
    assert rows["1n"]["throughput"] == pytest.approx(200, rel=1e-3)
    assert rows["2n"]["throughput"] == pytest.approx(380, rel=1e-3)
    assert rows["2n"]["efficiency"] == pytest.approx(0.95, rel=1e-3)
    assert (rows["1n"]["measuredSteps"], rows["1n"]["ranksMeasured"], rows["1n"]["steady"]) == (49, 1, True)
    assert rows["1n"]["dataWaitShare"] == pytest.approx(0.05)
    assert rows["4n"]["note"] == "not on the cluster: trainspec ladder run SPEC climbs it"
    assert ladder["recommendation"]["rung"] == "2n" and ladder["recommendation"]["kind"] == "all"


def test_a_failed_rung_stops_the_climb(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    api.on_watch = Controller({**SCRIPTED, "2n": Rung(end="Failed")})
    code, out, err = _climb(tmp_path)
    assert code == 1
    assert [tag for tag, _ in _applied(api)] == ["1n", "2n"]  # 4n never submitted
    assert "  rung 2n: TrainJob ml-dev/ddp-ckpt-ladder-2n-" in err
    assert "ended Failed (JobsFailed): rung Failed; the climb stops here (trainspec logs ddp-ckpt-ladder-2n-" in err
    rows = {line.split()[0]: line for line in out.splitlines()[2:5]}
    assert "failed: TrainJob ml-dev/ddp-ckpt-ladder-2n-" in rows["2n"]
    assert rows["4n"].rstrip().endswith("not run: rung 2n failed")
    assert "recommendation: 1n (2 processes): the only rung measured" in out
    # Run again: the failed rung stops the climb at once and says how to measure it anew.
    again, _, err = _climb(tmp_path)
    assert again == 1 and [tag for tag, _ in _applied(api)] == ["1n", "2n"]
    assert (
        "rung 1n: TrainJob ml-dev/ddp-ckpt-ladder-1n-" in err
        and "ended already (Complete (JobsComplete)): not submitted again" in err
    )
    assert "ended Failed (JobsFailed): rung Failed in an earlier climb; the climb stops here" in err
    assert "trainspec cancel ddp-ckpt-ladder-2n-" in err


def _wait_for(found: Callable[[], bool], what: str) -> None:
    """Until ``found()`` (a guard against a hang, not a timing assertion)."""
    done = threading.Event()
    for _ in range(600):
        if found():
            return
        done.wait(0.1)
    raise AssertionError(f"never happened: {what}")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_an_interrupted_climb_resumes_without_submitting_a_completed_rung_again(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    controller = Controller({**SCRIPTED, "2n": Rung(end="Running")})  # 2n runs until the test says
    api.on_watch = controller
    spec = write_job(tmp_path, SPEC)
    command = [sys.executable, "-m", "trainspec", "ladder", "run", spec, "--no-project", "--poll", "0"]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
        # Ctrl-C's SIGINT as a terminal delivers it: a run started in the background by a
        # non-interactive shell (as CI starts the kube matrix) inherits SIGINT ignored, and Python
        # then raises no KeyboardInterrupt at all.
        preexec_fn=_default_sigint,
    )
    try:
        # The climb waits on rung 2n: its TrainJob was applied and watched since.
        _wait_for(lambda: len(_applied(api)) == 2, "rung 2n submitted")
        watched = len(api.sent("GET", "trainjobs$"))
        _wait_for(lambda: len(api.sent("GET", "trainjobs$")) > watched + 2, "the climb watching rung 2n")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert out == ""  # no table from an interrupted climb
    assert "interrupted; rung 2n (TrainJob ml-dev/ddp-ckpt-ladder-2n-" in err and "keeps running on the cluster" in err
    assert "The same command resumes the climb" in err
    # The same command again, and rung 2n now completes: 1n is not submitted again, 2n is waited for.
    controller.rungs["2n"] = SCRIPTED["2n"]
    code, out, err = _climb(tmp_path)
    assert code == 0, err
    assert [tag for tag, _ in _applied(api)] == ["1n", "2n", "4n"]  # each applied once, over both climbs
    assert (
        "rung 1n: TrainJob ml-dev/ddp-ckpt-ladder-1n-" in err
        and "ended already (Complete (JobsComplete)): not submitted again" in err
    )
    assert "rung 2n: TrainJob ml-dev/ddp-ckpt-ladder-2n-" in err and "is submitted already: waiting for it" in err
    assert [line.split()[0] for line in out.splitlines()[2:5]] == ["1n", "2n", "4n"]
    assert "recommendation: 2n" in out


def test_figures_from_the_rank0_log_and_the_reasons_a_rung_has_none(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    text_line = "trainspec progress: step 60/60 (100%), loss=0.0167, steps_per_second=10"
    logged = json_line(reported(0.095, 0.005))
    api.on_watch = Controller(
        {
            # No TrainJobStatus endpoint: the JSON line in rank 0's log (torchrun's prefix before it).
            "1n": Rung(log=["2026-01-01T00:00:01Z starting", f"2026-01-01T00:00:09Z [default0]:{logged}"]),
            "2n": Rung(log=["2026-01-01T00:00:09Z " + text_line]),
            # A report without a step meter: progress and loss only.
            "4n": Rung(status=Update(100, 0, (("loss", "0.1"),), 1_767_225_600.0)),
        }
    )
    code, out, err = _climb(tmp_path, "--format", "json")
    assert code == 0, err
    rows = {r["rung"]: r for r in json.loads(out)["ladders"][0]["rungs"]}
    assert rows["1n"]["status"] == "measured" and rows["1n"]["throughput"] == pytest.approx(200, rel=1e-3)
    assert rows["2n"]["status"] == "no measurement"
    assert "rank 0's progress went to its log as text lines" in rows["2n"]["note"]
    assert 'StdoutSink(format="json")' in rows["2n"]["note"]
    assert rows["4n"]["status"] == "no measurement"
    assert rows["4n"]["note"].startswith("rank 0's progress reports carry no step rate (steps_per_second)")
    assert rows["4n"]["note"].endswith("(read from the TrainJob's status.trainerStatus)")


def test_submit_ladder_is_the_same_climb_and_dry_run_waits_for_nothing(api: StandIn, tmp_path: Path) -> None:
    api.add_cluster_runtime("trainspec-torch")
    spec = write_job(tmp_path, SPEC)
    code, out, err = cli("submit", "--ladder", "--dry-run", spec, "--no-project")
    assert code == 0, err
    assert out == "" and not api.trainjobs
    assert err.count("(server dry run)\n") >= 3 and "rung 4n: submitting TrainJob" in err
    api.on_watch = Controller(dict(SCRIPTED))
    code, out, err = cli("submit", "--ladder", spec, "--no-project")
    assert code == 0, err
    assert err.startswith("trainspec submit --ladder: ml-dev/ddp-ckpt, 3 rungs on context ")
    assert [tag for tag, _ in _applied(api)] == ["1n", "2n", "4n"]
    assert "recommendation: 2n" in out


def test_usage_errors_name_the_options_of_the_other_side(tmp_path: Path) -> None:
    spec = write_job(tmp_path, SPEC)
    code, _, err = cli("ladder", "run", spec, "--no-project", "--workdir", "w", "--warmup", "5")
    assert code == 2 and "--workdir, --warmup are only with --local" in err
    code, _, err = cli("ladder", "run", "--local", spec, "--no-project", "-n", "ml-dev", "--poll", "1")
    assert code == 2 and "-n/--namespace, --poll are only on a cluster (without --local)" in err


def test_a_missing_runtime_stops_the_climb_before_its_first_rung(api: StandIn, tmp_path: Path) -> None:
    code, out, err = _climb(tmp_path)
    assert code == 1 and out == ""
    assert "error[TS712]" in err and not _applied(api)


def test_the_rungs_must_be_in_the_ladder(api: StandIn, tmp_path: Path) -> None:
    code, _, err = _climb(tmp_path, "--rungs", "3n")
    assert code == 2 and "no rung 3n in the ladder of ml-dev/ddp-ckpt (rungs: 1n, 2n, 4n)" in err


def test_a_rung_that_ran_out_its_max_run_time_was_measured_and_the_climb_goes_on(api: StandIn, tmp_path: Path) -> None:
    # A rung of a long job ends at its deadline (at most 1 hour): Trainer fails it with DeadlineExceeded.
    out_of_time = Rung(
        end="Failed",
        status=reported(0.0953, 0.0100),
        reason="DeadlineExceeded",
        message="TrainJob exceeded its active deadline",
    )
    api.add_cluster_runtime("trainspec-torch")
    api.on_watch = Controller({**SCRIPTED, "2n": out_of_time})
    code, out, err = _climb(tmp_path, "--format", "json")
    assert code == 0, err
    assert [tag for tag, _ in _applied(api)] == ["1n", "2n", "4n"]
    assert "  rung 2n: ran out its maxRunTime, the time a rung measures for: it has ended" in err
    rows = {r["rung"]: r for r in json.loads(out)["ladders"][0]["rungs"]}
    assert [rows[t]["status"] for t in ("1n", "2n", "4n")] == ["measured", "measured", "measured"]
    assert rows["2n"]["note"].endswith(
        "ran out its maxRunTime (Failed (DeadlineExceeded): TrainJob exceeded its active deadline); the figures "
        "are its last report's"
    )
    again, _, err = _climb(tmp_path)
    assert again == 0 and "ended already (Failed (DeadlineExceeded)): not submitted again" in err


def _suspended_with(evicted_reason: str, message: str) -> JobView:
    """A rung's TrainJob that Kueue deactivated (its Workload evicted, inactive; Trainer suspended it)."""
    job = {
        "metadata": {"name": "r", "namespace": "ml-dev", "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {},
        "status": {"conditions": [{"type": "Suspended", "status": "True", "reason": "Suspended"}]},
    }
    workload = {
        "metadata": {
            "name": "trainjob-r-1",
            "namespace": "ml-dev",
            "ownerReferences": [{"kind": "TrainJob", "name": "r", "uid": "u1"}],
        },
        "spec": {"active": False},
        "status": {"conditions": [{"type": "Evicted", "status": "True", "reason": evicted_reason, "message": message}]},
    }
    return view(job, workloads=[workload])


def test_kueue_deactivating_a_rung_at_its_maximum_execution_time_ends_it_like_its_deadline() -> None:
    out_of_time = _suspended_with(
        "DeactivatedDueToMaximumExecutionTimeExceeded",
        "The workload is deactivated due to exceeding the maximum execution time",
    )
    assert out_of_time.phase == "Deactivated" and rung_end(out_of_time) == "deadline"
    # Deactivated by hand: nothing restarts it; the climb stops rather than wait for ever.
    by_hand = _suspended_with("Deactivated", "The workload is deactivated")
    assert rung_end(by_hand) == "failed"


def test_a_refused_podmonitor_does_not_stop_the_climb(api: StandIn) -> None:
    # The observability example's runtime gives every rung a PodMonitor; RBAC refuses the first one.
    api.add_cluster_runtime("torch-a100-observed")
    api.fail("PATCH", "podmonitors", 403)
    api.on_watch = Controller({tag: Rung(status=reported(0.095, 0.005)) for tag in ("1gpu", "1n", "2n")})
    code, out, err = cli("ladder", "run", "examples/observability", "--no-project", "--poll", "0")
    assert code == 0, err
    assert [tag for tag, _ in _applied(api)] == ["1gpu", "1n", "2n"]
    assert err.count("    not applied: ") == 1 and "(the rung runs without it)" in err
    assert [line.split()[:2] for line in out.splitlines()[2:5]] == [["1gpu", "1"], ["1n", "8"], ["2n", "16"]]


def test_a_ray_jobs_ladder_is_refused_and_does_not_stand_in_the_way_of_another_job(
    api: StandIn, tmp_path: Path
) -> None:
    code, out, err = cli("ladder", "run", "examples/ray-train", "--no-project", "--poll", "0")
    assert code == 1 and out == "" and "error[TS713]" in err and not api.requests
    # Beside a Trainer job, picked with --job: its ladder is climbed, the Ray job's left alone.
    shutil.copytree("examples/ray-train", tmp_path / "ray")
    write_job(tmp_path, SPEC)
    api.add_cluster_runtime("trainspec-torch")
    api.on_watch = Controller(dict(SCRIPTED))
    code, out, err = cli("ladder", "run", str(tmp_path), "--job", "ddp-ckpt", "--no-project", "--poll", "0")
    assert code == 0, err
    assert [tag for tag, _ in _applied(api)] == ["1n", "2n", "4n"]


def test_a_controllers_words_reach_the_terminal_escaped(api: StandIn, tmp_path: Path) -> None:
    """A condition's message is any controller's text: an escape sequence or a bidi control in it is
    shown as ``\\uXXXX`` on the climb's lines and in the table, never obeyed by the terminal."""
    api.add_cluster_runtime("trainspec-torch")
    hostile = "OOM\x1b[2J\x1b[31m gone\u202e"
    api.on_watch = Controller({**SCRIPTED, "2n": Rung(end="Failed", reason="Killed", message=hostile)})
    code, out, err = _climb(tmp_path)
    assert code == 1
    for text in (out, err):
        assert "\x1b" not in text and "\u202e" not in text
    assert "OOM\\u001b[2J\\u001b[31m gone\\u202e" in err
