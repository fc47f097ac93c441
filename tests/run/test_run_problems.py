"""What ``run --local`` refuses, always as a located diagnostic (never a traceback), and the pure
helpers it is built on: env files, path mapping, GPU detection and slicing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from run_testlib import PRINTENV, ROOT, RUNTIME, by_prefix, clean_env, env_lines, trainspec

from trainspec.run import gpus as G
from trainspec.run.environment import base_environment, map_path
from trainspec.run.secrets import read_env_file


def _job(name: str, *, command: list[str] | None = PRINTENV, extra: str = "") -> str:
    command_line = f"  command: {json.dumps(command)}\n" if command is not None else ""
    return f"""---
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata: {{name: {name}, namespace: team-a}}
spec:
  runtime: rt
{command_line}{extra}"""


def _write(tmp_path: Path, *jobs: str, framework: str = "torch", runtime_extra: str = "") -> Path:
    spec = tmp_path / "specs.yaml"
    spec.write_text(RUNTIME.format(name="rt", framework=framework) + runtime_extra + "".join(jobs))
    return spec


def _local(tmp_path: Path, spec: Path, *args: str, env: dict[str, str] | None = None):
    return trainspec(
        "run", "--local", str(spec), "--no-project", "--workdir", str(tmp_path / "work"), *args, cwd=tmp_path, env=env
    )


def test_several_jobs_need_job_and_an_unknown_name_is_named(tmp_path: Path) -> None:
    spec = _write(tmp_path, _job("one"), _job("two"))
    done = _local(tmp_path, spec)
    assert done.returncode == 1
    assert "<command line>: error[TS703]: --job: the inputs hold 2 jobs (team-a/one, team-a/two)" in done.stderr
    assert "hint: pick one with --job NAME" in done.stderr
    done = _local(tmp_path, spec, "--job", "three")
    assert done.returncode == 1 and "no job named 'three' among the inputs" in done.stderr
    done = _local(tmp_path, spec, "--job", "two")
    assert done.returncode == 0, done.stderr
    assert list(by_prefix(done.stdout)) == ["node 0"]


def test_other_engines_are_refused_clearly(tmp_path: Path) -> None:
    spec = _write(tmp_path, _job("rayjob"))
    done = _local(tmp_path, spec, "--target", "ray")
    assert done.returncode == 1, done.stderr
    assert "error[TS700]: spec.runtime: job rayjob runs on engine ray" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_pvc_source_needs_a_local_data_source(tmp_path: Path) -> None:
    spec = _write(tmp_path, _job("sharded", extra="  data: {source: pvc://datasets/x, format: jsonl}\n"))
    done = _local(tmp_path, spec)
    assert done.returncode == 1
    assert "error[TS704]: spec.data.source: data source pvc://datasets/x" in done.stderr
    assert "--data-source" in done.stderr


def test_a_command_not_on_this_machine_is_located(tmp_path: Path) -> None:
    spec = _write(tmp_path, _job("nocmd", command=["no-such-program-here", "x"]))
    done = _local(tmp_path, spec)
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if "TS706" in line]
    assert (
        lines
        and lines[0].startswith("specs.yaml:16:3: error[TS706]")
        and "spec.command: 'no-such-program-here'" in lines[0]
    )


def test_a_job_without_a_command_is_refused(tmp_path: Path) -> None:
    spec = _write(tmp_path, _job("entrypoint", command=None))
    done = _local(tmp_path, spec)
    assert done.returncode == 1
    assert "error[TS706]: spec.command: job entrypoint sets no command" in done.stderr


def test_specs_that_do_not_compile_report_as_validate_does(tmp_path: Path) -> None:
    spec = _write(tmp_path, _job("bad", extra="  nodes: 0\n"))
    done = _local(tmp_path, spec)
    assert done.returncode == 1
    assert "error[TS203]" in done.stderr and "Traceback" not in done.stderr


def test_run_without_local_is_a_usage_error(tmp_path: Path) -> None:
    spec = _write(tmp_path, _job("one"))
    done = trainspec("run", str(spec), cwd=tmp_path)
    assert done.returncode == 2
    assert "only --local runs" in done.stderr
    done = trainspec("run", "--local", str(spec), "--nodes", "0", cwd=tmp_path)
    assert done.returncode == 2 and "is not a count >= 1" in done.stderr


def test_gpus_are_sliced_per_node_from_nvidia_smi(tmp_path: Path) -> None:
    # A stand-in nvidia-smi: this machine has none, the slicing logic is the same.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\n" + "".join(f"echo 'GPU {i}: Fake H100 (UUID: GPU-{i})'\n" for i in range(4)))
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    spec = _write(tmp_path, _job("gpus", extra="  nodes: 2\n  resourcesPerNode: {gpu: 2}\n"))
    env = clean_env()
    env.pop(G.VISIBLE_DEVICES, None)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    done = _local(tmp_path, spec, env=env)
    assert done.returncode == 0, done.stderr
    out = by_prefix(done.stdout)
    seen = {label: env_lines(lines)[G.VISIBLE_DEVICES] for label, lines in out.items()}
    assert seen == {"node 0 ranks 0-1": "0,1", "node 1 ranks 2-3": "2,3"}
    done = _local(tmp_path, spec, "--nodes", "3", env=env)
    assert done.returncode == 1
    assert "error[TS705]" in done.stderr and "need 6 GPUs; this machine has 4" in done.stderr


def test_a_gpu_job_on_a_machine_without_gpus_warns_and_runs(tmp_path: Path) -> None:
    spec = _write(tmp_path, _job("nogpu", extra="  resourcesPerNode: {gpu: 1}\n"))
    done = _local(tmp_path, spec, env=clean_env(CUDA_VISIBLE_DEVICES=""))
    assert done.returncode == 0, done.stderr
    assert "warning[TS705]" in done.stderr
    assert G.VISIBLE_DEVICES not in env_lines(by_prefix(done.stdout)["node 0"])


# -- the helpers ------------------------------------------------------------------------------


def test_slices_and_visible_device_parsing() -> None:
    assert G.slices(["0", "1", "2", "3"], 2, 2) == ["0,1", "2,3"]
    assert G.slices(["GPU-a", "GPU-b"], 2, 1) == ["GPU-a", "GPU-b"]
    assert G.slices(["0", "1"], 3, 1) is None
    assert G.slices(["0"], 2, 0) == ["", ""]  # a job without GPUs sees none of the machine's
    assert G.slices([], 2, 0) == []
    assert G.parse_visible("0, 2,3") == ["0", "2", "3"]
    assert G.parse_visible("") == [] and G.parse_visible("1,-1,2") == ["1"]
    assert G.parse_smi("GPU 0: A (UUID: x)\nGPU 1: B (UUID: y)\nnoise\n") == ["0", "1"]


def test_detect_prefers_cuda_visible_devices_and_survives_a_broken_nvidia_smi() -> None:
    assert G.detect({G.VISIBLE_DEVICES: "3,5"}, which=lambda _: "/bin/false") == ["3", "5"]
    assert G.detect({}, which=lambda _: None) == []

    def broken(*_args, **_kwargs):
        raise OSError("exec format error")

    assert G.detect({}, run=broken, which=lambda _: "/usr/bin/nvidia-smi") == []
    failed = subprocess.CompletedProcess([], 9, stdout="GPU 0: x", stderr="")
    assert G.detect({}, run=lambda *a, **k: failed, which=lambda _: "nvidia-smi") == []


def test_env_file_forms(tmp_path: Path) -> None:
    path = tmp_path / "a.env"
    path.write_text("# comment\n\nA=1\nexport B = 'two words'\nC=\"x=y\"\nD=\n")
    values, problems = read_env_file(str(path))
    assert problems == [] and values == {"A": "1", "B": "two words", "C": "x=y", "D": ""}
    path.write_bytes(b"\xff\xfe")
    assert read_env_file(str(path))[1][0].code == "TS702"
    assert read_env_file(str(tmp_path / "missing.env"))[1][0].code == "TS702"


def test_map_path_picks_the_longest_mount() -> None:
    homes = {"/workspace": Path("/w/ws"), "/workspace/dataset": Path("/w/ds"), "/": Path("/nope")}
    homes.pop("/")
    assert map_path("/workspace/dataset/x", homes) == "/w/ds/x"
    assert map_path("/workspace/out", homes) == "/w/ws/out"
    assert map_path("/workspace", homes) == "/w/ws"
    assert map_path("/workspacefoo", homes) == "/workspacefoo"
    assert map_path("/checkpoints", homes) == "/checkpoints"


def test_base_environment_drops_what_a_pod_never_inherits() -> None:
    base = base_environment(
        {
            "PATH": "/bin",
            "PET_NNODES": "9",
            "TRAINSPEC_CHECKPOINT_DIR": "/x",
            "RANK": "3",
            "JAX_PLATFORMS": "cpu",
            "HOME": "/root",
        }
    )
    assert base == {"PATH": "/bin", "JAX_PLATFORMS": "cpu", "HOME": "/root"}


def test_validate_and_compile_never_import_the_run_package(tmp_path: Path) -> None:
    code = f"""
import contextlib, io, json, sys
import trainspec.cli.main as cli
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    codes = [cli.main(["validate", "examples"]), cli.main(["compile", "examples", "-o", {str(tmp_path / "out")!r}])]
print(json.dumps({{"codes": codes, "loaded": sorted(m for m in sys.modules if m in ("trainspec.run", "trainspec.cli.run")
                                   or m.startswith("trainspec.run."))}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, check=False, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["loaded"] == []


@pytest.mark.parametrize("words", [["run", "--help"], ["--help"]])
def test_help_lists_the_command_and_its_options(tmp_path: Path, words: list[str]) -> None:
    done = trainspec(*words, cwd=tmp_path)
    assert done.returncode == 0
    for text in ["--local", "--env-file", "--workdir", "--procs-per-node"] if words[0] == "run" else ["run"]:
        assert text in done.stdout
