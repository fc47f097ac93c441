"""``compile -o DIR`` on odd trees: each gets a clear diagnostic, nothing is written, nothing is lost.

What users saw, each a test: a read-only directory inside the output directory made every later
compile fail with a message blaming the parent's permissions; ``-o`` into a directory trainspec
never wrote wrote beside the user's files without a word; zero inputs pruned everything trainspec
wrote before; a compile said ``1 removed`` without naming the file.

The tests run as root, who ignores file modes: :class:`OwnerOnly` checks the directory write bit
as the kernel does for a user owning every entry; the real-permission variant is skipped for root.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias

import pytest

from tests.cli.test_output_tree import snapshot
from tests.conftest import EXAMPLES, run_cli
from trainspec.cli.main import main
from trainspec.compiler.outtree import emit_directory, file_mode
from trainspec.compiler.outtree.access import remove_generation
from trainspec.compiler.outtree.marker import seal

Capture: TypeAlias = pytest.CaptureFixture[str]
Patch: TypeAlias = pytest.MonkeyPatch


@pytest.fixture
def here(tmp_path: Path, monkeypatch: Patch) -> Path:
    """A working directory with ``specs/`` (ddp-cpu and jax, no checkpoint claim) and no output yet."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    for name in ("ddp-cpu.yaml", "jax.yaml"):
        (tmp_path / "specs" / name).write_text((EXAMPLES / name).read_text())
    return tmp_path


def compile_(capsys: Capture, *args: str) -> tuple[int, str, str]:
    code = main(["compile", *args, "--no-project"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".trainspec-" in p.name)


def rename_job(specs: Path, old: str, new: str) -> None:
    """A change that makes a new tree (a file added, one removed): it is swapped in, the old one removed."""
    path = specs / "ddp-cpu.yaml"
    path.write_text(path.read_text().replace(f"name: {old}\n", f"name: {new}\n"))


#: What each call creates or removes: (argument index, keyword of the directory descriptor it is under).
_ENTRIES = {
    **dict.fromkeys(("unlink", "rmdir", "mkdir"), ((0, "dir_fd"),)),
    "link": ((1, "dst_dir_fd"),),
    "symlink": ((1, "dir_fd"),),
    **dict.fromkeys(("rename", "replace"), ((0, "src_dir_fd"), (1, "dst_dir_fd"))),
}


class OwnerOnly:
    """The permission checks the kernel makes for a user who owns every entry (root is spared them):
    creating, removing or renaming an entry needs the write bit of the directory holding it."""

    def __init__(self, monkeypatch: Patch) -> None:
        for name, entries in _ENTRIES.items():
            monkeypatch.setattr(os, name, self._checked(getattr(os, name), entries))
        real_open = os.open

        def open_(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
            where = path if dir_fd is None else f"/proc/self/fd/{dir_fd}/{path}"
            if flags & os.O_CREAT and not os.path.lexists(where):
                self.need(path, dir_fd)
            return real_open(path, flags, mode, dir_fd=dir_fd)

        monkeypatch.setattr(os, "open", open_)

    def _checked(self, real: Callable[..., Any], entries: tuple[tuple[int, str], ...]) -> Callable[..., Any]:
        def call(*args: Any, **kw: Any) -> Any:
            for index, fd in entries:
                self.need(args[index], kw.get(fd))
            return real(*args, **kw)

        return call

    @staticmethod
    def need(path: Any, dir_fd: int | None) -> None:
        if dir_fd is not None:
            mode = os.fstat(dir_fd).st_mode
        else:
            mode = os.lstat(os.path.dirname(os.path.abspath(os.fsdecode(path)))).st_mode
        if not mode & stat.S_IWUSR:
            raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))


# -- (a) read-only entries inside the output directory -----------------------------------------


READ_ONLY = {
    # what is made read-only, and how
    "a directory of the user's": ("frozen", 0o555),
    "a directory trainspec writes into": ("ml-dev", 0o555),
    "the output directory itself": ("", 0o555),
    "a file of the user's": ("README.md", 0o444),
    "a file trainspec wrote": ("kustomization.yaml", 0o444),  # rewritten with 0666 & ~umask, as any of its files
}


def _make_read_only(out: Path, rel: str, mode: int) -> Path:
    (out / "frozen").mkdir()
    (out / "frozen" / "keep.txt").write_text("kept\n")
    (out / "README.md").write_text("notes\n")
    target = out / rel if rel else out
    os.chmod(target, mode)
    return target


