"""One pipeline: validate, compile, check and the library give the same answer for the same inputs.

Every command and ``trainspec.validate``/``trainspec.compile`` run ``compiler.pipeline.PASSES``
with options; these tests hold them to it on every example under every target, and pin the
observations that led here (validate ignoring the project's target, the library ignoring the
project file and its policy).
"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import trainspec
from trainspec.cli.main import main
from trainspec.compiler.pipeline import DISCOVER, PASSES, Options, Stop, run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

_SPECIAL = {"invalid", "python", "templated", "train_ddp", "cluster", "diff", "kfp"}
#: (inputs, extra arguments) for every example a user can compile (found, so a new one is covered),
#: and every invalid example.
CASES = [
    *[
        ([f"examples/{p.name}"], [])
        for p in sorted(EXAMPLES.iterdir())
        if not p.name.startswith(".") and p.name not in _SPECIAL and (p.is_dir() or p.suffix in (".yaml", ".py"))
    ],
    (["examples/python/ddp_cpu.py"], []),
    (["examples/templated/job.yaml"], ["--values", "examples/templated/envs/prod.yaml"]),
    (["examples/templated/job.yaml"], []),  # no values: TS307 everywhere
    *[
        ([f"examples/invalid/{p.name}"], [])
        for p in sorted((EXAMPLES / "invalid").iterdir())
        if p.suffix in (".yaml", ".py")
    ],
]
TARGETS = [
    "trainer=2.3,kueue=0.19",
    "trainer=2.2,kueue=0.17",
    "trainer=2.1,kueue=0.16",
    "trainer=2.3,kueue=none",
    "ray",
    "training-operator",
]


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def _keys(diagnostics: list[dict]) -> list[tuple]:
    return sorted(
        (d["code"], d["severity"], d["file"], d["line"], d["column"], d["path"], d["message"]) for d in diagnostics
    )


def _lib_keys(diagnostics: list) -> list[tuple]:
    return sorted((d.code, d.severity.value, d.file, d.line, d.column, d.path, d.message) for d in diagnostics)


def _json_diagnostics(text: str) -> list[dict]:
    return json.loads(text)["diagnostics"] if text.strip() else []


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_the_passes_are_one_ordered_list() -> None:
    assert [p.name for p in PASSES] == ["load", "project", "resolve", "plan", "rules", "lower", "emit"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("inputs", "extra"), CASES, ids=lambda v: v[0] if isinstance(v, list) and v else None)
def test_validate_compile_check_and_library_agree(inputs: list[str], extra: list[str], target: str) -> None:
    common = [*inputs, *extra, "--no-project", "--target", target, "--format", "json"]
    v_status, v_out, _ = _cli("validate", *common)
    c_status, _, c_err = _cli("compile", *common, "-o", "-")
    _k_status, k_out, _ = _cli("check", *common)
    validated = _keys(_json_diagnostics(v_out))
    compiled = _keys(_json_diagnostics(c_err))
    checked = _keys(_json_diagnostics(k_out))
    assert validated == compiled, "validate and compile disagree"
    assert set(validated) <= set(checked), "check lost a diagnostic validate reports"
    assert v_status == c_status, "validate and compile disagree on the exit status"
    values = tuple(extra[1::2]) if extra else ()
    library = trainspec.validate(*inputs, project=None, values_files=values, target=target)
    assert _lib_keys(library) == validated, "the library disagrees with the CLI"
    assert (
        _lib_keys(trainspec.compile(*inputs, project=None, values_files=values, target=target).diagnostics) == validated
    )


JAX_JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {name: jax-gpu}
spec: {framework: jax, image: registry.example.com/jax:1, resourcesPerNode: {gpu: 4}}
---
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {name: jax-pretrain, namespace: ml}
spec: {runtime: jax-gpu, nodes: 2, command: [python, train.py], queue: ml}
"""


def _project(tmp_path: Path, body: str) -> Path:
    (tmp_path / ".git").mkdir()  # discovery stops at the repository root
    (tmp_path / "trainspec.yaml").write_text("apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec:\n" + body)
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "job.yaml").write_text(JAX_JOB)
    return specs


