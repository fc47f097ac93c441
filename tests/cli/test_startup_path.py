"""What a command's start-up does not pay for, and the collector work a large run is spared.

Timing belongs in bench/ (bench/startup.py, bench/validate_many.py); these tests bound what the
figures rest on: the modules validate imports, the parser it builds, the exit, and how often the
cyclic collector walks the heap during a run.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

from trainspec.cli import main as cli
from trainspec.compiler import pipeline
from trainspec.compiler.pipeline import Options, Stop, run

ROOT = Path(__file__).resolve().parents[2]
#: Modules validate's path used to import and does not need: standard-library ones, and
#: trainspec's checkpoint sizing (only for ``size: auto``) and observability rules (only for a
#: job with a PodMonitor or pod labels).
NOT_ON_VALIDATES_PATH = (
    "dataclasses",
    "inspect",
    "ast",
    "dis",
    "tokenize",
    "shutil",
    "json",
    "difflib",
    "lzma",
    "bz2",
    "trainspec.compiler.sizing",
    "trainspec.compiler.memory_model",
    "trainspec.compiler.observability.observability_rules",
)
#: All that ``trainspec --help`` imports of trainspec (it lists the commands without importing them).
HELP_IMPORTS = ["trainspec", "trainspec.cli", "trainspec.cli.main"]
#: Patterns validate of examples/ddp-cpu.yaml no longer compiles: the name rules and image
#: references are read without them, the others are compiled only for a value that needs them.
NOT_COMPILED = {
    "image reference": "IMAGE_REFERENCE_PATTERN",
    "DNS-1123 subdomain": "DNS1123_SUBDOMAIN_PATTERN",
    "DNS-1123 label": "DNS1123_LABEL_PATTERN",
    "RFC 1035 label": "DNS1035_LABEL_PATTERN",
    "label value": "LABEL_VALUE_PATTERN",
    "qualified name": "QUALIFIED_NAME_PATTERN",
}


def _imported_by(words: list[str], names: object) -> str:
    """The last line ``trainspec WORDS`` leaves in a fresh interpreter: its exit code and which of
    ``names`` (a Python expression) it imported (an editable install's import hook loads some
    modules before any command starts: those do not count)."""
    code = (
        "import sys\nbefore = set(sys.modules)\nfrom trainspec.cli.main import main\n"
        f"try:\n    code = main({words!r})\nexcept SystemExit as exc:\n    code = exc.code\n"
        f"print(code, sorted(m for m in {names} if m in sys.modules and m not in before))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_validate_imports_none_of_what_it_does_not_need() -> None:
    assert _imported_by(["validate", "-q", "examples/ddp-cpu.yaml"], repr(NOT_ON_VALIDATES_PATH)) == "0 []"


def test_validate_finds_and_names_files_without_pathlib() -> None:
    """``pathlib`` (with the ``urllib.parse`` and ``ipaddress`` it imports) cost validate about 5%
    of its start-up: the walk, the loader and the project-file search use strings. Run without
    the site hooks (``-S``): an editable install's import hook imports ``pathlib`` itself, so the
    usual check would count it as there before trainspec."""
    code = (
        f"import site, sys\nsys.path[:0] = [{str(ROOT)!r}]\nsys.path += site.getsitepackages()\n"
        "from trainspec.cli.main import main\n"
        "code = main(['validate', '-q', 'examples/ddp-cpu.yaml', 'examples/'])\n"
        "print(code, sorted(m for m in ('pathlib', 'urllib.parse', 'ipaddress') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 []"


def test_help_imports_no_command() -> None:
    got = _imported_by(["--help"], "[m for m in sys.modules if m.startswith('trainspec')]")
    assert got == f"0 {HELP_IMPORTS}"
    assert _imported_by(["--help"], "('yaml', 'pathlib', 'fractions')") == "0 []"


def test_validate_compiles_no_pattern_it_can_do_without() -> None:
    """Every ``re`` entry point is watched from before trainspec is imported: a pattern compiled at
    import (``re.compile``) or on first use (``re.fullmatch(PATTERN, ...)``) is seen alike."""
    code = (
        "import re, sys\nseen = set()\n"
        "def watch(real):\n"
        "    def spy(pattern, *args, **kwargs):\n"
        "        seen.add(getattr(pattern, 'pattern', pattern))\n"
        "        return real(pattern, *args, **kwargs)\n"
        "    return spy\n"
        "for name in ('compile', 'match', 'fullmatch', 'search', 'sub', 'split', 'finditer', 'findall'):\n"
        "    setattr(re, name, watch(getattr(re, name)))\n"
        "from trainspec.cli.main import main\n"
        "from trainspec.dsl import kube_facts\n"
        "code = main(['validate', '-q', 'examples/ddp-cpu.yaml'])\n"
        f"names = {NOT_COMPILED!r}\n"
        "found = sorted(what for what, name in names.items() if getattr(kube_facts, name) in seen)\n"
        "found += ['a credential shape'] * any('AKIA' in str(p) for p in seen)\n"
        "print(code, found)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 []"


def test_validate_never_calls_compile() -> None:
    """typing.ForwardRef calls compile(); the first compile() of a process builds CPython's AST
    classes (0.7 ms), which nothing on validate's path needs. (The import system compiles a module
    whose bytecode is stale; installed packages ship theirs, so those calls are not counted.)"""
    code = (
        "import builtins, sys\ncalls = []\nreal = builtins.compile\n"
        "def spy(*a, **k):\n"
        "    if not sys._getframe(1).f_globals.get('__name__', '').startswith('importlib'):\n"
        "        calls.append(str(a[0])[:40])\n"
        "    return real(*a, **k)\n"
        "builtins.compile = spy\n"
        "from trainspec.cli.main import main\ncode = main(['validate', '-q', 'examples/ddp-cpu.yaml'])\n"
        "print(code, calls)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 []"


@pytest.mark.parametrize(
    "words",
    [
        ["validate", "examples/ddp-cpu.yaml", "-q", "--no-project"],
        ["compile", "examples/", "-o", "-", "--target", "trainer=2.2,kueue=none"],
    ],
)
def test_a_parser_with_the_chosen_command_alone_parses_as_the_whole_one(words: list[str]) -> None:
    whole = cli.build_parser(words[0]).parse_args(words)
    alone = cli.build_parser(words[0], alone=True).parse_args(words)
    assert vars(alone) == vars(whole)


def test_top_level_help_still_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    for words in (["--help"], ["--help", "validate"]):
        with pytest.raises(SystemExit) as exited:
            cli.main(words)
        assert exited.value.code == 0
        listed = capsys.readouterr().out
        assert all(name in listed for name in cli.COMMANDS), words


def test_help_is_as_wide_as_the_terminal_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    for columns in ("60", "200"):
        monkeypatch.setenv("COLUMNS", columns)
        assert cli._terminal_columns() == shutil.get_terminal_size().columns == int(columns)
        with pytest.raises(SystemExit):
            cli.main(["validate", "--help"])
        assert max(len(line) for line in capsys.readouterr().out.splitlines()) <= int(columns)


def test_the_program_exits_with_the_command_code_and_a_frozen_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "main", lambda: 3)
    try:
        with pytest.raises(SystemExit) as exited:
            cli.console()
        assert exited.value.code == 3 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def _specs(directory: Path, jobs: int) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from _common import generate_specs
    finally:
        sys.path.remove(str(ROOT / "bench"))
    generate_specs(directory, jobs)


def test_a_large_run_does_not_keep_walking_its_heap(tmp_path: Path) -> None:
    """Full collections walk every live object; during a run of many specs (all of them alive to
    the end, none in cycles) they made the cost per spec grow with the number of specs."""
    _specs(tmp_path, 1000)
    options = Options(project=None, stop=Stop.CHECK)
    run([str(tmp_path / "job-0000.yaml"), str(tmp_path / "runtime-0.yaml")], options)  # warm
    full: list[int] = []
    young: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            (full if info["generation"] == 2 else young).append(1)

    gc.collect()
    gc.callbacks.append(count)
    try:
        result = run([str(tmp_path)], options)
    finally:
        gc.callbacks.remove(count)
    assert result.ok and len(result.specs) == 1010
    # At CPython's default thresholds: 2 full and about 380 young collections (measured).
    assert not full and len(young) <= 20, f"{len(full)} full and {len(young)} young collections during one run"


def test_a_run_puts_the_collector_thresholds_back(monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    options = Options(project=None, stop=Stop.CHECK, progress=lambda *_: seen.append(gc.get_threshold()))
    run([str(ROOT / "examples" / "ddp-cpu.yaml")], options)
    assert gc.get_threshold() == before and seen and all(t[0] >= pipeline._GC_THRESHOLD for t in seen)

    def boom(*_: object) -> NoReturn:
        raise RuntimeError("a pass failed")

    monkeypatch.setattr(pipeline, "PASSES", (pipeline.PASSES[0]._replace(run=boom),))
    with pytest.raises(RuntimeError):
        run([], Options(project=None))
    assert gc.get_threshold() == before


def test_a_run_leaves_collection_off_when_it_was_off() -> None:
    before = gc.get_threshold()
    gc.set_threshold(0)
    try:
        seen: list[int] = []
        run(
            [str(ROOT / "examples" / "ddp-cpu.yaml")],
            Options(project=None, stop=Stop.CHECK, progress=lambda *_: seen.append(gc.get_threshold()[0])),
        )
        assert set(seen) == {0}
    finally:
        gc.set_threshold(*before)


def test_compiling_into_a_new_directory_parses_no_output_for_lost_volumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TS410 looks for claims the previous tree had and the new one lacks; with no previous tree
    there is nothing to lose, and re-reading every new file's YAML for it was 45% of a compile
    of 1,000 specs into a new directory (bench/compile_to_dir.py)."""
    from trainspec.compiler.outtree import claims, tree_plan as plan

    calls: list[int] = []
    real = claims.claims_in  # what tree_plan calls, patched where it calls it

    def counted(text: str) -> list[object]:
        calls.append(1)
        return list(real(text))

    monkeypatch.setattr(plan, "claims_in", counted)
    import trainspec

    done = trainspec.compile(str(ROOT / "examples" / "ddp-cpu.yaml"), project=None)
    done.write(tmp_path / "deploy")
    assert (tmp_path / "deploy").is_dir() and calls == []  # over a tree: tests/cli/test_output_tree*.py (TS410)