@pytest.mark.parametrize("case", sorted(READ_ONLY))
def test_a_read_only_entry_breaks_no_later_compile(here: Path, capsys: Capture, monkeypatch: Patch, case: str) -> None:
    rel, mode = READ_ONLY[case]
    assert compile_(capsys, "specs", "-o", "deploy")[0] == 0
    out = here / "deploy"
    target = _make_read_only(out, rel, mode)
    OwnerOnly(monkeypatch)
    for old, new in (("ddp-cpu", "ddp-cpu-2"), ("ddp-cpu-2", "ddp-cpu-3")):
        rename_job(here / "specs", old, new)
        code, _, err = compile_(capsys, "specs", "-o", "deploy")
        assert code == 0, err
        assert "TS413" not in err and "TS407" not in err and "parent" not in err, err
        assert leftovers(here) == []
    assert (out / "ml-dev" / "ddp-cpu-3.yaml").is_file() and not (out / "ml-dev" / "ddp-cpu.yaml").exists()
    kept = file_mode() if rel == "kustomization.yaml" else mode
    assert stat.S_IMODE(target.lstat().st_mode) == kept  # as the user set it
    assert (out / "frozen" / "keep.txt").read_text() == "kept\n" and (out / "README.md").read_text() == "notes\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory modes: OwnerOnly simulates them above")
def test_a_read_only_directory_with_real_permissions(here: Path) -> None:
    assert run_cli("compile", "specs", "-o", "deploy", "--no-project", cwd=here).returncode == 0
    _make_read_only(here / "deploy", "frozen", 0o555)
    for old, new in (("ddp-cpu", "ddp-cpu-2"), ("ddp-cpu-2", "ddp-cpu-3")):
        rename_job(here / "specs", old, new)
        proc = run_cli("compile", "specs", "-o", "deploy", "--no-project", cwd=here)
        assert proc.returncode == 0 and "TS413" not in proc.stderr, proc.stderr
        assert leftovers(here) == []


def test_a_stuck_leftover_is_named_and_blocks_nothing(here: Path, capsys: Capture, monkeypatch: Patch) -> None:
    """The issue's trap: an old generation with a read-only directory the compile cannot open up
    (another user's) used to fail every later compile, blaming the parent directory."""
    assert compile_(capsys, "specs", "-o", "deploy")[0] == 0
    stuck = here / ".deploy.trainspec-old-0123abcd"
    (stuck / "frozen").mkdir(parents=True)
    (stuck / "frozen" / "keep.txt").write_text("x\n")
    os.chmod(stuck / "frozen", 0o555)
    OwnerOnly(monkeypatch)
    real_chmod = os.chmod

    def chmod(path: Any, mode: int, **kw: Any) -> None:
        if os.fsdecode(path).endswith("frozen"):
            raise PermissionError(errno.EPERM, "Operation not permitted", os.fsdecode(path))
        real_chmod(path, mode, **kw)

    monkeypatch.setattr(os, "chmod", chmod)
    rename_job(here / "specs", "ddp-cpu", "ddp-cpu-2")
    code, _, err = compile_(capsys, "specs", "-o", "deploy")
    assert code == 0, err
    assert (here / "deploy" / "ml-dev" / "ddp-cpu-2.yaml").is_file()
    assert "parent" not in err
    assert "warning[TS413]" in err and ".deploy.trainspec-old-0123abcd/frozen/keep.txt: Permission denied" in err
    assert "remove it by hand" in err


def test_another_users_read_only_directory_is_refused_first(here: Path, capsys: Capture, monkeypatch: Patch) -> None:
    assert compile_(capsys, "specs", "-o", "deploy")[0] == 0
    out = here / "deploy"
    (out / "shared").mkdir()
    (out / "shared" / "notes.txt").write_text("theirs\n")
    os.chown(out / "shared", 4242, 4242)
    os.chmod(out / "shared", 0o555)
    before = snapshot(out)
    real_access = os.access
    # Not writable for this user (root would be: it may write anywhere).
    monkeypatch.setattr(os, "access", lambda p, m, **kw: False if str(p).endswith("shared") else real_access(p, m))
    rename_job(here / "specs", "ddp-cpu", "ddp-cpu-2")
    code, _, err = compile_(capsys, "specs", "-o", "deploy")
    assert code == 1
    assert "deploy/shared: error[TS407]" in err and "uid 4242" in err and "parent" not in err, err
    assert "move it out of deploy" in err
    assert snapshot(out) == before and leftovers(here) == []


TREE = {"kustomization.yaml": seal("# Generated by trainspec from the specs. Do not edit.\n", "resources: []\n")}


