"""``trainspec diff --git REF [PATH...]`` against a real temporary git repository."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

PAIR = Path(__file__).resolve().parents[2] / "examples" / "diff"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose one commit holds examples/diff/old under specs/; the work tree holds new/."""
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "config", "user.email", "ci@example.com")
    git(root, "config", "user.name", "ci")
    git(root, "config", "commit.gpgsign", "false")
    for path in (PAIR / "old").glob("*.yaml"):
        shutil.copy(path, root / "specs" / path.name)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "old specs")
    git(root, "tag", "base")
    for path in (PAIR / "new").glob("*.yaml"):
        shutil.copy(path, root / "specs" / path.name)
    monkeypatch.chdir(root)
    return root


def test_git_ref_against_the_work_tree_gives_the_directory_report(run_cli, repo: Path) -> None:
    code, by_git, err = run_cli("diff", "--git", "HEAD", "specs", "--no-project")
    assert code == 1, err
    code, by_dirs, _ = run_cli("diff", str(PAIR / "old"), str(PAIR / "new"), "--no-project")
    assert by_git == by_dirs
    assert "nodes 8 -> 16 (+64 GPUs)" in by_git


def test_default_path_is_the_current_directory(run_cli, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, whole, _ = run_cli("diff", "--git", "base", "--no-project")
    assert code == 1
    monkeypatch.chdir(repo / "specs")
    code, inside, _ = run_cli("diff", "--git", "base", "--no-project")
    assert code == 1 and inside == whole


def test_unchanged_work_tree_exits_0(run_cli, repo: Path) -> None:
    git(repo, "checkout", "-q", "--", "specs")
    code, out, _ = run_cli("diff", "--git", "HEAD", "specs", "--no-project")
    assert (code, out) == (0, "no changes\n")


def test_a_path_new_since_the_ref_shows_its_jobs_as_added(run_cli, repo: Path) -> None:
    (repo / "more").mkdir()
    shutil.copy(PAIR / "new" / "ddp-cpu.yaml", repo / "more" / "ddp-cpu.yaml")
    code, out, err = run_cli("diff", "--git", "HEAD", "more", "--no-project")
    assert code == 1, err
    added = "  job added: 2 nodes, no GPUs, runtime trainspec-torch, queue ml-dev"
    assert out.splitlines()[:2] == ["job ml-dev/ddp-cpu:", added]


def test_unknown_ref_exits_2(run_cli, repo: Path) -> None:
    code, out, err = run_cli("diff", "--git", "no-such-ref", "specs")
    assert (code, out) == (2, "")
    assert "unknown git ref 'no-such-ref'" in err


def test_not_a_repository_exits_2(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plain").mkdir()
    monkeypatch.chdir(tmp_path / "plain")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    code, _, err = run_cli("diff", "--git", "HEAD")
    assert code == 2 and "not in a git repository" in err


def test_old_side_errors_are_named_by_ref_and_path(run_cli, repo: Path) -> None:
    broken = (repo / "specs" / "ddp-cpu.yaml").read_text().replace("runtime: trainspec-torch", "runtime: nope")
    (repo / "specs" / "ddp-cpu.yaml").write_text(broken)
    git(repo, "commit", "-q", "-am", "break it")
    (repo / "specs" / "ddp-cpu.yaml").write_text((PAIR / "new" / "ddp-cpu.yaml").read_text())
    code, out, err = run_cli("diff", "--git", "HEAD", "specs", "--no-project")
    assert code == 2 and out == ""
    assert "HEAD:specs/ddp-cpu.yaml:" in err and "error[TS305]" in err


def test_the_old_project_file_is_read_at_the_ref(run_cli, repo: Path) -> None:
    project = repo / "trainspec.yaml"
    project.write_text("apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec: {defaults: {priority: low}}\n")
    git(repo, "add", "trainspec.yaml")
    git(repo, "commit", "-q", "-m", "project")
    git(repo, "checkout", "-q", "--", "specs")
    project.write_text("apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec: {defaults: {priority: urgent}}\n")
    code, out, err = run_cli("diff", "--git", "HEAD", "specs")
    assert code == 1, err
    # ddp-cpu sets no priority: it follows the project default; llama-sft sets its own.
    assert out == "job ml-dev/ddp-cpu:\n  priority low -> urgent\n1 change in 1 job\n"
