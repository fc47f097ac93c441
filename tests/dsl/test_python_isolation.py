"""Python specs run in a supervised child process, only where Python is allowed.

What the child hands back is data the parent checks (trainspec.dsl.load.python.protocol) and validates again
through the models; ``--no-python`` and the project's ``spec.python`` keep code from running at
all; file names with control characters are refused before they are read. The corpus of hostile
modules run through the gate commands is tests/dsl/test_hostile_corpus.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import trainspec
from tests.conftest import EXAMPLES, ROOT, run_cli
from trainspec.compiler.pipeline import Options, Stop, run
from trainspec.dsl.load.discovery import discover, escape_name
from trainspec.dsl.load.python import protocol as pyprotocol, supervisor as pysupervisor
from trainspec.dsl.load.python.child import MEMORY_LIMIT
from trainspec.dsl.load.python.execute import plain
from trainspec.dsl.load.python.permission import decide
from trainspec.dsl.load.python.trace import _dump_line
from trainspec.dsl.load.spec_sources import load_files, load_specs
from trainspec.dsl.spec.models import Runtime, TrainingJob

JOB = textwrap.dedent("""\
    from pathlib import Path

    from trainspec import Resources, TrainingJob

    Path(__file__).with_name("ran.marker").write_text("the module ran")
    job = TrainingJob(
        name="py-job",
        namespace="team",
        runtime="trainspec-torch",
        image="example.com/t:1",
        nodes=1,
        resources_per_node=Resources(cpu=1, memory="1Gi"),
    )
    """)
PROJECT = "apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec: {python: %s}\n"


def spec_dir(tmp_path: Path, module: str = JOB) -> Path:
    """specs/ with a valid YAML job and a Python spec module that leaves a marker when it runs."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "job.py").write_text(module)
    (specs / "ddp.yaml").write_text((EXAMPLES / "ddp-cpu.yaml").read_text())
    (specs / "train.py").write_text("from trainspec.stages import my_shards\nprint(my_shards())\n")  # not a spec
    return specs


def codes(report: str) -> list[tuple[str, str, str, int | None]]:
    return [(d["code"], d["severity"], d["file"], d["line"]) for d in json.loads(report)["diagnostics"]]


# -- --no-python and spec.python --------------------------------------------------------------------


@pytest.mark.parametrize(
    "words", [["validate"], ["compile", "-o", "-"], ["check"], ["explain"], ["run", "--local"], ["submit"]]
)
def test_every_command_that_reads_specs_takes_no_python(words: list[str]) -> None:
    from trainspec.cli.main import build_parser

    args = build_parser(words[0]).parse_args([*words, "specs/", "--no-python"])
    assert args.no_python is True


