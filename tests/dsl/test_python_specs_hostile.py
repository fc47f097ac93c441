"""Python spec modules cannot corrupt output, hang, hide from walks or compile to nothing silently.

Issue 10, item 6 (``.py`` specs): output a module writes is captured (also below Python, at the
file-descriptor level) and shown as notes; a module that runs too long is stopped with a
located diagnostic; walks recognise every way of importing the API; specs kept in top-level
lists, tuples and dicts count; a module without specs gets a warning; running a module leaves
``sys.modules``, ``sys.path`` and the working directory as they were.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLES, run_cli
from trainspec.dsl.load.spec_sources import discover, load_files

HEADER = "from trainspec import Resources, TrainingJob\n"


def job(name: str = "py-job") -> str:
    return (
        f"TrainingJob(name={name!r}, runtime='trainspec-torch', image='example.com/t:1', nodes=1, "
        f"resources_per_node=Resources(cpu=1, memory='1Gi'))"
    )


def write(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(body))
    return path


def load(path: Path, **kwargs) -> tuple[list, list]:
    return load_files([path], **kwargs)


def by_code(problems: list, code: str) -> list:
    return [d for d in problems if d.code == code]


# -- output ------------------------------------------------------------------------------------------


def test_print_is_captured_and_reported_as_a_located_warning(tmp_path: Path, capfd) -> None:
    path = write(tmp_path, "spec.py", HEADER + f"job = {job()}\nprint('hello from the spec')\n")
    specs, problems = load(path)
    out, err = capfd.readouterr()
    assert "hello" not in out + err
    assert [s.name for s in specs] == ["py-job"]
    (warning,) = by_code(problems, "TS116")
    assert not warning.is_error and (warning.line, warning.column) == (3, 1)
    assert any("hello from the spec" in note.message for note in warning.related)


def test_fd_level_and_subprocess_output_is_captured(tmp_path: Path, capfd) -> None:
    path = write(
        tmp_path,
        "spec.py",
        HEADER
        + textwrap.dedent(f"""\
        import os, subprocess, sys
        os.write(1, b"fd-one\\n")
        os.write(2, b"fd-two\\n")
        subprocess.run([sys.executable, "-c", "print('from-child')"], check=True)
        job = {job()}
        """),
    )
    specs, problems = load(path)
    out, err = capfd.readouterr()
    assert "fd-one" not in out + err and "from-child" not in out + err and "fd-two" not in out + err
    assert len(specs) == 1
    notes = " ".join(note.message for d in by_code(problems, "TS116") for note in d.related)
    assert "fd-one" in notes and "fd-two" in notes and "from-child" in notes


def test_a_child_that_keeps_writing_is_not_waited_for(tmp_path: Path, capfd) -> None:
    pid_file = tmp_path / "child.pid"
    path = write(
        tmp_path,
        "spec.py",
        HEADER
        + textwrap.dedent(f"""\
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c",
                                  "import time\\nwhile True:\\n    print('tick', flush=True)\\n    time.sleep(0.001)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        job = {job()}
        """),
    )
    result: list = []
    worker = threading.Thread(target=lambda: result.append(load(path)))
    worker.start()
    worker.join(60)  # a bound against a hung test run, not a timing assertion
    pid = int(pid_file.read_text())
    try:
        assert not worker.is_alive()
        ((specs, problems),) = result
        # The child's process group is killed once it has handed back its specs; a process left running is an error.
        assert len(specs) == 1 and by_code(problems, "TS122")
    finally:
        try:  # killed with the child's process group already
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    assert "tick" not in capfd.readouterr().out


def test_captured_output_is_truncated(tmp_path: Path, capfd) -> None:
    path = write(tmp_path, "spec.py", HEADER + f"job = {job()}\nfor i in range(20000):\n    print('x' * 100)\n")
    _, problems = load(path)
    capfd.readouterr()
    (warning,) = by_code(problems, "TS116")
    size = sum(len(note.message) for note in warning.related)
    assert len(warning.related) <= 12 and size < 4000
    assert "truncated" in warning.related[-1].message


def test_compile_to_stdout_and_json_stay_clean(tmp_path: Path) -> None:
    noisy = (EXAMPLES / "python" / "ddp_cpu.py").read_text() + textwrap.dedent("""
        import os
        print('py-noise')
        os.write(1, b'fd-noise\\n')
        """)
    write(tmp_path, "noisy.py", noisy)
    proc = run_cli("compile", str(tmp_path / "noisy.py"), "-o", "-", "--no-project")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "noise" not in proc.stdout
    documents = [d for d in yaml.safe_load_all(proc.stdout) if d]
    assert documents and all("kind" in d for d in documents)
    proc = run_cli("validate", "--format", "json", str(tmp_path / "noisy.py"), "--no-project")
    report = json.loads(proc.stdout)  # the whole of stdout is one JSON document
    assert "TS116" in [d["code"] for d in report["diagnostics"]]


# -- time limit --------------------------------------------------------------------------------------


def test_infinite_loop_is_stopped_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "spec.py", HEADER + f"job = {job()}\nwhile True:\n    pass\n")
    specs, problems = load(path, python_timeout=0.5)
    assert specs == []
    (diag,) = [d for d in problems if d.is_error]
    assert diag.code == "TS115" and diag.line in (3, 4) and diag.column == 1
    assert "0.5" in diag.message and diag.hint


def test_a_loop_that_catches_exception_is_still_stopped(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "spec.py",
        """\
        import time
        while True:
            try:
                time.sleep(0.01)
            except Exception:
                pass
        """,
    )
    _specs, problems = load(path, python_timeout=0.3)
    assert [d.code for d in problems if d.is_error] == ["TS115"]


def test_blocking_call_in_a_helper_is_located_at_the_spec_line(tmp_path: Path) -> None:
    write(tmp_path, "helper.py", "import time\ndef wait():\n    time.sleep(3600)\n")
    path = write(tmp_path, "spec.py", "import helper\n\n\nhelper.wait()\n")
    _, problems = load(path, python_timeout=0.3)
    (diag,) = [d for d in problems if d.is_error]
    assert (diag.code, diag.line) == ("TS115", 4)


def test_time_limit_outside_the_main_thread_uses_the_trace_fallback(tmp_path: Path) -> None:
    path = write(tmp_path, "spec.py", "n = 0\nwhile True:\n    n += 1\n")
    result: list = []
    worker = threading.Thread(target=lambda: result.append(load(path, python_timeout=0.3)))
    worker.start()
    worker.join(60)  # a bound against a hung test run, not a timing assertion
    assert not worker.is_alive()
    ((_, problems),) = result
    (diag,) = [d for d in problems if d.is_error]
    assert diag.code == "TS115" and diag.line in (2, 3)


def test_time_limit_restores_an_outer_alarm_handler(tmp_path: Path) -> None:
    import signal

    path = write(tmp_path, "spec.py", HEADER + f"job = {job()}\n")

    def outer(signum, frame):  # pragma: no cover - never fires
        raise AssertionError

    previous = signal.signal(signal.SIGALRM, outer)
    try:
        load(path, python_timeout=5)
        assert signal.getsignal(signal.SIGALRM) is outer
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_input_does_not_wait_for_the_terminal(tmp_path: Path) -> None:
    path = write(tmp_path, "spec.py", "name = input()\n")
    _, problems = load(path, python_timeout=5)
    assert [d.code for d in problems if d.is_error] == ["TS112"]


# -- walks -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "import trainspec as ts\njob = ts.TrainingJob(name='a', runtime='r')\n",
        "import trainspec\njob = trainspec.TrainingJob(name='a', runtime='r')\n",
        "from trainspec import TrainingJob as TJ\njob = TJ(name='a', runtime='r')\n",
        "from trainspec.dsl.spec.models import TrainingJob\njob = TrainingJob(name='a', runtime='r')\n",
        "from trainspec.dsl import models\njob = models.Runtime(name='a', framework='torch')\n",
        "import trainspec.dsl.spec.models as m\njob = m.TrainingJob(name='a', runtime='r')\n",
        "from trainspec import *\njob = Runtime(name='a', framework='torch')\n",
        "from trainspec import TrainingJob\njobs = [TrainingJob.model_validate({})]\n",
        "from trainspec import (\n    TrainingJob,\n)\n\ndef build():\n    return TrainingJob(name='a', runtime='r')\n",
    ],
)
def test_walks_find_every_import_style(tmp_path: Path, source: str) -> None:
    write(tmp_path, "spec.py", source)
    files, _ = discover([str(tmp_path)])
    assert [Path(f).name for f in files] == ["spec.py"]


@pytest.mark.parametrize(
    "source",
    [
        "from trainspec.stages import my_shards\nfor shard in my_shards():\n    pass\n",
        "import torch\nmodel = torch.nn.Linear(2, 2)\n",
        "from trainspec import Resources\nr = Resources(cpu=1)\n",
        "# from trainspec import TrainingJob\n# TrainingJob(name='x')\n",
        "s = 'from trainspec import TrainingJob; TrainingJob()'\n",
        "from mylib import TrainingJob\njob = TrainingJob()\n",
    ],
)
def test_walks_leave_training_scripts_alone(tmp_path: Path, source: str) -> None:
    write(tmp_path, "train.py", source)
    assert discover([str(tmp_path)]) == ([], [])


def test_walk_keeps_a_spec_module_with_a_syntax_error_so_it_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "spec.py", "from trainspec import TrainingJob\njob = TrainingJob(name='a'\n")
    files, _ = discover([str(tmp_path)])
    _, problems = load_files(files)
    assert [d.code for d in problems] == ["TS112"]


# -- what counts as a spec ---------------------------------------------------------------------------


def test_specs_in_top_level_lists_tuples_and_dicts_are_collected(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "spec.py",
        HEADER
        + f"""\
