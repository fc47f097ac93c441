"""The specs at a git ref, materialised in a temporary directory (``git archive``).

Only the requested paths are exported, through ``git archive | tar`` in Python (no shell). A
path that did not exist at the ref is simply absent: its jobs show up as added.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from trainspec.dsl.errors import TrainspecError


class GitError(TrainspecError):
    """git is missing, the directory is not a repository, the ref is unknown, or a path is outside."""


@dataclass(frozen=True)
class Exported:
    """Where each requested path of the ref landed (None when it did not exist at the ref)."""

    root: Path
    ref: str
    paths: tuple[Path | None, ...]
    project: Path | None


def _git(args: list[str], cwd: Path, *, binary: bool = False) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=not binary, check=False)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror}") from None


def repo_root(cwd: Path) -> Path:
    done = _git(["rev-parse", "--show-toplevel"], cwd)
    if done.returncode != 0:
        raise GitError(f"{cwd} is not in a git repository")
    return Path(done.stdout.strip()).resolve()


def _relative(path: Path, root: Path) -> str:
    try:
        rel = path.resolve().relative_to(root)
    except ValueError:
        raise GitError(f"{path} is outside the repository {root}") from None
    return rel.as_posix() or "."


def _exists_at(ref: str, rel: str, root: Path) -> bool:
    return rel == "." or _git(["cat-file", "-e", f"{ref}:{rel}"], root).returncode == 0


@contextmanager
def export_ref(ref: str, paths: list[str], cwd: Path, project: Path | None = None) -> Iterator[Exported]:
    """Export ``paths`` (and the project file, if inside the repository) as they were at ``ref``."""
    root = repo_root(cwd)
    if _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root).returncode != 0:
        raise GitError(f"unknown git ref {ref!r}")
    wanted = [_relative(cwd / p, root) for p in paths]
    project_rel = outside = None
    if project is not None:
        try:
            project_rel = _relative(cwd / project, root)
        except GitError:
            outside = (cwd / project).resolve()  # no history outside the repository: both sides share it
    present = sorted({rel for rel in [*wanted, *([project_rel] if project_rel else [])] if _exists_at(ref, rel, root)})
    with tempfile.TemporaryDirectory(prefix="trainspec-diff-") as tmp:
        target = Path(tmp)
        if present:
            pathspecs = [] if "." in present else ["--", *present]
            done = _git(["archive", "--format=tar", ref, *pathspecs], root, binary=True)
            if done.returncode != 0:
                raise GitError(f"git archive {ref} failed: {done.stderr.decode(errors='replace').strip()}")
            with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
                tar.extractall(target, filter="data")  # no absolute paths, links out or devices
        located = tuple(target / rel if (target / rel).exists() else None for rel in wanted)
        old_project = target / project_rel if project_rel and (target / project_rel).is_file() else outside
        yield Exported(root=target, ref=ref, paths=located, project=old_project)