def test_no_python_runs_no_module_and_each_spec_module_is_an_error(tmp_path: Path) -> None:
    specs = spec_dir(tmp_path)
    proc = run_cli("validate", "specs", "--no-project", "--no-python", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1
    assert codes(proc.stdout) == [("TS123", "error", "specs/job.py", 1)]  # train.py is no spec: not named
    assert not (specs / "ran.marker").exists()
    proc = run_cli("validate", "specs/ddp.yaml", "--no-project", "--no-python", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout  # YAML alone: nothing to refuse


def test_without_no_python_the_module_runs(tmp_path: Path) -> None:
    specs = spec_dir(tmp_path)
    proc = run_cli("validate", "specs", "--no-project", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (specs / "ran.marker").exists()


@pytest.mark.parametrize(
    ("setting", "flag", "status", "severity", "ran"),
    [
        ("deny", [], 1, "error", False),
        ("warn", [], 0, "warning", False),
        ("allow", [], 0, None, True),
        ("allow", ["--no-python"], 1, "error", False),  # the flag wins
        ("warn", ["--no-python"], 1, "error", False),
    ],
)
def test_the_project_setting_and_the_flag(
    tmp_path: Path, setting: str, flag: list[str], status: int, severity: str | None, ran: bool
) -> None:
    specs = spec_dir(tmp_path)
    (tmp_path / "trainspec.yaml").write_text(PROJECT % setting)
    proc = run_cli("validate", "specs", *flag, "--format", "json", cwd=tmp_path)
    assert proc.returncode == status, proc.stdout + proc.stderr
    found = [d for d in codes(proc.stdout) if d[0] == "TS123"]
    assert found == ([("TS123", severity, "specs/job.py", 1)] if severity else [])
    assert (specs / "ran.marker").exists() is ran


def test_a_project_file_that_cannot_be_read_runs_no_module(tmp_path: Path) -> None:
    specs = spec_dir(tmp_path)
    (tmp_path / "trainspec.yaml").write_text(PROJECT % "allow" + "  unknownSetting: 1\n")
    proc = run_cli("validate", "specs", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1
    assert ("TS123", "error", "specs/job.py", 1) in codes(proc.stdout)
    assert not (specs / "ran.marker").exists()


def test_a_project_document_among_the_inputs_counts(tmp_path: Path) -> None:
    specs = spec_dir(tmp_path)
    (specs / "project.yaml").write_text(PROJECT % "deny")
    _, problems = load_specs([str(specs)])
    assert [(d.code, d.severity.value) for d in problems] == [("TS123", "error")]
    assert not (specs / "ran.marker").exists()


def test_the_library_option(tmp_path: Path) -> None:
    specs = spec_dir(tmp_path)
    result = run([str(specs)], Options(project=None, python="deny", stop=Stop.CHECK))
    assert [d.code for d in result.diagnostics] == ["TS123"] and not result.ok
    assert not (specs / "ran.marker").exists()
    result = run([str(specs)], Options(project=None, stop=Stop.CHECK))
    assert result.ok and {s.name for s in result.specs} == {"py-job", "ddp-cpu"}


def test_the_policy_is_the_strictest_of_the_projects() -> None:
    from trainspec.dsl.spec.project import Project, PythonPolicy

    def project(value: str) -> Project:
        return Project.model_validate({"spec": {"python": value}})

    assert decide(None, None, None, [])[0] is PythonPolicy.ALLOW
    assert decide(None, project("warn"), None, [])[0] is PythonPolicy.WARN
    assert decide("allow", project("deny"), None, [])[0] is PythonPolicy.ALLOW  # the option wins
    assert decide("deny", None, None, [])[1] == "Python is not allowed in this run (--no-python)"


def test_objects_built_by_the_caller_never_start_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a process was started")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    job = trainspec.TrainingJob(name="lib", runtime="trainspec-torch", nodes=1)
    assert trainspec.compile(job, project=None).ok


def test_validating_yaml_alone_imports_nothing_of_the_supervisor() -> None:
    code = (
        "import sys; from trainspec.cli.main import main; code = main(['validate', '-q', 'examples/ddp-cpu.yaml']); "
        "print(code, sorted(m for m in sys.modules if m.startswith('trainspec.dsl.py')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 []"


# -- file names -------------------------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\n", "\r", "\t", "\x1b", "\x7f", "\x85", "\u202e", "\u2066", "\u2028"])
def test_a_file_name_with_a_control_character_is_refused_unread(tmp_path: Path, char: str) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / f"bad{char}.yaml").write_text("kind: [unclosed\n")  # read, it would be a syntax error
    (specs / f"mod{char}.py").write_text(JOB)
    (specs / f"dir{char}").mkdir()
    (specs / f"dir{char}" / "inner.yaml").write_text("kind: [unclosed\n")
    files, problems = discover([str(specs)])
    assert files == []
    assert sorted(d.code for d in problems) == ["TS124"] * 3
    for problem in problems:
        assert char not in problem.file and escape_name(char) in problem.file and problem.is_error
    named = specs / f"bad{char}.yaml"
    files, problems = discover([str(named)])
    assert files == [] and [d.code for d in problems] == ["TS124"]
    assert not list(specs.glob("*.marker"))


def test_refusals_show_the_name_escaped() -> None:
    assert escape_name("a\nb\tc\x1bd\u202ee") == "a\\nb\\tc\\x1bd\\u202ee"
    assert escape_name("plain-é.yaml") == "plain-é.yaml"


# -- what comes back ---------------------------------------------------------------------------------


def test_the_specs_come_back_as_they_were_built(tmp_path: Path) -> None:
    path = tmp_path / "job.py"
    path.write_text(JOB)
    (loaded,), problems = load_files([path])
    assert problems == []
    namespace: dict = {"__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102 (our own test module)
    assert loaded.spec == namespace["job"] and loaded.origin.line == 6
    assert loaded.spec.model_fields_set == namespace["job"].model_fields_set
    assert loaded.has(("spec", "nodes")) and not loaded.has(("spec", "queue"))


def test_every_example_spec_round_trips_through_plain_data() -> None:
    from trainspec.runtimes import builtin_names, builtin_runtime

    specs = [s.spec for s in load_specs([str(EXAMPLES)])[0] if isinstance(s.spec, (Runtime, TrainingJob))]
    specs += [builtin_runtime(name).spec for name in builtin_names()]  # type: ignore[union-attr]
    assert len(specs) > 10
    for spec in specs:
        back = type(spec).model_validate(json.loads(json.dumps(plain(spec))))
        assert back == spec and _fields_set(back) == _fields_set(spec)


def _fields_set(model: object, path: tuple = ()) -> dict:
    from trainspec.dsl.framework.modeling import Model

    out = {path: frozenset(model.model_fields_set)}  # type: ignore[attr-defined]
    for name, value in vars(model).items():
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in [(None, value), *items]:
            if isinstance(item, Model):
                out.update(_fields_set(item, (*path, name, key)))
    return out


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "nothing was handed back"),
        (b"trainspec-result x\n{}", "does not start with its header"),
        (b"trainspec-result 10\n{}", "cut short"),
        (b"trainspec-result 2\n{}{}", "more data followed"),
    ],
)
def test_frames_that_are_not_whole_are_refused(data: bytes, reason: str) -> None:
    body, problem = pyprotocol.split_frame(data)
    assert body is None and problem is not None and reason in problem


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b"{}",
        b'{"specs": [], "error": null}',
        b'{"specs": [{"kind": "Secret", "data": {}}], "error": null, "output": {"pieces": [], "dropped": 0}}',
        b'{"specs": [], "error": null, "output": {"pieces": [[1, "stdin", "x"]], "dropped": 0}}',
        b'{"specs": [], "error": {"type": 1}, "output": {"pieces": [], "dropped": 0}}',
        b'{"specs": [], "error": null, "output": {"pieces": [], "dropped": ' + b"9" * 5000 + b"}}",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"specs": [], "error": null, "output": {"pieces": [], "dropped": 0}}\xff',
    ],
)
def test_malformed_results_are_refused(body: bytes) -> None:
    payload, problem = pyprotocol.decode(body)
    assert payload is None and problem


