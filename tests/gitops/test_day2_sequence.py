"""Day 2 in a real Git repository: a sequence of merged edits, compiled after each commit.

For every engine, a repo holds two jobs. Each step edits the specs as a platform team would
(nodes, image, args, deadline, queue, priority, data source, checkpoint keep, labels; rename a
job; delete one; re-run an unchanged one), commits, compiles ``specs/ -o deploy/`` and commits
the tree. After each step the test checks what the tree holds, what ``diff --git`` says, that
every object that exists before and after passes the offline update rules (what the API server
would say to the GitOps sync's update), and that no checkpoint claim leaves the cluster. Then
two pull requests that change different jobs (and add jobs) are merged with real ``git merge``:
no conflict, and the merged tree passes ``compile --check``.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from trainspec.check.day2 import identity
from trainspec.check.updates import update_problems
from trainspec.cli.main import main
from trainspec.compiler.runs import RUN_KINDS

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ENGINES = ("trainer", "ray", "training-operator")


def job(name: str, **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "runtime": "trainspec-torch",
        "image": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
        "command": ["torchrun", "/workspace/train.py"],
        "args": ["--epochs", "2"],
        "nodes": 2,
        "resourcesPerNode": {"cpu": 4, "memory": "8Gi"},
        "queue": "ml-dev",
        "maxRunTime": "1h",
        "checkpoint": {"size": "10Gi", "keep": 3, "storageClass": "standard"},
    }
    base.update(spec)
    return {
        "apiVersion": "trainspec.dev/v1alpha1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "namespace": "ml-dev", "labels": {"team": "nlp"}},
        "spec": base,
    }


class Repo:
    """A Git repository of specs and their compiled tree, driven as a user would."""

    def __init__(self, root: Path, engine: str, gitops: str | None) -> None:
        self.root, self.engine, self.gitops = root, engine, gitops
        (root / "specs").mkdir(parents=True)
        project: dict[str, Any] = {"defaults": {"stageImage": "registry.example.com/trainspec:0.1"}}
        if gitops:
            project["gitops"] = gitops  # the project's setting, as a repo keeps it (--gitops overrides it)
        document = {"apiVersion": "trainspec.dev/v1alpha1", "kind": "Project", "spec": project}
        (root / "trainspec.yaml").write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "trainspec tests",
            "GIT_AUTHOR_EMAIL": "tests@trainspec.invalid",
            "GIT_COMMITTER_NAME": "trainspec tests",
            "GIT_COMMITTER_EMAIL": "tests@trainspec.invalid",
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(self.root),
        }
        return subprocess.run(
            ["git", *args], cwd=self.root, env=env, capture_output=True, text=True, check=check, timeout=60
        )

    def spec(self, name: str) -> dict[str, Any]:
        return yaml.safe_load((self.root / "specs" / f"{name}.yaml").read_text(encoding="utf-8"))

    def write(self, doc: dict[str, Any]) -> None:
        path = self.root / "specs" / f"{doc['metadata']['name']}.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")

    def edit(self, name: str, change: Callable[[dict[str, Any]], None]) -> None:
        doc = self.spec(name)
        change(doc)
        self.write(doc)

    def remove(self, name: str) -> None:
        (self.root / "specs" / f"{name}.yaml").unlink()

    def trainspec(self, *args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(self.root)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(list(args))
        finally:
            os.chdir(cwd)
        return code, out.getvalue(), err.getvalue()

    def compile(self, *extra: str) -> tuple[int, str]:
        args = ["compile", "specs", "-o", "deploy", "--target", f"engine={self.engine}"]
        code, _, err = self.trainspec(*args, *extra)
        return code, err

    def diff(self) -> str:
        code, out, err = self.trainspec("diff", "--git", "HEAD", "specs", "--target", f"engine={self.engine}")
        assert code in (0, 1), err
        return out

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def tree(self) -> dict[str, bytes]:
        deploy = self.root / "deploy"
        return {p.relative_to(deploy).as_posix(): p.read_bytes() for p in sorted(deploy.rglob("*")) if p.is_file()}


def objects(tree: dict[str, bytes]) -> list[dict[str, Any]]:
    return [d for text in tree.values() for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def runs_by_job(tree: dict[str, bytes]) -> dict[str, str]:
    """``job name -> run object name``."""
    out = {}
    for obj in objects(tree):
        if obj["kind"] in RUN_KINDS:
            out[obj["metadata"]["labels"]["trainspec.dev/job"]] = obj["metadata"]["name"]
    return out


def claims(tree: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects(tree) if o["kind"] == "PersistentVolumeClaim"}


def assert_updates_accepted(before: dict[str, bytes], after: dict[str, bytes]) -> None:
    """Every object on both sides is an update the API server and the webhooks accept."""
    old = {identity(o): o for o in objects(before)}
    for obj in objects(after):
        prior = old.get(identity(obj))
        if prior is None:
            continue
        errors = [d for d in update_problems(prior, obj) if d.is_error]
        assert not errors, f"{identity(obj)}: {[(d.code, d.path, d.message) for d in errors]}"


def assert_no_claim_lost(before: dict[str, bytes], after: dict[str, bytes]) -> None:
    """A claim that leaves the tree keeps the annotations that keep it (and its checkpoints) on the cluster."""
    kept = claims(after)
    for name, claim in claims(before).items():
        if name in kept:
            continue
        annotations = claim["metadata"].get("annotations") or {}
        assert "Prune=false" in annotations.get("argocd.argoproj.io/sync-options", ""), name
        assert annotations.get("kustomize.toolkit.fluxcd.io/prune") == "disabled", name


def step(repo: Repo, message: str, edit: Callable[[], None]) -> tuple[dict[str, bytes], dict[str, bytes], str, str]:
    """Edit, diff against HEAD, compile, commit: (tree before, tree after, diff output, compile output)."""
    before = repo.tree()
    edit()
    diff = repo.diff()
    code, err = repo.compile()
    assert code == 0, err
    check, check_err = repo.compile("--check")
    assert check == 0, check_err
    after = repo.tree()
    assert_updates_accepted(before, after)
    assert_no_claim_lost(before, after)
    repo.commit(message)
    return before, after, diff, err


def set_spec(name: str, repo: Repo, **fields: Any) -> Callable[[], None]:
    return lambda: repo.edit(name, lambda doc: doc["spec"].update(fields))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_day2_sequence_syncs_every_edit(tmp_path: Path, engine: str) -> None:
    repo = Repo(tmp_path / "repo", engine, gitops="argocd")
    repo.write(job("bert-a"))
    repo.write(job("bert-b"))
    code, err = repo.compile()
    assert code == 0, err
    repo.commit("two jobs")
    first = repo.tree()
    assert "kustomization.yaml" not in first  # a GitOps tree: nothing lists every file
    assert not any(name.startswith(".") for name in first)
    runs = runs_by_job(first)
    assert set(runs) == {"bert-a", "bert-b"}
    assert all(run.startswith(f"{job_name}-") and len(run) == len(job_name) + 7 for job_name, run in runs.items())
    for obj in objects(first):
        assert "suspend" not in obj["spec"]  # Kueue's to set (runPolicy.suspend likewise)
        assert "suspend" not in (obj["spec"].get("runPolicy") or {})

    edits: list[tuple[str, Callable[[], None], bool]] = [
        ("nodes", set_spec("bert-a", repo, nodes=4), True),
        ("image", set_spec("bert-a", repo, image="pytorch/pytorch:2.14.0-cuda13.0-cudnn9-runtime"), True),
        ("args", set_spec("bert-a", repo, args=["--epochs", "3"]), True),
        ("deadline", set_spec("bert-a", repo, maxRunTime="2h"), True),
        ("queue", set_spec("bert-a", repo, queue="ml-large"), True),
        ("priority", set_spec("bert-a", repo, priority="high"), True),  # Kueue refuses adding one to a running job
        ("priority value", set_spec("bert-a", repo, priority="urgent"), False),  # another class: in place
        ("keep", set_spec("bert-a", repo, checkpoint={"size": "10Gi", "keep": 5, "storageClass": "standard"}), True),
        ("labels", lambda: repo.edit("bert-a", lambda d: d["metadata"]["labels"].update(owner="ana")), False),
        ("rerun", set_spec("bert-a", repo, rerun=1), True),
    ]
    if engine == "trainer":  # only Trainer runs the sharding stage
        edits.append(("data source", set_spec("bert-b", repo, data={"source": "pvc://datasets/v2/"}), True))
    for what, edit, new_run in edits:
        before, after, diff, out = step(repo, what, edit)
        old_runs, new_runs = runs_by_job(before), runs_by_job(after)
        changed = "bert-b" if what == "data source" else "bert-a"
        other = "bert-a" if changed == "bert-b" else "bert-b"
        assert new_runs[other] == old_runs[other], what  # the neighbour keeps running
        assert set(claims(after)) == set(claims(before)), what  # claims keep their names
        if new_run:
            assert new_runs[changed] != old_runs[changed], what
            line = f"ml-dev/{changed}: new run {new_runs[changed]} replaces {old_runs[changed]}"
            assert line in out, (what, out)
            assert f"resumes from claim {changed}-checkpoints" in out, (what, out)
            said = next(text for text in out.splitlines() if line in text)
            cause = {"queue": "queue ", "priority": "priority added", "rerun": "spec.rerun was raised"}.get(what)
            assert cause is None or cause in said, (what, said)  # the cause named, not "a trainspec version"
            assert f"new run {new_runs[changed]} replaces {old_runs[changed]}" in diff, (what, diff)
        else:
            assert new_runs[changed] == old_runs[changed], what  # updated in place
            assert "new run" not in out and "new run" not in diff, what

    # Rename a job: the old run leaves the tree, its claim stays on the cluster (said so).
    before, after, _, out = step(repo, "rename", lambda: (repo.remove("bert-b"), repo.write(job("bert-c"))))
    assert "bert-b" not in runs_by_job(after) and "bert-c" in runs_by_job(after)
    assert "PersistentVolumeClaim ml-dev/bert-b-checkpoints left the tree and stays on the cluster" in out
    # Delete a job.
    before, after, _, out = step(repo, "delete", lambda: repo.remove("bert-c"))
    assert set(runs_by_job(after)) == {"bert-a"}
    assert "ml-dev/bert-c-checkpoints left the tree and stays on the cluster" in out
    # Compiling again changes nothing: the tree is stable.
    code, err = repo.compile()
    assert code == 0 and "nothing written" in err, err


@pytest.mark.parametrize("engine", ENGINES)
def test_two_pull_requests_merge_cleanly(tmp_path: Path, engine: str) -> None:
    repo = Repo(tmp_path / "repo", engine, gitops="flux")
    for name in ("bert-a", "bert-b", "bert-m"):
        repo.write(job(name))
    assert repo.compile()[0] == 0
    repo.commit("three jobs")
    # PR 1 edits bert-a and adds bert-c; PR 2 edits bert-b and adds bert-d (names that sort next to each other).
    repo.git("checkout", "-q", "-b", "pr-1")
    repo.edit("bert-a", lambda d: d["spec"].update(nodes=4))
    repo.write(job("bert-c"))
    assert repo.compile()[0] == 0
    repo.commit("pr 1")
    repo.git("checkout", "-q", "main")
    repo.git("checkout", "-q", "-b", "pr-2")
    repo.edit("bert-b", lambda d: d["spec"].update(image="pytorch/pytorch:2.14.0-cuda13.0-cudnn9-runtime"))
    repo.write(job("bert-d"))
    assert repo.compile()[0] == 0
    repo.commit("pr 2")
    repo.git("checkout", "-q", "main")
    first = repo.git("merge", "-q", "--no-edit", "pr-1", check=False)
    assert first.returncode == 0, first.stdout + first.stderr
    second = repo.git("merge", "-q", "--no-edit", "pr-2", check=False)
    assert second.returncode == 0, second.stdout + second.stderr  # no conflict in anything trainspec wrote
    code, err = repo.compile("--check")
    assert code == 0, err  # the merged tree is exactly what the merged specs compile to
    assert set(runs_by_job(repo.tree())) == {"bert-a", "bert-b", "bert-c", "bert-d", "bert-m"}


def test_a_plain_tree_lists_its_files_for_kubectl_apply_k(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo", "trainer", gitops=None)
    repo.write(job("bert-a"))
    assert repo.compile()[0] == 0
    kustomization = yaml.safe_load(repo.tree()["kustomization.yaml"])
    assert kustomization["resources"] == ["runtimes/trainspec-torch.yaml", "ml-dev/bert-a.yaml"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_shrinking_claim_is_refused_before_anything_is_written(tmp_path: Path, engine: str) -> None:
    repo = Repo(tmp_path / "repo", engine, gitops="argocd")
    repo.write(job("bert-a"))
    assert repo.compile()[0] == 0
    repo.commit("one job")
    before = repo.tree()
    repo.edit("bert-a", lambda d: d["spec"].update(checkpoint={"size": "5Gi", "storageClass": "standard"}))
    code, err = repo.compile()
    assert code == 1
    assert "TS442" in err and "bert-a-checkpoints" in err, err
    assert "specs/bert-a.yaml:" in err, err  # located at the spec
    assert repo.tree() == before  # nothing written
    code, err = repo.compile("--check")
    assert code == 1 and "TS442" in err
