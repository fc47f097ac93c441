"""The pre-commit hooks, run the way pre-commit runs them: entry + args in the repository; and by the
real pre-commit, offline: the README's snippet as written in a fresh Git repository, and
``pre-commit try-repo`` on a copy of this repository (``.pre-commit-hooks.yaml``, language python)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLES, ROOT
from tests.wheelhouse import build_wheelhouse

HOOKS = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
BIN = Path(sys.executable).parent
TRAINSPEC = shutil.which("trainspec", path=str(BIN))
PRE_COMMIT = shutil.which("pre-commit", path=str(BIN))
#: What a hook repository needs for ``pip install .`` (what pre-commit runs for language: python).
HOOK_REPO_FILES = ("pyproject.toml", "README.md", "MANIFEST.in", ".pre-commit-hooks.yaml")


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


# -- the real pre-commit ----------------------------------------------------------------------------


def readme_snippet() -> str:
    """The ``.pre-commit-config.yaml`` of the README's pre-commit section, as written there."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n### pre-commit\n", 1)[1]
    match = re.search(r"^```yaml\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert match, "the README's pre-commit section shows a .pre-commit-config.yaml"
    return match.group(1)


#: Who commits in the tests' throwaway repositories (a machine may have no git identity configured).
IDENTITY = ("-c", "user.name=trainspec tests", "-c", "user.email=tests@trainspec.invalid")


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *IDENTITY, *args], cwd=repo, check=True, capture_output=True, timeout=60)


def pre_commit_env(tmp: Path, *, path_with_trainspec: bool) -> dict[str, str]:
    """No network and nothing of this machine's configuration: pip sees ``tmp/house`` alone."""
    drop = ("PIP_", "TRAINSPEC_", "PRE_COMMIT", "VIRTUALENV_", "GIT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and k not in ("PYTHONPATH", "PATH")}
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != BIN]
    env["PATH"] = os.pathsep.join([str(BIN), *path] if path_with_trainspec else path)
    env.update(PRE_COMMIT_HOME=str(tmp / "pre-commit-home"), VIRTUALENV_OVERRIDE_APP_DATA=str(tmp / "venv-data"))
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(tmp / "house"), PIP_CONFIG_FILE=os.devnull)
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return env


def run_pre_commit(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    assert PRE_COMMIT, "pre-commit is in the test extra"
    return subprocess.run(
        [PRE_COMMIT, *args, "--color", "never"],
        cwd=repo,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )


def git_repo_with_specs(repo: Path) -> None:
    """``repo`` (the fixture's specs/) compiled and committed, as a user's repository is."""
    subprocess.run(
        [TRAINSPEC, "compile", "specs/", "-o", "deploy/"], cwd=repo, check=True, capture_output=True, timeout=120
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "specs")


def test_the_readme_snippet_is_the_hooks_of_this_repository_run_locally() -> None:
    """Same ids, commands, arguments and file patterns as .pre-commit-hooks.yaml: only where the
    trainspec they run comes from differs (the one installed, not one pre-commit installs)."""
    (local,) = yaml.safe_load(readme_snippet())["repos"]
    assert local["repo"] == "local"
    for hook in local["hooks"]:
        assert hook.pop("language") == "system"
        assert hook == {k: v for k, v in HOOKS[hook["id"]].items() if k not in ("language", "description")}
    assert [h["id"] for h in local["hooks"]] == ["trainspec-validate", "trainspec-compile-check"]


@pytest.mark.slow
def test_the_readme_snippet_works_as_written_in_a_fresh_git_repository(repo: Path, tmp_path: Path) -> None:
    (repo / ".pre-commit-config.yaml").write_text(readme_snippet(), encoding="utf-8")
    git_repo_with_specs(repo)
    env = pre_commit_env(tmp_path, path_with_trainspec=True)

    proc = run_pre_commit(repo, env, "run", "--all-files")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^trainspec validate\.+Passed$", proc.stdout, re.MULTILINE), proc.stdout
    assert re.search(r"^trainspec compile --check\.+Passed$", proc.stdout, re.MULTILINE), proc.stdout

    # Installed as the git hook, it refuses a commit of a broken spec, saying where.
    assert run_pre_commit(repo, env, "install").returncode == 0
    shutil.copy(EXAMPLES / "invalid" / "TS200-unknown-field.yaml", repo / "specs" / "typo.yaml")
    git(repo, "add", "-A")
    commit = subprocess.run(
        ["git", *IDENTITY, "commit", "-m", "typo"],
        cwd=repo,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert commit.returncode == 1, commit.stdout + commit.stderr
    out = commit.stdout + commit.stderr
    assert "specs/typo.yaml:9:3: error[TS200]: spec.procPerNode: unknown field 'procPerNode'" in out
    assert re.search(r"^trainspec validate\.+Failed$", out, re.MULTILINE), out


@pytest.mark.slow
def test_try_repo_installs_the_hooks_of_this_repository_and_runs_them(repo: Path, tmp_path: Path) -> None:
    """pre-commit clones a copy of this repository and pip-installs trainspec into an environment of
    its own (dependencies from a wheelhouse of this environment: offline), as a hosted rev would."""
    tomllib = pytest.importorskip("tomllib", reason="reads pyproject.toml with tomllib (Python 3.11+)")
    hooks_repo = tmp_path / "trainspec-repo"
    shutil.copytree(ROOT / "trainspec", hooks_repo / "trainspec", ignore=shutil.ignore_patterns("__pycache__"))
    for name in HOOK_REPO_FILES:
        shutil.copy2(ROOT / name, hooks_repo / name)
    git(hooks_repo, "init", "-q")
    git(hooks_repo, "add", "-A")
    git(hooks_repo, "commit", "-q", "-m", "trainspec")
    project = tomllib.loads((hooks_repo / "pyproject.toml").read_text(encoding="utf-8"))
    build_wheelhouse(tmp_path / "house", [*project["build-system"]["requires"], *project["project"]["dependencies"]])
    git_repo_with_specs(repo)
    env = pre_commit_env(tmp_path, path_with_trainspec=False)  # the hooks must run pre-commit's own install

    proc = run_pre_commit(repo, env, "try-repo", str(hooks_repo), "--all-files")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for hook in HOOKS.values():
        assert re.search(rf"^{re.escape(hook['name'])}\.+Passed$", proc.stdout, re.MULTILINE), proc.stdout

    shutil.copy(EXAMPLES / "invalid" / "TS200-unknown-field.yaml", repo / "specs" / "typo.yaml")
    git(repo, "add", "-A")
    proc = run_pre_commit(repo, env, "try-repo", str(hooks_repo), "trainspec-validate", "--all-files")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "specs/typo.yaml:9:3: error[TS200]: spec.procPerNode: unknown field 'procPerNode'" in proc.stdout