def test_a_well_formed_result_is_read() -> None:
    frame = pyprotocol.encode(
        {
            "specs": [{"kind": "TrainingJob", "line": 3, "data": {"metadata": {"name": "a"}}}],
            "error": None,
            "output": {"pieces": [[2, "stdout", "hi\n"], [None, "stderr", "x"]], "dropped": 7},
        }
    )
    body, _ = pyprotocol.split_frame(frame)
    payload, problem = pyprotocol.decode(body or b"")
    assert problem is None and payload is not None
    assert payload.specs[0].line == 3 and payload.dropped == 7 and payload.pieces[0].stream == "stdout"


# -- supervision --------------------------------------------------------------------------------------


def test_a_module_that_ignores_every_alarm_is_stopped_by_the_parent(tmp_path: Path) -> None:
    path = tmp_path / "spec.py"
    path.write_text(
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nsignal.alarm(0)\nwhile True:\n    pass\n"
    )
    started = time.monotonic()
    _, problems = load_files([path], python_timeout=0.5)
    assert time.monotonic() - started < 10
    ((code, line),) = [(d.code, d.line) for d in problems]
    assert code == "TS115" and line in (4, 5)


def test_the_child_has_a_memory_limit_and_no_core_dumps(tmp_path: Path) -> None:
    path = tmp_path / "spec.py"
    path.write_text(
        "import resource\nprint(resource.getrlimit(resource.RLIMIT_AS), resource.getrlimit(resource.RLIMIT_CORE))\n"
    )
    _, problems = load_files([path])
    notes = [note.message for d in problems for note in d.related]
    assert f"stdout: ({MEMORY_LIMIT}, {MEMORY_LIMIT}) (0, 0)" in notes


def test_interrupting_trainspec_kills_running_children(tmp_path: Path) -> None:
    path = tmp_path / "spec.py"
    path.write_text("import time\ntime.sleep(300)\n")
    result: list = []
    worker = threading.Thread(target=lambda: result.append(load_files([path], python_timeout=None)))
    worker.start()
    deadline = time.monotonic() + 30
    while not pysupervisor._running and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)  # the module is sleeping now
    pysupervisor.kill_running()
    worker.join(30)
    assert not worker.is_alive()
    ((_, (problem,)),) = result
    assert problem.code == "TS120" and "SIGKILL" in problem.message


def test_several_modules_run_side_by_side_and_keep_their_order(tmp_path: Path) -> None:
    paths = []
    for index in range(5):
        path = tmp_path / f"m{index}.py"
        path.write_text(JOB.replace("py-job", f"job-{index}").replace("ran.marker", f"ran{index}.marker"))
        paths.append(path)
    specs, problems = load_files(paths)
    assert problems == [] and [s.name for s in specs] == [f"job-{i}" for i in range(5)]


def test_faulthandler_dumps_locate_the_module_line() -> None:
    name = "/specs/déjà vu.py"
    dump = (
        "Timeout (0:00:01)!\n"
        "Thread 0x00007f0000000002 (most recent call first):\n"
        '  File "/specs/d\\xe9j\\xe0 vu.py", line 9 in worker\n'
        "Thread 0x00007f0000000001 (most recent call first):\n"
        '  File "/lib/helper.py", line 3 in wait\n'
        '  File "/specs/d\\xe9j\\xe0 vu.py", line 4 in <module>\n'
        '  File "/specs/d\\xe9j\\xe0 vu.py", line 1 in <module>\n'
    )
    assert _dump_line(dump, name) == 4  # the main thread (listed last), its innermost spec line
    crash = dump.replace("Timeout (0:00:01)!", "Fatal Python error: Segmentation fault").replace(
        "Thread 0x00007f0000000002", "Current thread 0x00007f0000000002"
    )
    assert _dump_line(crash, name) == 9  # the thread that crashed
