"""Odd things on disk never hang, crash or silently vanish (issue 10, item 6: walks).

FIFOs, sockets and symlink loops are skipped by directory walks with a located warning and
refused (an error, never a hang) when named on the command line; over-long names are a
diagnostic, not an internal error; upper-case extensions are loaded.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli
from trainspec.dsl.diagnostics import CODES
from trainspec.dsl.load.spec_sources import discover, load_files, load_specs
from trainspec.dsl.load.strict_yaml import load_file
from trainspec.dsl.load.values_files import load_values

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file types")

JOB = (EXAMPLES / "ddp-cpu.yaml").read_text()


def codes(problems: list) -> list[tuple[str, str]]:
    return [(d.code, d.severity.value) for d in problems]


def test_fifo_in_a_walk_is_skipped_with_a_warning_not_opened(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    os.mkfifo(tmp_path / "pipe.yaml")  # opening it for reading would block until a writer comes
    files, problems = discover([str(tmp_path)])
    assert files == [str(tmp_path / "job.yaml")]
    assert codes(problems) == [("TS118", "warning")]
    assert problems[0].file.endswith("pipe.yaml") and "FIFO" in problems[0].message
    assert problems[0].hint


def test_socket_in_a_walk_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.yml"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
    except OSError as exc:  # pragma: no cover - path too long for AF_UNIX on some systems
        pytest.skip(str(exc))
    try:
        files, problems = discover([str(tmp_path)])
    finally:
        server.close()
    assert files == [] and codes(problems) == [("TS118", "warning")]
    assert "socket" in problems[0].message


def test_fifo_given_on_the_command_line_is_an_error_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    specs, problems = load_specs([str(tmp_path / "pipe.yaml")])
    assert specs == [] and codes(problems) == [("TS118", "error")]


def test_device_given_on_the_command_line_is_an_error() -> None:
    specs, problems = load_specs(["/dev/zero"])  # reading it would never end
    assert specs == [] and codes(problems) == [("TS118", "error")]
    assert "device" in problems[0].message


def test_loader_refuses_a_fifo_even_when_asked_directly(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    docs, problems = load_file(tmp_path / "pipe.yaml", "pipe.yaml")
    assert docs == [] and codes(problems) == [("TS118", "error")]
    specs, problems = load_files([tmp_path / "pipe.yaml"])
    assert specs == [] and codes(problems) == [("TS118", "error")]


def test_python_fifo_is_refused_before_it_is_run(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "spec.py")
    specs, problems = load_files([tmp_path / "spec.py"])
    assert specs == [] and codes(problems) == [("TS118", "error")]


def test_values_file_that_is_a_fifo_is_an_error(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "values.yaml")
    _values, problems = load_values([str(tmp_path / "values.yaml")])
    assert "TS118" in [d.code for d in problems]


def test_ignore_file_that_is_a_fifo_does_not_hang_the_walk(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    os.mkfifo(tmp_path / ".trainspecignore")
    files, _ = discover([str(tmp_path)])
    assert files == [str(tmp_path / "job.yaml")]


def test_self_looping_symlink_in_a_walk_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    files, problems = discover([str(tmp_path)])
    assert files == [] and codes(problems) == [("TS118", "warning")]
    assert "symbolic link" in problems[0].message and "loop" in problems[0].message


def test_self_looping_symlink_on_the_command_line_says_so(tmp_path: Path) -> None:
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    _, problems = discover([str(tmp_path / "loop.yaml")])
    assert codes(problems) == [("TS118", "error")]
    assert "no such file" not in problems[0].message and "loop" in problems[0].message


def test_broken_symlink_says_where_it_points(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").symlink_to("moved/job.yaml")
    _, problems = discover([str(tmp_path / "job.yaml")])
    assert codes(problems) == [("TS100", "error")]
    assert "moved/job.yaml" in problems[0].message


def test_symlinked_directory_is_not_followed_but_mentioned(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "job.yaml").write_text(JOB)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "shared").symlink_to(tmp_path / "real")
    files, problems = discover([str(tmp_path / "specs")])
    assert files == [] and codes(problems) == [("TS118", "warning")]
    assert "not followed" in problems[0].message


def test_ignored_entries_are_not_warned_about(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / ".trainspecignore").write_text("pipe.yaml\n")
    assert discover([str(tmp_path)]) == ([], [])


def test_over_long_name_on_the_command_line_is_a_diagnostic(tmp_path: Path) -> None:
    name = str(tmp_path / ("a" * 300 + ".yaml"))
    specs, problems = load_specs([name])
    assert specs == [] and codes(problems) == [("TS119", "error")]
    assert problems[0].hint


def test_over_long_path_in_a_walk_is_a_diagnostic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit = os.pathconf(tmp_path, "PC_PATH_MAX")
    deep = tmp_path
    monkeypatch.chdir(tmp_path)  # build the chain relative to the last directory: absolute paths exceed PATH_MAX
    part = "d" * 200
    while len(str(deep)) <= limit + 300:
        os.mkdir(part)
        os.chdir(part)
        deep = deep / part
    Path("job.yaml").write_text(JOB)
    os.chdir(tmp_path)
    files, problems = discover([str(tmp_path)])
    assert files == []
    assert [d.code for d in problems] == ["TS119"] and problems[0].is_error


def test_nul_byte_in_a_path_is_a_diagnostic() -> None:
    _, problems = discover(["a\x00b.yaml"])
    assert [d.code for d in problems] == ["TS100"]


def test_upper_case_extensions_are_loaded(tmp_path: Path) -> None:
    (tmp_path / "a.YAML").write_text(JOB)
    (tmp_path / "b.Yml").write_text(JOB.replace("ddp-cpu", "ddp-two"))
    files, problems = discover([str(tmp_path)])
    assert [Path(f).name for f in files] == ["a.YAML", "b.Yml"] and problems == []
    specs, problems = load_files(files)
    assert sorted(s.name for s in specs) == ["ddp-cpu", "ddp-two"]


def test_upper_case_python_extension_is_a_python_spec(tmp_path: Path) -> None:
    (tmp_path / "spec.PY").write_text((EXAMPLES / "python" / "ddp_cpu.py").read_text())
    files, _ = discover([str(tmp_path)])
    specs, problems = load_files(files)
    assert [s.name for s in specs] == ["ddp-cpu"] and not [d for d in problems if d.is_error]


def test_unreadable_directory_is_reported(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads directories without read permission")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "job.yaml").write_text(JOB)
    locked.chmod(0)
    try:
        _, problems = discover([str(tmp_path)])
    finally:
        locked.chmod(0o755)
    assert [d.code for d in problems] == ["TS100"]


def test_same_file_through_two_names_is_loaded_once(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    (tmp_path / "alias.yaml").symlink_to("job.yaml")
    files, problems = discover([str(tmp_path), str(tmp_path / "job.yaml")])
    assert len(files) == 1 and problems == []


def test_every_new_walk_code_is_registered() -> None:
    assert {"TS118", "TS119"} <= set(CODES)


def test_cli_validate_on_a_fifo_exits_1_without_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    proc = run_cli("validate", str(tmp_path / "pipe.yaml"))
    assert proc.returncode == 1, proc.stderr
    assert "error[TS118]" in proc.stdout and "Traceback" not in proc.stderr


def _odd_tree(root: Path) -> Path:
    """Hidden entries, a .trainspecignore, a symlink loop, a FIFO, a non-UTF-8 and a C1 name."""
    tree = root / "tree"
    (tree / ".hidden-dir").mkdir(parents=True)
    (tree / "sub").mkdir()
    for rel in ("a.yaml", ".hidden.yaml", ".hidden-dir/b.yaml", "ignored.yaml", "sub/c.yml"):
        (tree / rel).write_text(JOB.replace("name: ddp-cpu\n", f"name: {rel.replace('/', '-')[-12:]}\n"))
    (tree / ".trainspecignore").write_text("ignored.yaml\n")
    os.symlink("loop.yaml", tree / "loop.yaml")
    os.mkfifo(tree / "pipe.yaml")
    (tree / os.fsdecode(b"caf\xe9.yaml")).write_text(JOB.replace("name: ddp-cpu\n", "name: cafe\n"))
    (tree / os.fsdecode(b"\xc2\x85.yaml")).write_text(JOB)  # U+0085, a C1 control: TS124
    return tree


def test_every_command_walks_a_directory_alike(tmp_path: Path) -> None:
    """``compile DIR`` (the load pass), ``check --cluster DIR`` and ``migrate DIR`` (kueue.located)
    walk with one walker: the same files and the same warnings for the same tree."""
    from trainspec.kueue.located import yaml_files

    tree = _odd_tree(tmp_path)
    specs, spec_problems = discover([str(tree)])
    manifests, manifest_problems = yaml_files([tree])
    assert manifests == specs
    assert [Path(p).relative_to(tree).as_posix() for p in specs] == ["a.yaml", "caf\udce9.yaml", "sub/c.yml"]
    assert [(d.code, d.severity.value, d.file) for d in manifest_problems] == [
        (d.code, d.severity.value, d.file) for d in spec_problems
    ]
    assert sorted(d.code for d in spec_problems) == ["TS118", "TS118", "TS124"]


def test_every_command_reports_a_walk_alike(tmp_path: Path) -> None:
    tree = _odd_tree(tmp_path)
    runs = {
        "compile": run_cli("compile", str(tree), "-o", "-", "--no-project", cwd=tmp_path),
        "check --cluster": run_cli(
            "check", str(EXAMPLES / "ddp-cpu.yaml"), "--cluster", str(tree), "--no-project", cwd=tmp_path
        ),
        "migrate": run_cli("migrate", str(tree), cwd=tmp_path),
    }
    walked = {}
    for command, proc in runs.items():
        assert "Traceback" not in proc.stderr, (command, proc.stderr)
        text = proc.stdout + proc.stderr
        walked[command] = sorted(line for line in text.splitlines() if "[TS118]" in line or "[TS124]" in line)
    assert len(walked["compile"]) == 3 and walked["check --cluster"] == walked["compile"] == walked["migrate"]


def test_the_one_safe_reader_refuses_what_could_block_or_was_planted(tmp_path: Path) -> None:
    """trainspec.dsl.load.safe_read: every reader of the package (specs, manifests, the output tree)."""
    from trainspec.dsl.load.safe_read import FileTooLarge, NotRegularFile, peek_file, read_file

    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "file").write_bytes(b"12345")
    os.symlink("file", tmp_path / "link")
    with pytest.raises(NotRegularFile):
        read_file(tmp_path / "pipe")  # no writer: a blocking open would never return
    with pytest.raises(FileTooLarge) as big:
        read_file(tmp_path / "file", 4)
    assert big.value.size == 5 and read_file(tmp_path / "file", 5) == b"12345"
    assert read_file(tmp_path / "link") == b"12345"
    with pytest.raises(OSError, match="symbolic links"):  # ELOOP
        read_file(tmp_path / "link", follow_symlinks=False)  # the output tree's scan saw a file here
    with pytest.raises(IsADirectoryError):
        read_file(tmp_path)
    assert peek_file(tmp_path / "file", 2) == b"12" and peek_file(tmp_path / "pipe", 2) is None


def test_the_safe_reader_reads_files_whose_size_is_not_what_fstat_said(tmp_path: Path) -> None:
    """A file that grew after ``fstat`` (or one like /proc's that says 0) is read to its end, and
    still only as far as the cap."""
    from trainspec.dsl.load import safe_read

    data = bytes(range(256)) * 1000  # longer than one chunk after the size hint
    (tmp_path / "grew").write_bytes(data)
    fd = os.open(tmp_path / "grew", os.O_RDONLY)
    try:
        assert safe_read._read_up_to(fd, 10, None) == data  # fstat said 10 bytes
        os.lseek(fd, 0, os.SEEK_SET)
        assert safe_read._read_up_to(fd, 0, 70_000) == data[:70_000]
        os.lseek(fd, 0, os.SEEK_SET)
        assert safe_read._read_up_to(fd, len(data), len(data) + 1) == data
    finally:
        os.close(fd)
    if os.path.exists("/proc/self/status"):  # a regular file whose st_size is 0
        assert safe_read.read_file("/proc/self/status", 1 << 20).startswith(b"Name:")


def test_the_safe_reader_allocates_the_file_not_the_cap(tmp_path: Path) -> None:
    """Reading a small file under a 16 MiB cap must not allocate 16 MiB (it did: a buffer of the
    cap per file read, which cost more than the read)."""
    import tracemalloc

    from trainspec.dsl.load.safe_read import peek_file, read_file

    (tmp_path / "small.yaml").write_bytes(b"kind: TrainingJob\n" * 10)
    tracemalloc.start()
    try:
        assert read_file(tmp_path / "small.yaml", 16 << 20).startswith(b"kind")
        assert peek_file(tmp_path / "small.yaml", 16 << 20) is not None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