jobs = [{job("a")}, {job("b")}]
pair = ({job("c")},)
by_env = {{"prod": {job("d")}}}
alias = jobs[0]
_hidden = [{job("e")}]
""",
    )
    specs, problems = load(path)
    assert sorted(s.name for s in specs) == ["a", "b", "c", "d"]
    assert not [d for d in problems if d.is_error]
    lines = {s.name: s.origin.line for s in specs}
    assert lines["a"] == 2 and lines["d"] == 4


def test_module_without_specs_gets_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path, "spec.py", HEADER + f"def make():\n    return {job()}\n")
    specs, problems = load(path)
    assert specs == []
    (warning,) = problems
    assert (warning.code, warning.severity.value, warning.line) == ("TS117", "warning", 1)
    assert "no TrainingJob, Runtime or Pipeline objects found" in warning.message
    assert "module-level" in warning.hint


# -- hygiene -----------------------------------------------------------------------------------------


def test_two_spec_directories_with_a_helper_of_the_same_name(tmp_path: Path) -> None:
    for team in ("a", "b"):
        (tmp_path / team).mkdir()
        write(tmp_path / team, "common.py", f"TEAM = {team!r}\n")
        write(
            tmp_path / team,
            "spec.py",
            HEADER + "import common\n" + f"job = {job()}\n".replace("'py-job'", "'team-' + common.TEAM"),
        )
    before_path, before_cwd = list(sys.path), os.getcwd()
    specs, problems = load_files([tmp_path / "a" / "spec.py", tmp_path / "b" / "spec.py"])
    assert sorted(s.name for s in specs) == ["team-a", "team-b"], problems
    assert "common" not in sys.modules
    assert sys.path == before_path and os.getcwd() == before_cwd


def test_a_module_that_changes_directory_and_sys_path_is_undone(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "spec.py",
        HEADER + "import os, sys\nos.chdir('/')\nsys.path.insert(0, '/nowhere')\n"
        "sys.argv = ['x']\n" + f"job = {job()}\n",
    )
    before = (list(sys.path), os.getcwd(), list(sys.argv))
    specs, _ = load(path)
    assert len(specs) == 1
    assert (list(sys.path), os.getcwd(), list(sys.argv)) == before


def test_a_failing_module_is_undone_too(tmp_path: Path) -> None:
    write(tmp_path, "helper2.py", "X = 1\n")
    path = write(tmp_path, "spec.py", "import helper2, os\nos.chdir('/')\nraise RuntimeError('boom')\n")
    before = (list(sys.path), os.getcwd())
    _, problems = load(path)
    assert [d.code for d in problems] == ["TS112"]
    assert (list(sys.path), os.getcwd()) == before and "helper2" not in sys.modules