@pytest.mark.parametrize(
    ("fail", "shown"),
    [
        ("carry", "deploy/secret.txt"),  # hard link refused, the copy cannot read the file
        ("scan", "deploy/private"),  # the plan cannot list a directory
    ],
)
def test_a_failure_in_the_tree_names_its_path(tmp_path: Path, monkeypatch: Patch, fail: str, shown: str) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "deploy"
    assert emit_directory("deploy", TREE).exit_code == 0
    (out / "secret.txt").write_text("s\n")
    (out / "private").mkdir()
    (out / "private" / "a.txt").write_text("a\n")
    before = snapshot(out)
    real_open, real_scandir = os.open, os.scandir
    target = str(out / ("secret.txt" if fail == "carry" else "private"))

    def denied(path: Any) -> PermissionError:
        return PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))

    def open_(path: Any, flags: int, *args: Any, **kw: Any) -> int:
        if os.fsdecode(path) == target and not flags & os.O_CREAT:
            raise denied(path)
        return int(real_open(path, flags, *args, **kw))

    def scandir(path: Any = ".") -> Any:
        if not isinstance(path, int) and os.fsdecode(path) == target:
            raise denied(path)
        return real_scandir(path)

    def link(src: Any, *args: Any, **kw: Any) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted", os.fsdecode(src))

    monkeypatch.setattr(os, "link", link)
    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "scandir", scandir)
    report = emit_directory("deploy", {**TREE, "team-a/job.yaml": seal("# Generated by trainspec from x.\n", "")})
    monkeypatch.undo()
    assert report.exit_code == 1
    [found] = report.diagnostics
    assert found.code == "TS407" and found.file == shown, found
    assert f"{shown}: Permission denied" in found.message
    assert "parent" not in found.message + (found.hint or "")
    assert "move it out of deploy" in (found.hint or "")
    assert snapshot(out) == before and leftovers(tmp_path) == []


def test_the_parent_is_blamed_only_when_it_is_the_parent(tmp_path: Path, monkeypatch: Patch) -> None:
    monkeypatch.chdir(tmp_path)
    real_mkdir = os.mkdir

    def mkdir(path: Any, *args: Any, **kw: Any) -> None:
        if ".trainspec-build-" in os.fsdecode(path):
            raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))
        real_mkdir(path, *args, **kw)

    monkeypatch.setattr(os, "mkdir", mkdir)
    report = emit_directory("deploy", TREE)
    assert report.exit_code == 1 and "write access to the directory's parent" in (report.diagnostics[0].hint or "")


def test_the_old_generation_is_removed_even_when_read_only(tmp_path: Path, monkeypatch: Patch) -> None:
    gen = tmp_path / ".deploy.trainspec-old-00000000"
    (gen / "a" / "b").mkdir(parents=True)
    (gen / "a" / "b" / "f.txt").write_text("x\n")
    os.chmod(gen / "a" / "b", 0o500)
    os.chmod(gen / "a", 0o500)
    OwnerOnly(monkeypatch)
    remove_generation(gen)
    assert not gen.exists()


# -- (b) a directory trainspec never wrote ----------------------------------------------------


def _foreign(out: Path) -> None:
    (out / "base").mkdir(parents=True)
    (out / "base" / "namespace.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml-dev}\n")
    (out / "README.md").write_text("hand-written manifests\n")


@pytest.mark.parametrize("check", [False, True])
def test_a_directory_trainspec_never_wrote_is_refused(here: Path, capsys: Capture, check: bool) -> None:
    out = here / "deploy"
    _foreign(out)
    before = snapshot(out)
    code, _, err = compile_(capsys, "specs", "-o", "deploy", *(["--check"] if check else []))
    assert code == 1, err
    assert (
        "deploy: error[TS417]: deploy holds 2 entries trainspec did not write (deploy/README.md, deploy/base/)" in err
    )
    assert "--adopt" in err and "new or empty directory" in err
    assert snapshot(out) == before and leftovers(here) == []


def test_adopt_writes_beside_the_users_files_once(here: Path, capsys: Capture) -> None:
    out = here / "deploy"
    _foreign(out)
    code, _, err = compile_(capsys, "specs", "-o", "deploy", "--adopt")
    assert code == 0, err
    assert (out / "README.md").read_text() == "hand-written manifests\n" and (out / "base" / "namespace.yaml").exists()
    assert (out / "kustomization.yaml").exists()
    rename_job(here / "specs", "ddp-cpu", "ddp-cpu-2")
    code, _, err = compile_(capsys, "specs", "-o", "deploy")  # trainspec's now: no flag needed
    assert code == 0, err
    assert compile_(capsys, "specs", "-o", "deploy", "--check")[0] == 0


@pytest.mark.parametrize("content", ["nothing", ".gitkeep", "the old marker"])
def test_empty_placeholder_or_old_tree_is_not_foreign(here: Path, capsys: Capture, content: str) -> None:
    out = here / "deploy"
    out.mkdir()
    if content == ".gitkeep":
        (out / ".gitkeep").write_text("")
    elif content == "the old marker":
        (out / ".trainspec-managed.json").write_text('{"generator": "trainspec", "files": [], "sha256": {}}')
    code, _, err = compile_(capsys, "specs", "-o", "deploy")
    assert code == 0, err


