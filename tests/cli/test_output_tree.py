"""``trainspec compile -o DIR`` as a GitOps repository needs it (issue 10, items 4b and 5).

What users saw, each a test: a poisoned marker deleting files outside the tree, files always
0600, headers naming specs relative to the working directory, ``-o ''`` writing into the
working directory, removed jobs taking their checkpoint claims with them, hand edits silently
overwritten, a second compile rewriting unchanged files, one fsync per file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT, run_cli
from trainspec.cli.main import main

MARKER = ".trainspec-managed.json"


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry below ``root``: bytes (or link target, or "dir") and permission bits."""
    out: dict[str, tuple] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        rel = path.relative_to(root).as_posix()
        if stat.S_ISLNK(st.st_mode):
            out[rel] = ("link", os.readlink(path))
        elif stat.S_ISDIR(st.st_mode):
            out[rel] = ("dir", stat.S_IMODE(st.st_mode))
        else:
            out[rel] = (path.read_bytes(), stat.S_IMODE(st.st_mode))
    return out


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    """llama-sft (a job with a checkpoint claim) and jax.yaml (a job without), copied to tmp."""
    root = tmp_path / "specs"
    shutil.copytree(EXAMPLES / "llama-sft", root / "llama-sft")
    shutil.copy(EXAMPLES / "jax.yaml", root / "jax.yaml")
    return root


def compile_(specs: Path, out: Path, *extra: str, cwd: Path | None = None):
    return run_cli("compile", str(specs), "-o", str(out), "--no-project", *extra, cwd=cwd)


def legacy_marker(out: Path) -> dict:
    """The marker an older trainspec kept beside the files it wrote (read once more, then dropped)."""
    import hashlib

    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yaml") if p.is_file() and not p.is_symlink())
    marker = {
        "generator": "trainspec",
        "files": files,
        "sha256": {rel: hashlib.sha256((out / rel).read_bytes()).hexdigest() for rel in files},
    }
    (out / MARKER).write_text(json.dumps(marker))
    return marker


def unprotected(specs: Path) -> None:
    """llama-sft's checkpoint claim without the GitOps keep annotations (checkpoint.protect: false)."""
    job = specs / "llama-sft" / "job.yaml"
    job.write_text(job.read_text().replace("    keep: 3\n", "    keep: 3\n    protect: false\n"))


def ok(proc) -> None:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


# -- the marker is untrusted input ------------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        "../victim.txt",
        "ABSOLUTE",
        "team-nlp/../../victim.txt",
        "./kustomization.yaml",
        "notes/README.md",
        "team-nlp//llama-sft.yaml",
    ],
)
def test_a_poisoned_marker_entry_deletes_nothing(tmp_path: Path, specs: Path, entry: str) -> None:
    out = tmp_path / "deploy"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    ok(compile_(specs, out))
    entry = str(victim) if entry == "ABSOLUTE" else entry
    marker = legacy_marker(out)
    marker["files"].append(entry)
    marker["sha256"][entry] = "0" * 64
    (out / MARKER).write_text(json.dumps(marker))
    (out / "notes").mkdir()
    (out / "notes" / "README.md").write_text("mine\n")
    before = snapshot(out)
    (specs / "jax.yaml").unlink()  # so the compile has something to prune
    proc = compile_(specs, out)
    assert proc.returncode == 1, proc.stderr
    assert "TS409" in proc.stderr and "files[" in proc.stderr
    assert victim.read_text() == "precious\n"
    assert snapshot(out) == before  # nothing deleted, nothing written


@pytest.mark.parametrize(
    "text",
    [
        "not json {",
        '["kustomization.yaml"]',
        '{"generator": "trainspec", "files": "x"}',
        '{"generator": "trainspec", "files": ["kustomization.yaml"]}',
        "\udcff",
    ],
)
def test_a_marker_of_the_wrong_shape_stops_the_compile(tmp_path: Path, specs: Path, text: str) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    (out / MARKER).write_bytes(text.encode("utf-8", "surrogateescape"))
    before = snapshot(out)
    (specs / "jax.yaml").unlink()
    proc = compile_(specs, out)
    assert proc.returncode == 1 and "TS409" in proc.stderr, proc.stderr
    assert snapshot(out) == before
    check = compile_(specs, out, "--check")
    assert check.returncode == 1 and "TS409" in check.stderr