def test_validate_reads_the_project_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Trainer 2.1 project: validate said 0 errors where compile said TS521."""
    specs = _project(tmp_path, "  target: {trainer: '2.1', kueue: '0.16'}\n")
    monkeypatch.chdir(tmp_path)
    v_status, v_out, _ = _cli("validate", str(specs), "--format", "json")
    c_status, _, c_err = _cli("compile", str(specs), "-o", "-", "--format", "json")
    assert v_status == c_status == 1
    assert "TS521" in {d["code"] for d in _json_diagnostics(v_out)}
    assert _keys(_json_diagnostics(v_out)) == _keys(_json_diagnostics(c_err))


def test_validate_accepts_target(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JAX_JOB)
    status, out, err = _cli("validate", str(tmp_path), "--no-project", "--target", "trainer=2.1,kueue=0.16")
    assert status == 1 and "TS521" in out, err
    assert _cli("validate", str(tmp_path), "--no-project", "--target", "trainer=2.3")[0] == 0


def test_library_reads_the_project_file_and_its_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``trainspec.validate()`` said ok where the CLI said TS601."""
    specs = _project(tmp_path, "  policy: {requireMaxRunTime: true, maxGpusPerJob: 1}\n")
    monkeypatch.chdir(tmp_path)
    status, out, _ = _cli("validate", str(specs), "--format", "json")
    cli_codes = {d["code"] for d in _json_diagnostics(out)}
    library = trainspec.validate(str(specs))
    assert status == 1 and {d.code for d in library} == cli_codes and "TS602" in cli_codes
    assert not trainspec.compile(str(specs)).ok
    # ... and no project when asked for none, or a project given as a path from elsewhere.
    assert trainspec.validate(str(specs), project=None) == []
    monkeypatch.chdir(ROOT)
    assert {d.code for d in trainspec.validate(str(specs), project=str(tmp_path / "trainspec.yaml"))} == cli_codes


def test_discovery_starts_where_asked(tmp_path: Path) -> None:
    specs = _project(tmp_path, "  target: {trainer: '2.1', kueue: '0.16'}\n")
    result = run([str(specs)], Options(project=DISCOVER, cwd=str(tmp_path), stop=Stop.CHECK))
    assert result.project_spec is not None and result.target is not None and result.target.trainer == (2, 1)


@pytest.mark.parametrize("stop", list(Stop))
def test_stop_says_how_far_a_run_goes(stop: Stop) -> None:
    result = run(["examples/ddp-cpu.yaml"], Options(project=None, stop=stop))
    names = [p.name for p in PASSES]
    assert list(result.passes) == names[: names.index(stop.value) + 1]
    assert bool(result.outputs) == (stop in (Stop.LOWER, Stop.EMIT))
    assert bool(result.files_text) == (stop is Stop.EMIT)


def test_errors_stop_before_lowering() -> None:
    result = run(["examples/invalid/TS305-unknown-runtime.yaml"], Options(project=None, stop=Stop.EMIT))
    assert "lower" not in result.passes and not result.outputs and not result.ok


def test_to_yaml_is_the_compile_stream() -> None:
    status, out, _ = _cli("compile", "examples/ddp-cpu.yaml", "--no-project", "-o", "-")
    assert status == 0
    assert trainspec.compile("examples/ddp-cpu.yaml", project=None).to_yaml() == out


def test_library_target_option_is_refused_when_malformed() -> None:
    with pytest.raises(ValueError, match="'two' is not a version"):
        trainspec.compile("examples/ddp-cpu.yaml", target="trainer=two")


def test_no_project_environment_leaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Running from another directory finds that directory's project, not ours."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    result = trainspec.compile(str(ROOT / "examples/ddp-cpu.yaml"))
    assert result.project_spec is None and result.ok
    assert os.getcwd() == str(tmp_path)


CREDENTIAL = "AKIAIOSFODNN7EXAMPLE"


def test_python_spec_modules_get_the_single_spec_checks(tmp_path: Path) -> None:
    """A credential in a Python spec's env validated clean: only YAML specs ran TS302-TS304."""
    module = tmp_path / "leak.py"
    module.write_text(
        "from trainspec import TrainingJob\n"
        "job = TrainingJob(name='leak', namespace='ml', runtime='trainspec-torch',\n"
        f"                  env={{'AWS_ACCESS_KEY_ID': '{CREDENTIAL}'}})\n"
    )
    status, out, _ = _cli("validate", str(module), "--no-project", "--format", "json")
    assert status == 1 and "TS304" in {d["code"] for d in _json_diagnostics(out)}