# -- (c) zero inputs --------------------------------------------------------------------------


def _no_specs(here: Path, how: str) -> str:
    empty = here / "nothing"
    empty.mkdir()
    if how == "ignored":
        (empty / ".trainspecignore").write_text("*\n")
        (empty / "job.yaml").write_text((EXAMPLES / "ddp-cpu.yaml").read_text())
    elif how == "not specs":
        (empty / "configmap.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    return "nothing"


@pytest.mark.parametrize("how", ["empty", "ignored", "not specs"])
@pytest.mark.parametrize("mode", ["write", "check"])
def test_zero_inputs_are_an_error_and_prune_nothing(here: Path, capsys: Capture, how: str, mode: str) -> None:
    assert compile_(capsys, "specs", "-o", "deploy")[0] == 0
    before = snapshot(here / "deploy")
    path = _no_specs(here, how)
    extra = {"write": ["-o", "deploy"], "check": ["-o", "deploy", "--check"]}[mode]
    code, out, err = compile_(capsys, path, *extra)
    assert code == 1, err
    assert out == ""
    assert "<command line>: error[TS418]: PATH: no spec found in nothing" in err, err
    assert snapshot(here / "deploy") == before
    assert "deploy was left as it was" in err


@pytest.mark.parametrize("how", ["empty", "ignored", "not specs"])
def test_zero_inputs_to_a_stream_say_what_validate_says(here: Path, capsys: Capture, how: str) -> None:
    """An empty stream prunes nothing (kubectl refuses to apply no objects): as validate, no error."""
    path = _no_specs(here, how)
    code, out, err = compile_(capsys, path, "-o", "-")
    assert code == 0 and out == "" and "TS418" not in err, err


# -- (d) what leaves the tree is named --------------------------------------------------------


def test_removed_files_and_claims_are_named(tmp_path: Path, capsys: Capture, monkeypatch: Patch) -> None:
    monkeypatch.chdir(tmp_path)
    specs = tmp_path / "specs"
    specs.mkdir()
    for src in ("ddp-cpu.yaml", "jax.yaml", "llama-sft/job.yaml", "llama-sft/runtime.yaml"):
        (specs / src.replace("/", "-")).write_text((EXAMPLES / src).read_text())
    assert compile_(capsys, "specs", "-o", "deploy")[0] == 0
    for name in ("jax.yaml", "llama-sft-job.yaml", "llama-sft-runtime.yaml"):
        (specs / name).unlink()
    code, _, err = compile_(capsys, "specs", "-o", "deploy")
    assert code == 0, err
    lines = err.splitlines()
    assert lines[0] == "wrote deploy: 0 added, 1 changed, 5 removed, 2 unchanged"
    assert lines[1:6] == [  # by path
        "removed deploy/runtimes/torch-h100-ib-sharded.yaml",
        "removed deploy/runtimes/torch-h100-ib.yaml",
        "removed deploy/runtimes/trainspec-jax.yaml",
        "removed deploy/team-nlp/llama-sft.yaml",
        "removed deploy/team-research/t5x-pretrain.yaml",
    ]
    assert lines[6].startswith("PersistentVolumeClaim team-nlp/llama-sft-checkpoints left the tree and stays")
    assert len(lines) == 7


def test_a_claim_removed_by_allow_volume_removal_is_named(tmp_path: Path, capsys: Capture, monkeypatch: Patch) -> None:
    monkeypatch.chdir(tmp_path)
    specs = tmp_path / "specs"
    specs.mkdir()
    job = (
        (EXAMPLES / "llama-sft" / "job.yaml").read_text().replace("    keep: 3\n", "    keep: 3\n    protect: false\n")
    )
    (specs / "job.yaml").write_text(job)
    (specs / "runtime.yaml").write_text((EXAMPLES / "llama-sft" / "runtime.yaml").read_text())
    (specs / "jax.yaml").write_text((EXAMPLES / "jax.yaml").read_text())
    assert compile_(capsys, "specs", "-o", "deploy")[0] == 0
    (specs / "job.yaml").unlink()
    code, _, err = compile_(capsys, "specs", "-o", "deploy", "--allow-volume-removal")
    assert code == 0, err
    claim = "PersistentVolumeClaim team-nlp/llama-sft-checkpoints left the tree (--allow-volume-removal): "
    claim += "a GitOps sync that prunes deletes it, and the checkpoints on it"
    assert err.splitlines()[1:] == ["removed deploy/team-nlp/llama-sft.yaml", claim]