def test_a_marker_that_is_a_symlink_is_refused(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    legacy_marker(out)
    elsewhere = tmp_path / "elsewhere.json"
    shutil.move(str(out / MARKER), elsewhere)
    (out / MARKER).symlink_to(elsewhere)
    proc = compile_(specs, out)
    assert proc.returncode == 1 and "TS409" in proc.stderr


# -- modes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_get_0666_minus_the_umask(tmp_path: Path, monkeypatch, umask: int, mode: int) -> None:
    monkeypatch.chdir(ROOT)
    old = os.umask(umask)
    try:
        assert main(["compile", "examples/ddp-cpu.yaml", "-o", str(tmp_path / "deploy"), "--no-project"]) == 0
    finally:
        os.umask(old)
    files = [p for p in (tmp_path / "deploy").rglob("*") if p.is_file()]
    assert len(files) >= 3
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {oct(mode)}


def test_an_existing_directory_keeps_its_mode(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    os.chmod(out, 0o750)
    os.chmod(out / "team-nlp", 0o700)
    (specs / "jax.yaml").unlink()
    ok(compile_(specs, out))
    assert stat.S_IMODE(out.stat().st_mode) == 0o750
    assert stat.S_IMODE((out / "team-nlp").stat().st_mode) == 0o700


# -- headers do not depend on the working directory -------------------------------------------


def test_check_from_another_directory_finds_the_tree_up_to_date(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ok(run_cli("compile", os.path.relpath(specs, ROOT), "-o", os.path.relpath(out, ROOT), "--no-project"))
    header = (out / "team-nlp" / "llama-sft.yaml").read_text().splitlines()[0]
    assert "from ../specs/llama-sft/job.yaml." in header
    proc = compile_(specs, out, "--check", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert "up to date" in proc.stderr


def test_runtime_headers_name_their_source_relative_to_the_output(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "a" / "deploy"
    ok(compile_(specs, out, cwd=tmp_path))
    header = (out / "runtimes" / "torch-h100-ib.yaml").read_text().splitlines()[0]
    assert "from ../../specs/llama-sft/runtime.yaml." in header


# -- dangerous -o values ----------------------------------------------------------------------


def test_empty_output_is_refused(tmp_path: Path) -> None:
    proc = run_cli("compile", str(EXAMPLES / "ddp-cpu.yaml"), "-o", "", "--no-project", cwd=tmp_path)
    assert proc.returncode == 2 and "TS412" in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("case", ["cwd", "parent-of-cwd", "repo-root", "inside-git", "holds-inputs"])
def test_dangerous_output_directories_are_refused(tmp_path: Path, case: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "specs").mkdir()
    shutil.copy(EXAMPLES / "ddp-cpu.yaml", repo / "specs" / "ddp-cpu.yaml")
    work = repo / "a" / "b"
    work.mkdir(parents=True)
    output, cwd, spec = {
        "cwd": (".", work, "../../specs"),
        "parent-of-cwd": ("..", work, "../../specs"),
        "repo-root": (str(repo), tmp_path, str(repo / "specs")),
        "inside-git": (str(repo / ".git" / "deploy"), tmp_path, str(repo / "specs")),
        "holds-inputs": (str(repo / "specs"), tmp_path, str(repo / "specs" / "ddp-cpu.yaml")),
    }[case]
    before = snapshot(repo)
    proc = run_cli("compile", spec, "-o", output, "--no-project", cwd=cwd)
    assert proc.returncode == 2 and "TS412" in proc.stderr, proc.stderr
    assert snapshot(repo) == before
    check = run_cli("compile", spec, "-o", output, "--no-project", "--check", cwd=cwd)
    assert check.returncode == 2 and "TS412" in check.stderr


def test_root_and_home_are_refused(tmp_path: Path) -> None:
    from trainspec.compiler.outtree.safety import unsafe_output

    home = tmp_path / "home"
    home.mkdir()
    assert unsafe_output("/", cwd=str(tmp_path), home=str(home)).code == "TS412"
    assert unsafe_output(str(home), cwd=str(tmp_path), home=str(home)).code == "TS412"
    assert unsafe_output(str(tmp_path), cwd="/nowhere", home=str(home)).code == "TS412"  # contains home
    assert unsafe_output(str(home / "deploy"), cwd=str(tmp_path), home=str(home)) is None
    link = tmp_path / "link-to-home"
    link.symlink_to(home)
    assert unsafe_output(str(link), cwd=str(tmp_path), home=str(home)).code == "TS412"


# -- volumes never vanish silently ------------------------------------------------------------


def test_removing_a_job_with_a_checkpoint_claim_is_refused(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    unprotected(specs)
    ok(compile_(specs, out))
    before = snapshot(out)
    shutil.rmtree(specs / "llama-sft")
    shutil.copytree(EXAMPLES / "llama-sft", tmp_path / "kept-runtime")
    (tmp_path / "kept-runtime" / "job.yaml").unlink()
    proc = run_cli("compile", str(specs), str(tmp_path / "kept-runtime"), "-o", str(out), "--no-project")
    assert proc.returncode == 1, proc.stderr
    assert "TS410" in proc.stderr and "team-nlp/llama-sft-checkpoints" in proc.stderr
    assert "llama-sft/job.yaml" in proc.stderr  # the spec that used to produce it
    assert re.search(r"team-nlp/llama-sft\.yaml:\d+:\d+: error\[TS410\]", proc.stderr)
    assert snapshot(out) == before
    check = run_cli("compile", str(specs), str(tmp_path / "kept-runtime"), "-o", str(out), "--no-project", "--check")
    assert check.returncode == 1 and "TS410" in check.stderr and "no longer produced" in check.stderr
    allowed = run_cli(
        "compile", str(specs), str(tmp_path / "kept-runtime"), "-o", str(out), "--no-project", "--allow-volume-removal"
    )
    ok(allowed)
    assert not (out / "team-nlp" / "llama-sft.yaml").exists()
    assert "1 removed" in allowed.stderr


def test_a_protected_claim_leaves_the_tree_and_stays_on_the_cluster_said_so(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    claim = out / "team-nlp" / "llama-sft.yaml"
    assert "Prune=false,Delete=false" in claim.read_text()
    assert "kustomize.toolkit.fluxcd.io/prune: disabled" in claim.read_text()
    shutil.rmtree(specs / "llama-sft")
    shutil.copytree(EXAMPLES / "llama-sft", tmp_path / "kept-runtime")
    (tmp_path / "kept-runtime" / "job.yaml").unlink()
    proc = run_cli("compile", str(specs), str(tmp_path / "kept-runtime"), "-o", str(out), "--no-project")
    ok(proc)
    assert not claim.exists()
    assert "PersistentVolumeClaim team-nlp/llama-sft-checkpoints left the tree and stays on the cluster" in proc.stderr


def test_a_claim_dropped_from_a_file_that_stays_is_refused(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    unprotected(specs)
    ok(compile_(specs, out))
    before = snapshot(out)
    job = specs / "llama-sft" / "job.yaml"
    text = job.read_text()
    job.write_text(
        text[: text.index("  checkpoint:")] + "  checkpoint:\n    uri: s3://checkpoints/llama-sft\n    keep: 3\n"
    )
    proc = compile_(specs, out)
    assert proc.returncode == 1 and "TS410" in proc.stderr, proc.stderr
    assert "no longer has PersistentVolumeClaim team-nlp/llama-sft-checkpoints" in proc.stderr
    assert snapshot(out) == before
    assert compile_(specs, out, "--check").returncode == 1
    ok(compile_(specs, out, "--allow-volume-removal"))
    assert "PersistentVolumeClaim" not in (out / "team-nlp" / "llama-sft.yaml").read_text()


# -- hand edits -------------------------------------------------------------------------------


def test_a_hand_edited_file_is_not_overwritten_without_force(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    target = out / "team-research" / "t5x-pretrain.yaml"
    target.write_text(target.read_text() + "# hot fix during the incident\n")
    before = snapshot(out)
    (specs / "jax.yaml").write_text((specs / "jax.yaml").read_text().replace("keep: 5", "keep: 4"))
    proc = compile_(specs, out)
    assert proc.returncode == 1 and "TS411" in proc.stderr and "--force" in proc.stderr, proc.stderr
    assert snapshot(out) == before
    check = compile_(specs, out, "--check")
    assert check.returncode == 1 and "TS411" in check.stderr and "t5x-pretrain.yaml: stale" in check.stderr
    ok(compile_(specs, out, "--force"))
    assert "hot fix" not in target.read_text()


def test_a_hand_edited_file_is_not_pruned_without_force(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    target = out / "team-research" / "t5x-pretrain.yaml"
    target.write_text(target.read_text() + "# do not lose me\n")
    (specs / "jax.yaml").unlink()
    proc = compile_(specs, out)
    assert proc.returncode == 1 and "TS411" in proc.stderr and "delete the edit" in proc.stderr
    assert target.exists()
    ok(compile_(specs, out, "--force"))
    assert not target.exists()


def test_a_file_trainspec_did_not_write_stays_ts407(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    (out / "team-research").mkdir(parents=True)
    (out / "team-research" / "t5x-pretrain.yaml").write_text("# mine\n")
    for flags in ((), ("--force",)):
        proc = compile_(specs, out, *flags)
        assert proc.returncode == 1 and "TS407" in proc.stderr
    assert (out / "team-research" / "t5x-pretrain.yaml").read_text() == "# mine\n"


def test_a_symlink_in_the_way_is_never_followed(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    outside = tmp_path / "outside"
    outside.mkdir()
    out.mkdir()
    (out / "team-research").symlink_to(outside)
    proc = compile_(specs, out)
    assert proc.returncode == 1 and "TS407" in proc.stderr
    assert list(outside.iterdir()) == []


# -- the tree is replaced as a whole; unchanged trees are not rewritten -----------------------


def test_compiling_twice_writes_nothing_the_second_time(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    inodes = {p: p.stat().st_ino for p in [out, *out.rglob("*")]}
    before = snapshot(out)
    second = compile_(specs, out)
    ok(second)
    assert "0 added, 0 changed, 0 removed" in second.stderr
    assert snapshot(out) == before
    assert {p: p.stat().st_ino for p in [out, *out.rglob("*")]} == inodes  # no swap, nothing rewritten


def test_user_files_survive_the_swap_as_they_were(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    (out / "README.md").write_text("notes\n")
    os.chmod(out / "README.md", 0o640)
    (out / "scripts").mkdir()
    (out / "scripts" / "apply.sh").write_text("#!/bin/sh\n")
    os.chmod(out / "scripts" / "apply.sh", 0o751)
    (out / "empty").mkdir()
    (out / "latest").symlink_to("team-nlp/llama-sft.yaml")
    (out / "team-nlp" / "values.txt").write_text("kept beside generated files\n")
    readme_inode = (out / "README.md").stat().st_ino
    (specs / "jax.yaml").unlink()
    ok(compile_(specs, out))
    tree = snapshot(out)
    assert tree["README.md"] == (b"notes\n", 0o640)
    assert tree["scripts/apply.sh"] == (b"#!/bin/sh\n", 0o751)
    assert tree["empty"][0] == "dir" and tree["latest"] == ("link", "team-nlp/llama-sft.yaml")
    assert tree["team-nlp/values.txt"][0] == b"kept beside generated files\n"
    assert (out / "README.md").stat().st_ino == readme_inode  # the same file, hard-linked over
    assert "team-research/t5x-pretrain.yaml" not in tree and "team-research" not in tree  # pruned dir gone
    assert not [p for p in tmp_path.iterdir() if ".trainspec-" in p.name]


def test_durability_costs_one_sync_per_tree_not_one_fsync_per_file(tmp_path: Path, monkeypatch) -> None:
    from trainspec.compiler.outtree import swap

    monkeypatch.chdir(ROOT)
    calls = {"fsync": 0, "syncfs": 0}
    real_fsync, real_syncfs = os.fsync, swap._syncfs

    def fsync(fd: int) -> None:
        calls["fsync"] += 1
        real_fsync(fd)

    def syncfs(fd: int) -> bool:
        calls["syncfs"] += 1
        return real_syncfs(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(swap, "_syncfs", syncfs)
    assert main(["compile", "examples/", "-o", str(tmp_path / "deploy"), "--no-project"]) == 0
    assert len([p for p in (tmp_path / "deploy").rglob("*") if p.is_file()]) >= 8
    assert calls["syncfs"] == 1 and calls["fsync"] <= 1  # the parent directory, after the swap


def test_without_syncfs_the_files_are_still_made_durable(tmp_path: Path, monkeypatch) -> None:
    from trainspec.compiler.outtree import swap

    monkeypatch.chdir(ROOT)
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(swap, "_syncfs", lambda fd: False)
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    assert main(["compile", "examples/", "-o", str(tmp_path / "deploy"), "--no-project"]) == 0
    files = [p for p in (tmp_path / "deploy").rglob("*") if p.is_file()]
    assert len(synced) >= len(files)


def test_a_second_compile_into_a_locked_directory_does_not_wait_forever(tmp_path: Path, monkeypatch) -> None:
    from trainspec.compiler.outtree import emit_directory, swap

    fcntl = pytest.importorskip("fcntl")
    monkeypatch.setattr(swap, "LOCK_WAIT_SECONDS", 0.0)
    out = tmp_path / "deploy"
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another compile writing beside it
        report = emit_directory(str(out), {"kustomization.yaml": "resources: []\n"})
    finally:
        os.close(fd)
    assert report.exit_code == 1 and report.diagnostics[0].code == "TS407"
    assert "another trainspec compile" in report.diagnostics[0].message
    assert not out.exists()
    assert emit_directory(str(out), {"kustomization.yaml": "resources: []\n"}).exit_code == 0  # lock released


# -- seals instead of a central list ----------------------------------------------------------


def test_a_tree_written_with_the_old_marker_is_adopted_and_the_marker_dropped(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    # What an older trainspec left: files without the seal line, and the central marker.
    for path in out.rglob("*.yaml"):
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(line for line in lines if not line.startswith("# trainspec-sha256: ")))
    legacy_marker(out)
    proc = compile_(specs, out)
    ok(proc)
    assert not (out / MARKER).exists()
    assert all("# trainspec-sha256: " in p.read_text() for p in out.rglob("*.yaml"))
    assert compile_(specs, out, "--check").returncode == 0


def test_an_old_tree_with_a_hand_edit_is_refused(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    for path in out.rglob("*.yaml"):
        path.write_text("".join(x for x in path.read_text().splitlines(True) if not x.startswith("# trainspec-sha")))
    legacy_marker(out)
    target = out / "team-research" / "t5x-pretrain.yaml"
    target.write_text(target.read_text() + "# edited after the old trainspec wrote it\n")
    proc = compile_(specs, out)
    assert proc.returncode == 1 and "TS411" in proc.stderr, proc.stderr


def test_an_edit_of_the_header_breaks_the_seal(tmp_path: Path, specs: Path) -> None:
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    target = out / "team-research" / "t5x-pretrain.yaml"
    target.write_text(target.read_text().replace("Do not edit", "Please edit", 1))
    proc = compile_(specs, out, "--check")
    assert proc.returncode == 1 and "TS411" in proc.stderr


def test_a_sealed_file_added_by_hand_fails_the_check_and_is_pruned(tmp_path: Path, specs: Path) -> None:
    """A pull request cannot slip an object into the tree by copying trainspec's header and seal."""
    from trainspec.compiler.outtree.marker import seal

    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    body = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: x}\n"
    forged = out / "team-nlp" / "extra.yaml"
    forged.write_text(seal("# Generated by trainspec from ../specs/x.yaml. Do not edit.\n", body))
    check = compile_(specs, out, "--check")
    assert check.returncode == 1 and "team-nlp/extra.yaml: no longer produced" in check.stderr
    ok(compile_(specs, out))
    assert not forged.exists()


def test_a_file_name_with_a_newline_cannot_add_yaml_to_a_header(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    name = specs / "a\napiVersion: v1\nkind: Secret\n.yaml"
    name.write_text((EXAMPLES / "ddp-cpu.yaml").read_text())
    out = tmp_path / "deploy"
    proc = compile_(specs, out)
    # Refused as an input (TS124, the name escaped), or compiled with the name escaped in the
    # header: never a line of its own in a generated file.
    if proc.returncode != 0:
        assert "TS124" in proc.stderr and "\n" not in proc.stderr.split("TS124")[0].splitlines()[-1]
        assert not out.exists() or not list(out.rglob("*.yaml"))
        return
    text = (out / "ml-dev" / "ddp-cpu.yaml").read_text()
    header = text.splitlines()[0]
    assert "\\u000a" in header and "kind: Secret" in header
    assert text.count("\nkind: ") == 1  # the TrainJob's only: nothing was injected


def test_a_huge_file_in_the_tree_is_never_read_whole_nor_overwritten_nor_pruned(tmp_path: Path, specs: Path) -> None:
    """A file larger than any trainspec writes (grown by hand, or planted) is not one trainspec
    wrote: at a path the compile writes it is in the way (TS407, even with --force), elsewhere it
    is the user's and stays. Neither is read whole: an uncapped read of a sparse 1 GiB file took
    seconds and gigabytes."""
    import tracemalloc

    from trainspec.compiler.outtree.marker import LARGEST_FILE

    huge = 16 * LARGEST_FILE  # sparse: no disk used
    out = tmp_path / "deploy"
    assert main(["compile", str(specs), "-o", str(out), "--no-project"]) == 0
    target = out / "team-research" / "t5x-pretrain.yaml"
    header = target.read_bytes()
    planted = out / "team-research" / "old-job.yaml"
    for path in (target, planted):  # trainspec's header and seal, then far more than it writes
        path.write_bytes(header)
        os.truncate(path, huge)
    tracemalloc.start()
    try:
        for extra in ([], ["--force"]):
            assert main(["compile", str(specs), "-o", str(out), "--no-project", *extra]) == 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < huge // 4  # what the compile itself needs, not the file's size
    assert target.stat().st_size == planted.stat().st_size == huge
    target.unlink()  # out of the way: the compile writes its file again and keeps the other
    assert main(["compile", str(specs), "-o", str(out), "--no-project"]) == 0
    assert target.read_bytes() == header and planted.stat().st_size == huge


def test_a_header_names_the_spec_read_through_a_linked_directory(tmp_path: Path) -> None:
    """``lnk/../spec.yaml`` reads ``real/spec.yaml`` when ``lnk`` links to ``real/sub``: the header
    names that file, not a ``spec.yaml`` beside ``lnk``."""
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "spec.yaml").write_bytes((EXAMPLES / "ddp-cpu.yaml").read_bytes())
    (tmp_path / "lnk").symlink_to(tmp_path / "real" / "sub")
    ok(run_cli("compile", "lnk/../spec.yaml", "-o", "out", "--no-project", cwd=tmp_path))
    header = (tmp_path / "out" / "ml-dev" / "ddp-cpu.yaml").read_text().splitlines()[0]
    assert header.startswith("# Generated by trainspec from ../real/spec.yaml."), header


def test_a_job_whose_file_is_a_runtimes_file_is_an_error_not_a_lost_job(tmp_path: Path) -> None:
    """A job named like a runtime in the namespace ``runtimes`` would be written to the runtime's
    file (``runtimes/trainspec-torch.yaml``): one of the two was silently left out of the tree."""
    specs = tmp_path / "specs"
    specs.mkdir()
    text = (EXAMPLES / "ddp-cpu.yaml").read_text()
    (specs / "job.yaml").write_text(
        text.replace("name: ddp-cpu", "name: trainspec-torch").replace("namespace: ml-dev", "namespace: runtimes")
    )
    out = tmp_path / "deploy"
    for extra in ([], ["--check"]):
        proc = compile_(specs, out, *extra)
        assert proc.returncode == 1 and "TS407" in proc.stderr and "runtimes/trainspec-torch.yaml" in proc.stderr
        assert "specs/job.yaml" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("output", ["-", "deploy"])
def test_a_full_temporary_directory_is_a_located_error_not_an_internal_one(
    tmp_path: Path, specs: Path, monkeypatch, capsys, output: str
) -> None:
    """The outputs are spilled to a temporary file as they are compiled: a full TMPDIR said
    "internal error: OSError: [Errno 28]", naming no directory."""
    import errno
    import tempfile

    from trainspec.compiler import output_sinks

    class Full:
        def __init__(self) -> None:
            self._file = tempfile.SpooledTemporaryFile()  # noqa: SIM115  # closed by the sink

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name: str) -> object:
            return getattr(self._file, name)

    monkeypatch.setattr(output_sinks.tempfile, "TemporaryFile", Full)
    monkeypatch.chdir(tmp_path)
    assert main(["compile", str(specs), "-o", output, "--no-project"]) == 1
    err = capsys.readouterr().err
    assert "TS407" in err and "No space left on device" in err and tempfile.gettempdir() in err, err
    assert "internal error" not in err and not (tmp_path / "deploy").exists()


def test_a_hand_edit_of_a_field_the_cluster_keeps_is_ts411_and_force_discards_it(tmp_path: Path) -> None:
    """A hand edit is not what trainspec last wrote: it says TS411 (the edit, in that file), not
    TS440 against an unchanged spec, and --force puts trainspec's file back as documented."""
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(EXAMPLES / "ddp-cpu.yaml", specs / "ddp-cpu.yaml")
    out = tmp_path / "deploy"
    ok(compile_(specs, out))
    target = out / "ml-dev" / "ddp-cpu.yaml"
    written = target.read_text()
    assert "numNodes: 2\n" in written
    target.write_text(written.replace("numNodes: 2\n", "numNodes: 5\n"))
    for extra in ((), ("--check",)):
        proc = compile_(specs, out, *extra)
        assert proc.returncode == 1 and "TS411" in proc.stderr and "TS440" not in proc.stderr, proc.stderr
    ok(compile_(specs, out, "--force"))
    assert target.read_text() == written