def test_objects_handed_to_the_library_get_the_single_spec_checks() -> None:
    job = trainspec.TrainingJob(
        name="leak", namespace="ml", runtime="trainspec-torch", env={"AWS_ACCESS_KEY_ID": CREDENTIAL}
    )
    assert "TS304" in {d.code for d in trainspec.validate(job, project=None)}
    assert not trainspec.compile(job, project=None).ok


def test_trainer_21_refuses_a_job_on_the_clusters_jax_runtime(tmp_path: Path) -> None:
    """Kubeflow Trainer's own jax-distributed needs 2.2+ too; only trainspec's built-ins were flagged."""
    (tmp_path / "job.yaml").write_text(
        "apiVersion: trainspec.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: jx, namespace: ml}\n"
        "spec: {runtime: jax-distributed, command: [python, t.py], queue: ml}\n"
    )
    status, out, _ = _cli(
        "validate", str(tmp_path), "--no-project", "--target", "trainer=2.1,kueue=0.16", "--format", "json"
    )
    assert status == 1 and "TS521" in {d["code"] for d in _json_diagnostics(out)}


@pytest.mark.parametrize("key", ["apiVesion", None, "trainspec.dv/v1alpha1", "trainer.kubeflow.org/v1alpha1"])
def test_a_misspelled_api_version_never_deletes_the_job_or_its_checkpoints(tmp_path: Path, key: str | None) -> None:
    """The observed data loss, end to end: a typo made the job vanish and compile prune its PVC."""
    specs = tmp_path / "specs"
    specs.mkdir()
    job = (EXAMPLES / "llama-sft" / "job.yaml").read_text()
    (specs / "runtime.yaml").write_text((EXAMPLES / "llama-sft" / "runtime.yaml").read_text())
    (specs / "job.yaml").write_text(job)
    out = tmp_path / "deploy"
    assert _cli("compile", str(specs), "--no-project", "-o", str(out))[0] == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert any(b"kind: PersistentVolumeClaim" in data for data in before.values())
    first = "apiVersion: trainspec.dev/v1alpha1\n"
    assert first in job
    broken = {
        "apiVesion": job.replace(first, "apiVesion: trainspec.dev/v1alpha1\n"),
        None: job.replace(first, ""),
    }.get(key, job.replace(first, f"apiVersion: {key}\n"))
    (specs / "job.yaml").write_text(broken)
    for command in (
        ["validate"],
        ["compile", "-o", str(out)],
        ["compile", "-o", "-"],
        ["check"],
        ["explain"],
        ["compile", "-o", str(out), "--check"],
    ):
        status, stdout, stderr = _cli(*command, str(specs), "--no-project")
        assert status == 1, (command, stdout, stderr)
        assert "TS11" in stdout + stderr, (command, stdout, stderr)  # TS110/TS111/TS114: located, did-you-mean
    status, stdout, stderr = _cli("kfp", str(specs), "--no-project", "-o", str(tmp_path / "p.yaml"))
    assert status == 1 and "TS11" in stdout + stderr
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_the_plan_says_which_engine_each_job_runs_on() -> None:
    ray = run(["examples/ray-train"], Options(project=None))
    assert ray.ok and {p.engine for p in ray.plans} == {"ray"}
    forced = run(["examples/ddp-cpu.yaml"], Options(project=None, target={"engine": "ray"}))
    assert {p.engine for p in forced.plans} == {"ray"}
    assert {p.engine for p in run(["examples/ddp-cpu.yaml"], Options(project=None)).plans} == {"trainer"}


def test_explain_names_the_engine_and_its_restart_field() -> None:
    status, out, _ = _cli("explain", "examples/ray-train", "--no-project", "--format", "json")
    assert status == 0
    (job,) = json.loads(out)["jobs"]
    assert job["engine"] == "ray"
    status, text, _ = _cli("explain", "examples/ray-train", "--no-project")
    assert "engine ray" in text


def test_kfp_launches_a_job_of_every_engine(tmp_path: Path) -> None:
    """The launcher applies and watches RayJobs and Training Operator jobs too (tests/kfp/test_kfp_engines.py
    runs them); the command reaches the same pipeline as for a TrainJob."""
    image = ("--image", "registry.example.com/trainspec-launcher:0.1.0")
    for example in ("examples/ray-train", "examples/elastic-pytorchjob.yaml"):
        status, _out, err = _cli("kfp", example, "--no-project", *image, "-o", str(tmp_path / "p.yaml"))
        assert status == 0, err
        assert "pip install" not in (tmp_path / "p.yaml").read_text()
