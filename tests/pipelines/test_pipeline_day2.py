"""Day 2 for a Pipeline in a real Git repository: two pull requests edit the example pipeline (one
raises a parameter's default, the other adds a step), both are merged with real ``git merge``, and
the merged specs validate, keep the compiled GitOps tree as it was (a pipeline's jobs are never
written there: only its runtimes), diff as the two changes, and compile to KFP IR holding both."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pipeline"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

NOTIFY = """\
    - name: notify
      after: [register]
      container:
        image: registry.example.com/ml-dev/notify:0.1.0
        command: [python, notify.py]
        args: [--model, "$(steps.register.outputs.model)"]
"""


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "trainspec tests",
        "GIT_AUTHOR_EMAIL": "tests@trainspec.invalid",
        "GIT_COMMITTER_NAME": "trainspec tests",
        "GIT_COMMITTER_EMAIL": "tests@trainspec.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo),
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _trainspec(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAINSPEC_")}
    return subprocess.run(
        [sys.executable, "-m", "trainspec", *args, "--no-project"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def _edit(repo: Path, old: str, new: str) -> None:
    spec = repo / "specs" / "pipeline.yaml"
    text = spec.read_text(encoding="utf-8")
    assert old in text
    spec.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_two_merged_pipeline_edits_keep_the_tree_and_reach_kfp(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "specs").mkdir(parents=True)
    shutil.copy(EXAMPLE / "pipeline.yaml", repo / "specs" / "pipeline.yaml")
    _git(repo, "init", "-q", "-b", "main")
    built = _trainspec(repo, "compile", "specs", "-o", "deploy")
    assert built.returncode == 0, built.stderr
    tree = {p.relative_to(repo): p.read_bytes() for p in (repo / "deploy").rglob("*") if p.is_file()}
    assert not any("finetune-train" in str(p) for p in tree), "a pipeline's jobs are not GitOps objects"
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "pipeline")

    _git(repo, "checkout", "-q", "-b", "more-epochs")
    _edit(repo, "    epochs: {type: int, default: 3}\n", "    epochs: {type: int, default: 5}\n")
    _git(repo, "commit", "-q", "-am", "train longer")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "checkout", "-q", "-b", "notify")
    spec = repo / "specs" / "pipeline.yaml"
    spec.write_text(spec.read_text(encoding="utf-8") + NOTIFY, encoding="utf-8")
    _git(repo, "commit", "-q", "-am", "notify when registered")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--no-edit", "more-epochs")
    _git(repo, "merge", "-q", "--no-edit", "notify")

    assert _trainspec(repo, "validate", "specs").returncode == 0
    # The tree holds the runtimes only, which neither change touched: it is up to date as committed.
    checked = _trainspec(repo, "compile", "specs", "-o", "deploy", "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert {p.relative_to(repo): p.read_bytes() for p in (repo / "deploy").rglob("*") if p.is_file()} == tree

    # diff names both changes, against the commit before the merges.
    before = tmp_path / "before"
    before.mkdir()
    (before / "pipeline.yaml").write_text(_git(repo, "show", "HEAD~2:specs/pipeline.yaml"), encoding="utf-8")
    diffed = _trainspec(repo, "diff", str(before), "specs")
    assert "epochs" in diffed.stdout and "3 -> 5" in diffed.stdout, diffed.stdout + diffed.stderr
    assert "notify" in diffed.stdout, diffed.stdout

    pytest.importorskip("kfp", reason="the kfp extra is not installed: pip install 'trainspec[kfp]'")
    out = tmp_path / "pipeline.yaml"
    ir_run = _trainspec(
        repo, "kfp", "specs", "--image", "registry.example.com/trainspec-launcher:0.1.0", "-o", str(out)
    )
    assert ir_run.returncode == 0, ir_run.stderr
    ir = next(yaml.safe_load_all(out.read_text(encoding="utf-8")))
    assert ir["root"]["inputDefinitions"]["parameters"]["epochs"]["defaultValue"] == 5
    tasks = set(ir["root"]["dag"]["tasks"])
    for group in ir["components"].values():
        tasks |= set((group.get("dag") or {}).get("tasks") or {})
    assert {"prep", "train", "evaluate", "register", "notify"} <= tasks
