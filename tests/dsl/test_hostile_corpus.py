"""A gate that cannot be fooled: every module of ``hostile_py/`` through the four gate commands.

Each module builds the same job as a well-behaved module, then does one hostile thing (ends its
process, hangs, forks, floods its output, tampers with trainspec, changes its objects behind the
models' back...). Its first line says what must come of it:

* ``# corpus: TSnnn`` (or ``TSnnn|TSmmm``): a diagnostic with that code at the module's file,
  located (line and column), an error unless the code is a warning's (TS117);
* ``# corpus: same [TSnnn...]``: the module's specs, exactly those of the well-behaved module,
  with at most the warnings named.

Every module runs beside a broken YAML spec, through ``validate``, ``compile -o -``,
``compile -o DIR --check`` and ``check``, as a user runs them (a subprocess, ``--format json``,
a short ``--python-timeout``). Whatever the module does, each run exits 1 with the broken spec's
diagnostic, its output is exactly one JSON report (no duplicate, no noise, no traceback), and it
ends well before the subprocess timeout. The runs go a few at a time, once for the whole file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).parent / "hostile_py"
HELPERS = ("corpus_helper.py", "corpus_broken_helper.py")
MODULES = sorted(p.stem for p in CORPUS.glob("*.py") if p.name not in HELPERS)
LIMIT = 1.0  # --python-timeout of every run
#: A run that takes this long has hung: far above the limit, the start-up and a loaded machine.
HUNG = 60
COMMANDS = {
    "validate": ["validate", "specs"],
    "compile-stdout": ["compile", "specs", "-o", "-"],
    "compile-check": ["compile", "specs", "-o", "deploy", "--check"],
    "check": ["check", "specs"],
}
COMMON = ["--no-project", "--python-timeout", str(LIMIT), "--format", "json"]
BROKEN = ("specs/broken.yaml", "TS200", 9, 3)
WARNINGS = {"TS116", "TS117"}
WELL_BEHAVED = '''"""The job every corpus module builds, without anything hostile."""

from trainspec import Resources, TrainingJob

job = TrainingJob(
    name="corpus-job",
    namespace="corpus",
    runtime="trainspec-torch",
    image="example.com/train:1",
    command=["python", "train.py"],
    nodes=1,
    resources_per_node=Resources(cpu=1, memory="1Gi"),
)
'''


def expectation(module: str) -> tuple[str, set[str]]:
    """("same", warnings allowed) or ("diagnostic", codes any one of which is expected)."""
    first = (CORPUS / f"{module}.py").read_text().splitlines()[0]
    assert first.startswith("# corpus: "), module
    words = first.removeprefix("# corpus: ").split()
    if words[0] == "same":
        return "same", set(words[1:])
    return "diagnostic", set(words[0].split("|"))


class Run:
    """One command over one module: exit status, streams, wall time."""

    def __init__(self, module: str, command: str, root: Path) -> None:
        self.module, self.command = module, command
        here = root / f"{module}-{command}"
        specs = here / "specs"
        specs.mkdir(parents=True)
        shutil.copy(CORPUS / f"{module}.py", specs / f"{module}.py")
        for helper in HELPERS:
            shutil.copy(CORPUS / helper, specs / helper)
        shutil.copy(EXAMPLES / "invalid" / "TS200-unknown-field.yaml", specs / "broken.yaml")
        started = time.monotonic()
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "trainspec", *COMMANDS[command], *COMMON],
                cwd=here,
                capture_output=True,
                timeout=HUNG,
                check=False,
                start_new_session=True,  # a gate that let a module signal its group must not take pytest with it
            )
        except subprocess.TimeoutExpired:
            self.hung, self.status, self.out, self.err = True, None, "", ""
        else:
            self.hung, self.status = False, proc.returncode
            self.out = proc.stdout.decode("utf-8", errors="replace")
            self.err = proc.stderr.decode("utf-8", errors="replace")
        self.seconds = time.monotonic() - started

    @property
    def report(self) -> dict:
        """The one JSON report of the run (stdout for validate/check, stderr for compile)."""
        stream = self.err if self.command.startswith("compile") else self.out
        return json.loads(stream)  # the whole stream: noise or a second report fails here


def _run_all(root: Path) -> dict[tuple[str, str], Run]:
    jobs = [(module, command) for module in MODULES for command in COMMANDS]
    # A few at a time: most of a run is a CLI start-up; hanging modules wait for their limit.
    with ThreadPoolExecutor(max_workers=max(2, min(6, 2 * (os.cpu_count() or 1)))) as pool:
        runs = list(pool.map(lambda job: Run(*job, root), jobs))
    return {(run.module, run.command): run for run in runs}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Run]:
    return _run_all(tmp_path_factory.mktemp("corpus"))


def loaded_alone(here: Path, source: str) -> list:
    """The specs of one module on its own, through the library (the same supervised child)."""
    from trainspec.dsl.load.spec_sources import load_files

    here.mkdir(parents=True)
    (here / "job.py").write_text(source)
    for helper in HELPERS:
        shutil.copy(CORPUS / helper, here / helper)
    specs, problems = load_files([here / "job.py"], python_timeout=5)
    assert not [d for d in problems if d.is_error], problems
    return [loaded.spec for loaded in specs]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list:
    """The specs of the well-behaved module."""
    return loaded_alone(tmp_path_factory.mktemp("reference") / "specs", WELL_BEHAVED)


def test_the_corpus_is_large_and_every_module_says_what_it_expects() -> None:
    assert len(MODULES) >= 40
    for module in MODULES:
        expectation(module)


@pytest.mark.parametrize("module", MODULES)
def test_a_hostile_module_cannot_fool_the_gate(runs: dict, reference: list, module: str, tmp_path: Path) -> None:
    kind, codes = expectation(module)
    for command in COMMANDS:
        run = runs[module, command]
        where = f"{module} through {command}"
        assert not run.hung, f"{where}: still running after {HUNG}s"
        assert run.status == 1, f"{where}: exit {run.status}\n{run.out}\n{run.err}"
        assert "Traceback" not in run.out + run.err, where
        if command.startswith("compile"):
            assert run.out == "", f"{where}: compile printed manifests despite errors"
        diagnostics = run.report["diagnostics"]
        broken = [(d["file"], d["code"], d["line"], d["column"]) for d in diagnostics if d["file"] == BROKEN[0]]
        assert broken == [BROKEN], f"{where}: the broken spec's diagnostic is missing or doubled: {broken}"
        ours = [d for d in diagnostics if d["file"] == f"specs/{module}.py"]
        assert len(ours) == len({json.dumps(d, sort_keys=True) for d in ours}), f"{where}: a diagnostic twice"
        if kind == "same":
            assert {d["code"] for d in ours} <= codes, f"{where}: {ours}"
            assert all(d["severity"] == "warning" for d in ours), f"{where}: {ours}"
        else:
            found = [d for d in ours if d["code"] in codes]
            assert found, f"{where}: expected one of {sorted(codes)}, got {ours}"
            for d in found:
                assert d["line"] and d["column"], f"{where}: not located: {d}"
                assert d["severity"] == ("warning" if d["code"] in WARNINGS else "error"), f"{where}: {d}"
    if kind == "same":  # on its own, the module hands back what the well-behaved one does
        specs = loaded_alone(tmp_path / "specs", (CORPUS / f"{module}.py").read_text())
        assert specs == reference and len(reference) == 1
        assert specs[0].model_dump(mode="json") == reference[0].model_dump(mode="json")


def test_no_run_waits_long_past_the_limit(runs: dict) -> None:
    """The limit is enforced by trainspec: even a module that stops signals or stops itself ends there."""
    slowest = max(runs.values(), key=lambda run: run.seconds)
    assert slowest.seconds < LIMIT + 15, f"{slowest.module} through {slowest.command}: {slowest.seconds:.1f}s"
