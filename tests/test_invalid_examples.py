"""Every file in examples/invalid/ fails with exactly its expected diagnostics, located."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import INVALID, run_cli
from trainspec.compiler.pipeline import compile_paths
from trainspec.dsl.diagnostics import CODES

EXPECT = re.compile(rb"^# expect: (TS\d{3}) (\d+):(\d+)$", re.M)
FILES = sorted(p for p in INVALID.iterdir() if p.suffix in (".yaml", ".yml", ".py"))


def expected(path: Path) -> set[tuple[str, int, int]]:
    return {(code.decode(), int(line), int(col)) for code, line, col in EXPECT.findall(path.read_bytes())}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_invalid_example_reports_exactly_its_codes(path: Path, monkeypatch) -> None:
    monkeypatch.chdir(INVALID.parent.parent)
    want = expected(path)
    assert want, f"{path.name} states no '# expect:' line"
    result = compile_paths([str(path)])
    got = {(d.code, d.line, d.column) for d in result.diagnostics if d.is_error}
    assert got == want
    for diagnostic in result.diagnostics:
        assert diagnostic.file == f"examples/invalid/{path.name}"
        assert diagnostic.message and diagnostic.code in CODES


def test_file_names_match_their_codes() -> None:
    for path in FILES:
        assert path.name.split("-")[0] in {code for code, _, _ in expected(path)}, path.name


def test_every_spec_level_code_has_an_example() -> None:
    covered = {path.name.split("-")[0] for path in FILES}
    # Not file-level: TS100/TS102 (made by tests), TS108/TS403/TS406 (warnings), TS308 (values
    # file), TS407-TS413 (output directory: tests/cli/test_output_tree.py), TS5xx (trainspec
    # check), TS6xx (project policy). TS115-TS119 (time limit, warnings, FIFOs and over-long names,
    # which git cannot hold): tests/dsl/test_hostile_inputs.py and test_python_specs_hostile.py.
    untestable = {
        "TS100",
        "TS102",
        "TS108",
        "TS308",
        "TS403",
        "TS406",
        "TS407",
        "TS408",
        "TS409",
        "TS410",
        "TS411",
        "TS412",
        "TS413",
        "TS115",
        "TS116",
        "TS117",
        "TS118",
        "TS119",
        # planner warnings: tests/explain/test_planner_checks.py
        "TS424",
        "TS427",
        "TS428",
        # only with --ladder: tests/compiler/test_ladder.py
        "TS430",
        "TS431",
        "TS432",
        # a warning: tests/observability/test_pod_labels.py
        "TS436",
        # `trainspec kfp` only (the launcher step's image): tests/kfp/test_launcher_image.py
        "TS450",
        # the planner's inputs filled in, a warning and a note: tests/explain/test_model_presets.py,
        # tests/explain/test_accelerator_labels.py
        "TS460",
        "TS461",
        "TS462",
        # Python spec modules in their supervised child (exits, output, leftovers, not run) and
        # unsafe file names: tests/dsl/test_python_isolation.py, tests/dsl/test_hostile_corpus.py
        "TS120",
        "TS121",
        "TS122",
        "TS123",
        "TS124",
        # the output directory (not the user's, no spec at all): tests/cli/test_output_tree_odd.py
        "TS417",
        "TS418",
        # day 2, an update over a previous tree: tests/check/test_updates.py, tests/gitops/
        "TS440",
        "TS441",
        "TS442",
        "TS443",
        "TS444",
    }
    spec_codes = {c for c in CODES if c < "TS500"} - untestable
    assert spec_codes <= covered, sorted(spec_codes - covered)


@pytest.mark.parametrize("path", FILES[:3] + FILES[-3:], ids=lambda p: p.name)
def test_cli_exits_1_with_located_text(path: Path) -> None:
    proc = run_cli("validate", str(path.relative_to(INVALID.parent.parent)))
    assert proc.returncode == 1, proc.stderr
    code, line, col = sorted(expected(path))[0]
    assert f"{path.name}:{line}:{col}: error[{code}]" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
