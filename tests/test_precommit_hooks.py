"""The pre-commit hooks, run the way pre-commit runs them: entry + args in the repository."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLES, ROOT

HOOKS = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
TRAINSPEC = shutil.which("trainspec", path=str(Path(sys.executable).parent))


def run_hook(hook_id: str, repo: Path, args: list[str] | None = None) -> subprocess.CompletedProcess:
    hook = HOOKS[hook_id]
    entry = shlex.split(hook["entry"])
    assert entry[0] == "trainspec" and TRAINSPEC, "the console script is installed with the package"
    command = [TRAINSPEC, *entry[1:], *(hook.get("args", []) if args is None else args)]
    return subprocess.run(command, cwd=repo, check=False, capture_output=True, text=True, timeout=120)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A user's GitOps repository: specs/ and, after a compile, deploy/."""
    shutil.copytree(EXAMPLES / "llama-sft", tmp_path / "specs" / "llama-sft")
    shutil.copy(EXAMPLES / "ddp-cpu.yaml", tmp_path / "specs" / "ddp-cpu.yaml")
    return tmp_path


PYTHON_SPEC = (
    "from pathlib import Path\n\n"
    "from trainspec import Resources, TrainingJob\n\n"
    "Path(__file__).with_name('ran.marker').write_text('ran')\n"
    "job = TrainingJob(name='py-job', namespace='ml-dev', runtime='trainspec-torch', image='example.com/t:1',\n"
    "                  nodes=1, resources_per_node=Resources(cpu=1, memory='1Gi'), queue='ml-dev')\n"
)


def test_hooks_are_declared_for_whole_folders() -> None:
    assert set(HOOKS) == {
        "trainspec-validate",
        "trainspec-compile-check",
        "trainspec-validate-python",
        "trainspec-compile-check-python",
    }
    for hook in HOOKS.values():
        assert hook["language"] == "python" and hook["pass_filenames"] is False


def test_the_default_hooks_run_no_python_whatever_args_a_repository_gives() -> None:
    for hook_id in ("trainspec-validate", "trainspec-compile-check"):
        assert "--no-python" in shlex.split(HOOKS[hook_id]["entry"])  # in the entry: custom args keep it
    for hook_id in ("trainspec-validate-python", "trainspec-compile-check-python"):
        assert "--no-python" not in shlex.split(HOOKS[hook_id]["entry"]) + HOOKS[hook_id]["args"]
        base = HOOKS[hook_id.removesuffix("-python")]
        assert HOOKS[hook_id]["args"] == base["args"]
        assert shlex.split(HOOKS[hook_id]["entry"]) == [w for w in shlex.split(base["entry"]) if w != "--no-python"]


def test_a_python_spec_fails_the_default_hooks_without_running(repo: Path) -> None:
    (repo / "specs" / "py_job.py").write_text(PYTHON_SPEC)
    proc = run_hook("trainspec-validate", repo)
    assert proc.returncode == 1
    assert "specs/py_job.py:1:1: error[TS123]: Python spec module not run" in proc.stdout
    subprocess.run([TRAINSPEC, "compile", "specs/", "-o", "deploy/"], cwd=repo, check=True, capture_output=True)
    (repo / "specs" / "ran.marker").unlink()  # the compile above ran it: Python is allowed by default
    proc = run_hook("trainspec-compile-check", repo)
    assert proc.returncode == 1 and "error[TS123]" in proc.stderr
    assert not (repo / "specs" / "ran.marker").exists()


def test_the_python_hooks_run_python_specs(repo: Path) -> None:
    (repo / "specs" / "py_job.py").write_text(PYTHON_SPEC)
    proc = run_hook("trainspec-validate-python", repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (repo / "specs" / "ran.marker").exists()
    subprocess.run([TRAINSPEC, "compile", "specs/", "-o", "deploy/"], cwd=repo, check=True, capture_output=True)
    proc = run_hook("trainspec-compile-check-python", repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_validate_hook_passes_on_valid_specs(repo: Path) -> None:
    proc = run_hook("trainspec-validate", repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""  # --quiet: nothing to say


def test_validate_hook_fails_on_an_invalid_spec(repo: Path) -> None:
    shutil.copy(EXAMPLES / "invalid" / "TS200-unknown-field.yaml", repo / "specs" / "typo.yaml")
    proc = run_hook("trainspec-validate", repo)
    assert proc.returncode == 1
    assert "specs/typo.yaml:9:3: error[TS200]: spec.procPerNode: unknown field 'procPerNode'" in proc.stdout


def test_compile_check_hook_detects_stale_manifests(repo: Path) -> None:
    assert run_hook("trainspec-compile-check", repo).returncode == 1  # nothing compiled yet
    subprocess.run([TRAINSPEC, "compile", "specs/", "-o", "deploy/"], cwd=repo, check=True, capture_output=True)
    assert run_hook("trainspec-compile-check", repo).returncode == 0
    job = repo / "specs" / "llama-sft" / "job.yaml"
    job.write_text(job.read_text().replace("nodes: 8", "nodes: 4"))
    proc = run_hook("trainspec-compile-check", repo)
    assert proc.returncode == 1 and "team-nlp/llama-sft.yaml: stale" in proc.stderr
