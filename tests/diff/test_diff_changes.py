"""Each kind of change is found, worded, and reported once, where it was made."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from trainspec.compiler.pipeline import compile_paths
from trainspec.diff import DiffReport, diff_results

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {{name: {name}}}
spec:
  framework: torch
  image: {image}
  resourcesPerNode: {{gpu: {gpus}}}
  accelerator: {{name: H100, memory: 80Gi}}
  restarts: {{max: 3}}
  dataSharding: {{image: example.com/trainspec:1}}
"""

JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: {name}, namespace: team-a}}
spec:
  runtime: {runtime}
  nodes: {nodes}
  queue: q
{extra}"""


def side(
    root: Path,
    *,
    runtimes: dict[str, dict] | None = None,
    jobs: dict[str, dict] | None = None,
    project: str | None = None,
) -> Path:
    """A directory of specs: runtimes and jobs by name, with their template fields."""
    root.mkdir(parents=True)
    for name, fields in (runtimes if runtimes is not None else {"rt": {}}).items():
        values = {"name": name, "image": "example.com/train:1", "gpus": 8, **fields}
        (root / f"runtime-{name}.yaml").write_text(RUNTIME.format(**values))
    for name, fields in (jobs if jobs is not None else {"job": {}}).items():
        values = {"name": name, "runtime": "rt", "nodes": 2, "extra": "", **fields}
        values["extra"] = textwrap.indent(textwrap.dedent(values["extra"]), "  ")
        (root / f"job-{name}.yaml").write_text(JOB.format(**values))
    if project is not None:
        (root / "trainspec.yaml").write_text("apiVersion: trainspec.dev/v1alpha1\nkind: Project\n" + project)
    return root


def diff(tmp_path: Path, old: dict, new: dict) -> DiffReport:
    a, b = side(tmp_path / "old", **old), side(tmp_path / "new", **new)
    results = []
    for root in (a, b):
        project = root / "trainspec.yaml"
        result = compile_paths([str(root)], project=str(project) if project.exists() else None)
        assert result.ok, result.diagnostics
        results.append(result)
    return diff_results(*results)


def summary(report: DiffReport) -> list[tuple[str, str, str, str]]:
    """The changes, without the new-run lines they cause (tested on their own below)."""
    return [(c.scope, c.key, c.category, c.message) for c in report.changes if c.category != "run"]


def runs(report: DiffReport) -> list[tuple[str, str]]:
    return [(c.key, c.message) for c in report.changes if c.category == "run"]


def test_a_change_of_what_a_job_runs_says_which_run_replaces_which(tmp_path: Path) -> None:
    report = diff(tmp_path, {"jobs": {"job": {"nodes": 2}}}, {"jobs": {"job": {"nodes": 4}}})
    ((key, message),) = runs(report)
    assert key == "team-a/job"
    assert re.fullmatch(r"new run job-[a-z2-7]{6} replaces job-[a-z2-7]{6}; .*", message), message
    assert report.summary() == "1 change in 1 job"  # a new run is what a change causes, not a change


def test_another_priority_class_updates_the_run_in_place(tmp_path: Path) -> None:
    """Kueue lets a running job move to another priority class: no new run for that."""
    old, new = {"jobs": {"job": {"extra": "priority: high"}}}, {"jobs": {"job": {"extra": "priority: low"}}}
    report = diff(tmp_path, old, new)
    assert summary(report) and runs(report) == []


def test_no_change(tmp_path: Path) -> None:
    assert diff(tmp_path, {}, {}).changes == ()


def test_runtime_change_is_reported_once_with_the_jobs_it_affects(tmp_path: Path) -> None:
    jobs = {"a": {}, "b": {}, "c": {"runtime": "other"}}
    runtimes = {"rt": {}, "other": {}}
    report = diff(
        tmp_path,
        {"runtimes": runtimes, "jobs": jobs},
        {"runtimes": {"rt": {"image": "example.com/train:2"}, "other": {}}, "jobs": jobs},
    )
    # The jobs inherit the image: the change shows under the runtime, not again under each job.
    assert summary(report) == [("runtime", "rt", "image", "image example.com/train:1 -> example.com/train:2")]
    assert report.changes[0].affects == ("team-a/a", "team-a/b")


def test_runtime_gpu_change_notes_the_gpus_each_job_gains_or_loses(tmp_path: Path) -> None:
    report = diff(tmp_path, {}, {"runtimes": {"rt": {"gpus": 4}}})
    assert summary(report) == [("runtime", "rt", "gpus", "resourcesPerNode.gpu 8 -> 4")]
    assert report.changes[0].affects == ("team-a/job (16 -> 8 GPUs)",)


def test_jobs_and_runtimes_added_and_removed(tmp_path: Path) -> None:
    report = diff(
        tmp_path,
        {"runtimes": {"rt": {}, "gone": {}}, "jobs": {"old-job": {}}},
        {"runtimes": {"rt": {}, "fresh": {}}, "jobs": {"new-job": {"runtime": "fresh", "nodes": 3}}},
    )
    assert summary(report) == [
        ("runtime", "fresh", "added", "runtime added"),
        ("runtime", "gone", "removed", "runtime removed"),
        ("job", "team-a/new-job", "added", "job added: 3 nodes, 24 GPUs, runtime fresh, queue q"),
        ("job", "team-a/old-job", "removed", "job removed (was 2 nodes, 16 GPUs, runtime rt, queue q)"),
    ]
    assert report.changes[0].affects == ("team-a/new-job",)


def test_job_switching_runtime_reports_what_it_now_inherits(tmp_path: Path) -> None:
    runtimes = {"rt": {}, "big": {"image": "example.com/big:1", "gpus": 4}}
    report = diff(tmp_path, {"runtimes": runtimes}, {"runtimes": runtimes, "jobs": {"job": {"runtime": "big"}}})
    assert summary(report) == [
        ("job", "team-a/job", "runtime", "runtime rt -> big"),
        ("job", "team-a/job", "gpus", "GPUs per node 8 -> 4, processes per node 8 -> 4 (-8 GPUs)"),
        ("job", "team-a/job", "image", "image example.com/train:1 -> example.com/big:1"),
    ]


def test_job_switching_runtime_reports_the_new_restart_budget(tmp_path: Path) -> None:
    old = side(tmp_path / "old")
    new = side(tmp_path / "new", runtimes={"rt": {}, "patient": {}}, jobs={"job": {"runtime": "patient"}})
    text = (new / "runtime-patient.yaml").read_text().replace("restarts: {max: 3}", "restarts: {max: 10}")
    (new / "runtime-patient.yaml").write_text(text)
    report = diff_results(compile_paths([str(old)]), compile_paths([str(new)]))
    assert summary(report) == [
        ("runtime", "patient", "added", "runtime added"),
        ("job", "team-a/job", "runtime", "runtime rt -> patient"),
        ("job", "team-a/job", "restarts", "restarts.max 3 -> 10 (JobSet failurePolicy.maxRestarts)"),
    ]


DATA = """\
data: {{source: {source}, shardBy: {by}}}
"""


def test_data_source_and_shards(tmp_path: Path) -> None:
    report = diff(
        tmp_path,
        {"jobs": {"job": {"extra": DATA.format(source="s3://a/", by="rank")}}},
        {"jobs": {"job": {"extra": DATA.format(source="s3://b/", by="node")}}},
    )
    assert summary(report) == [
        ("job", "team-a/job", "data", "data shardBy rank -> node; source s3://a/ -> s3://b/ (shards 16 -> 2)"),
    ]


def test_scaling_a_sharded_job_keeps_the_shards_out_of_the_data_change(tmp_path: Path) -> None:
    extra = DATA.format(source="s3://a/", by="rank")
    report = diff(tmp_path, {"jobs": {"job": {"extra": extra}}}, {"jobs": {"job": {"extra": extra, "nodes": 3}}})
    assert summary(report) == [("job", "team-a/job", "gpus", "nodes 2 -> 3 (+8 GPUs)")]


CKPT = """\
checkpoint: {{size: auto, model: {{parameters: {params}}}, keep: 2}}
"""


def test_checkpoint_size_change(tmp_path: Path) -> None:
    report = diff(
        tmp_path,
        {"jobs": {"job": {"extra": CKPT.format(params="70B")}}},
        {"jobs": {"job": {"extra": CKPT.format(params="8B")}}},
    )
    message = (
        "checkpoint model.parameters 70B -> 8B (980 GB -> 112 GB per checkpoint, 2.0 TB -> 224 GB kept, "
        "volume 2191Gi -> 251Gi)"
    )
    assert summary(report) == [("job", "team-a/job", "checkpoint", message)]


def test_a_checkpoint_volume_size_change_reads_as_the_sizes(tmp_path: Path) -> None:
    report = diff(
        tmp_path,
        {"jobs": {"job": {"extra": "checkpoint: {size: 100Gi}\n"}}},
        {"jobs": {"job": {"extra": "checkpoint: {size: 200Gi}\n"}}},
    )
    assert summary(report) == [
        ("job", "team-a/job", "checkpoint", "checkpoint size 100Gi -> 200Gi (volume 100Gi -> 200Gi)")
    ]
    same = diff(
        tmp_path / "same",
        {"jobs": {"job": {"extra": "checkpoint: {size: 100Gi}\n"}}},
        {"jobs": {"job": {"extra": "checkpoint: {size: 102400Mi}\n"}}},
    )
    assert same.changes == ()


@pytest.mark.parametrize(("before", "after"), [("70B", "70000M"), ("7.5B", "7500M"), ("70B", "70000000000")])
def test_the_same_parameter_count_written_differently_is_no_change(tmp_path: Path, before: str, after: str) -> None:
    report = diff(
        tmp_path,
        {"jobs": {"job": {"extra": CKPT.format(params=before)}}},
        {"jobs": {"job": {"extra": CKPT.format(params=after)}}},
    )
    assert report.changes == ()


def test_equal_quantities_and_durations_are_no_change(tmp_path: Path) -> None:
    old = {"jobs": {"job": {"extra": "maxRunTime: 72h\nresourcesPerNode: {gpu: 8, memory: 1536Mi}\n"}}}
    new = {"jobs": {"job": {"extra": "maxRunTime: 3d\nresourcesPerNode: {gpu: 8, memory: 1.5Gi}\n"}}}
    assert diff(tmp_path, old, new).changes == ()


def test_priority_and_deadline_added(tmp_path: Path) -> None:
    report = diff(tmp_path, {}, {"jobs": {"job": {"extra": "priority: high\nmaxRunTime: 90m\n"}}})
    assert summary(report) == [
        ("job", "team-a/job", "priority", "priority added: high"),
        ("job", "team-a/job", "deadline", "maxRunTime added: 1h30m"),
    ]


def test_other_fields_are_listed_by_path(tmp_path: Path) -> None:
    report = diff(
        tmp_path,
        {"jobs": {"job": {"extra": "command: [python, a.py]\nenv: {A: '1'}\n"}}},
        {"jobs": {"job": {"extra": "command: [python, b.py]\nenv: {A: '2', B: x}\n"}}},
    )
    assert summary(report) == [
        ("job", "team-a/job", "command", 'command ["python", "a.py"] -> ["python", "b.py"]'),
        ("job", "team-a/job", "env", "env.A 1 -> 2; env.B added: x"),
    ]


def test_a_project_default_change_reaches_the_job(tmp_path: Path) -> None:
    # A job without a queue of its own takes the project's default queue.
    queueless = JOB.replace("  queue: q\n", "").format(name="job", runtime="rt", nodes=2, extra="")
    roots = []
    for name, queue in (("old", "shared"), ("new", "big")):
        root = side(tmp_path / name, jobs={}, project=f"spec: {{defaults: {{queue: {queue}}}}}\n")
        (root / "job.yaml").write_text(queueless)
        roots.append(root)
    report = diff_results(*(compile_paths([str(r)], project=str(r / "trainspec.yaml")) for r in roots))
    assert summary(report) == [("job", "team-a/job", "queue", "queue shared -> big")]


@pytest.mark.parametrize("argv", [["diff"], ["diff", "only-one"], ["diff", "a", "b", "c"]])
def test_usage_errors_exit_2(run_cli, argv: list[str]) -> None:
    code, out, err = run_cli(*argv)
    assert code == 2 and out == "" and "give OLD and NEW" in err


def test_a_side_that_does_not_compile_exits_2_with_its_diagnostics(run_cli, tmp_path: Path) -> None:
    good = side(tmp_path / "good")
    bad = side(tmp_path / "bad", jobs={"job": {"runtime": "missing"}})
    code, out, err = run_cli("diff", str(good), str(bad), "--no-project")
    assert code == 2 and out == ""
    assert "error[TS305]" in err and "the specs do not compile" in err


def test_a_change_of_engine_is_a_change_of_the_job(tmp_path) -> None:
    """TrainJob -> RayJob is another object on the cluster: diff says so, by the job."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(root / "examples" / "ray-train", old)
    shutil.copytree(root / "examples" / "ray-train", new)
    runtime = old / "runtime.yaml"
    runtime.write_text(
        "\n".join(line for line in runtime.read_text().splitlines() if line.strip() != "engine: ray") + "\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "trainspec", "diff", str(old), str(new), "--no-project"],
        check=False,
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert done.returncode == 1, done.stderr
    assert "engine trainer -> ray" in done.stdout


def test_diff_can_refuse_to_run_python_spec_modules(tmp_path: Path) -> None:
    """``diff --no-python``: a spec module on either side is reported (TS123), never run."""
    import contextlib
    import io

    from trainspec.cli.main import main

    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "spec.py").write_text(
            f"from pathlib import Path\nPath({str(tmp_path / 'ran')!r}).write_text('x')\n"
            "from trainspec import TrainingJob\n"
            "job = TrainingJob(name='x', namespace='n', runtime='trainspec-torch', command=['x'])\n"
        )
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["diff", str(tmp_path / "old"), str(tmp_path / "new"), "--no-project", "--no-python"])
    assert code == 2 and "TS123" in err.getvalue() and not (tmp_path / "ran").exists()
