"""``diff`` of repositories read a batch at a time (trainspec.diff.job_digests) reports what a whole diff does."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trainspec.compiler import streaming
from trainspec.diff import job_digests as diff_streamed

RunCli = Callable[..., tuple[int, str, str]]

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata:
  name: {name}
spec:
  framework: torch
  image: registry.example.com/base:{version}
  resourcesPerNode: {{gpu: 8}}
"""

JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata:
  name: {name}
  namespace: ml
spec:
  runtime: {runtime}
  image: registry.example.com/train:1
  command: [torchrun, train.py]
  nodes: {nodes}
  maxRunTime: 2h
  queue: ml
"""


def _side(root: Path, *, version: str = "1", nodes: dict[int, int] | None = None, drop: int = -1) -> Path:
    root.mkdir(parents=True)
    for name in ("a", "b"):
        (root / f"runtime-{name}.yaml").write_text(RUNTIME.format(name=name, version=version if name == "b" else "1"))
    for i in range(12):
        if i != drop:
            n = (nodes or {}).get(i, 2)
            (root / f"j{i:02d}.yaml").write_text(JOB.format(name=f"j{i:02d}", runtime="ab"[i % 2], nodes=n))
    return root


def _both(run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple:
    seen: list[tuple[list[str], list[str]]] = []
    real = diff_streamed.changed_files

    def spy(*args: Any) -> tuple[list[str], list[str]]:  # the subsets compiled again, to show batches were used
        found = real(*args)
        seen.append(found)
        return found

    monkeypatch.setattr(streaming, "BATCH_FILES", 3)
    monkeypatch.setattr(diff_streamed, "changed_files", spy)
    streamed = run_cli(*argv)
    assert seen, "the sides were not read in batches"
    monkeypatch.setattr(streaming, "BATCH_FILES", 10_000)  # one batch: each side is a whole run
    whole = run_cli(*argv)
    return streamed, whole, seen[0]


def test_changed_added_removed_and_runtime_jobs(
    run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _side(tmp_path / "old")
    new = _side(tmp_path / "new", version="2", nodes={4: 5}, drop=6)
    (new / "j99.yaml").write_text(JOB.format(name="j99", runtime="a", nodes=1))
    monkeypatch.chdir(tmp_path)
    streamed, whole, (old_files, new_files) = _both(run_cli, monkeypatch, "diff", "old", "new")
    assert streamed == whole and streamed[0] == 1
    out = streamed[1]
    assert "runtime b:" in out and "job ml/j04:" in out and "job ml/j06:" in out and "job ml/j99:" in out
    # only the changed jobs, those on the changed runtime and the runtimes were compiled again
    assert "old/j02.yaml" not in old_files and "new/j02.yaml" not in new_files
    assert "old/j06.yaml" in old_files and "new/j99.yaml" in new_files and "new/j05.yaml" in new_files


def test_no_change_compiles_nothing_again(run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _side(tmp_path / "old"), _side(tmp_path / "new")
    monkeypatch.chdir(tmp_path)
    streamed, whole, (old_files, new_files) = _both(run_cli, monkeypatch, "diff", "old", "new")
    assert streamed == whole and streamed[0] == 0
    assert all("/j" not in f for f in [*old_files, *new_files])  # the runtimes only


def test_git_sides(run_cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _side(tmp_path / "repo")
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    (root / "j03.yaml").write_text(JOB.format(name="j03", runtime="b", nodes=7))
    monkeypatch.chdir(root)
    streamed, whole, _ = _both(run_cli, monkeypatch, "diff", "--git", "HEAD", "--no-project")
    assert streamed == whole and streamed[0] == 1 and "job ml/j03:" in streamed[1]
