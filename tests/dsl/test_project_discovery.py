"""Finding the project file (``trainspec.yaml`` in the working directory or the nearest parent, up
to the repository root): what a pull request could do to that search, and where it starts from.

The project file carries the gate's policy (``python: deny``, the rules): a change that makes it
unreadable must be an error on it, never a quiet run without it (or with a parent's instead).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli
from trainspec.dsl.spec.project import find_project_file

PROJECT = "apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec:\n  python: deny\n"


def repo(tmp_path: Path) -> Path:
    """A repository holding one valid job, and a valid project file in the directory above it."""
    (tmp_path / "trainspec.yaml").write_text(PROJECT)  # a parent's: never the one to fall back to
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "job.yaml").write_bytes((EXAMPLES / "ddp-cpu.yaml").read_bytes())
    return root


def findings(proc: subprocess.CompletedProcess) -> list[tuple[str, str]]:
    return [(d["code"], d["file"]) for d in json.loads(proc.stdout)["diagnostics"]]


@pytest.mark.parametrize("kind", ["dangling link", "link loop", "directory", "fifo"])
def test_a_project_file_that_is_not_a_readable_file_is_an_error_on_it(tmp_path: Path, kind: str) -> None:
    root = repo(tmp_path)
    project = root / "trainspec.yaml"
    if kind == "dangling link":
        project.symlink_to("shared/trainspec.yaml")
    elif kind == "link loop":
        project.symlink_to("trainspec.yaml")
    elif kind == "directory":
        project.mkdir()
        (project / "job.yaml").write_text("not: a spec\n")  # a directory is not walked as inputs
    else:
        os.mkfifo(project)
    proc = run_cli("validate", "job.yaml", "--format", "json", cwd=root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [(code, file) for code, file in findings(proc) if file == "trainspec.yaml"], proc.stdout
    assert all(file in ("trainspec.yaml", "job.yaml") for _, file in findings(proc)), proc.stdout


def test_the_project_file_is_named_from_the_working_directory(tmp_path: Path) -> None:
    """Found in a parent, it is ``../trainspec.yaml``; control characters in directories above
    the working directory are not part of that name, so they do not refuse it (TS124)."""
    top = tmp_path / "evil\ndir"
    root = top / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "trainspec.yaml").write_text(PROJECT + "  unknownSetting: 1\n")
    sub = root / "team"
    sub.mkdir()
    (sub / "job.yaml").write_bytes((EXAMPLES / "ddp-cpu.yaml").read_bytes())
    proc = run_cli("validate", "job.yaml", "--format", "json", cwd=sub)
    assert proc.returncode == 1 and [code for code, _ in findings(proc)] == ["TS200"], proc.stdout
    assert findings(proc)[0][1] == "../trainspec.yaml"
    assert find_project_file(sub) == os.path.join(sub, os.pardir, "trainspec.yaml")
    found = find_project_file(sub / "job.yaml")  # a file: from its directory (diff --git passes one)
    assert found == os.path.join(sub, os.pardir, "trainspec.yaml") and os.path.isfile(found)


def test_a_project_file_reached_through_a_symlinked_directory_is_the_physical_parents(tmp_path: Path) -> None:
    """``..`` from a symlinked working directory is its real parent, for the search and the name."""
    root = repo(tmp_path)
    (root / "real" / "team").mkdir(parents=True)
    (root / "real" / "trainspec.yaml").write_text(PROJECT + "  unknownSetting: 1\n")
    (root / "team").symlink_to(root / "real" / "team")
    (root / "real" / "team" / "job.yaml").write_bytes((EXAMPLES / "ddp-cpu.yaml").read_bytes())
    proc = run_cli("validate", "job.yaml", "--format", "json", cwd=root / "team")
    assert ("TS200", "../trainspec.yaml") in findings(proc), proc.stdout


def test_a_removed_working_directory_is_no_internal_error(tmp_path: Path) -> None:
    """Absolute inputs are still read; no project file can be found from nowhere."""
    gone = tmp_path / "gone"
    spec = EXAMPLES / "ddp-cpu.yaml"
    code = "import sys; from trainspec.cli.main import main; sys.exit(main(sys.argv[1:]))"
    for command in (["validate", str(spec)], ["compile", str(spec), "-o", "-"]):
        gone.mkdir()
        proc = subprocess.run(
            [
                "sh",
                "-c",
                'cd "$1" && rmdir "$1" && shift && exec "$@"',
                "sh",
                str(gone),
                sys.executable,
                "-c",
                code,
                *command,
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        assert "internal error" not in proc.stderr
