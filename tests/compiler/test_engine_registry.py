"""One engine registry: engine names are written in the registry and the dialects, nowhere else.

Elsewhere a module asks the job's dialect (``dialect_for(target, plan.engine)``) what the engine
does; it does not compare the engine's name. The scan reads every module of the package and
fails on a string constant that is used as an engine name outside the allowed modules: compared
with ``==``/``!=``/``is``, two engine names together in one list, tuple, set or dict, or an
assignment or default value that is an engine name. (``"trainer"`` and ``"ray"`` are also field
names, ``spec.trainer`` and ``spec.ray``: a field path names one of them, never two.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trainspec.compiler.engines import DEFAULT_ENGINE, DIALECT_MODULES, EMITS_FOR, ENGINE_NAMES, Engine

PACKAGE = Path(__file__).resolve().parents[2] / "trainspec"
NAMES = frozenset(ENGINE_NAMES)

#: Where engine names may be written: the enum, the registry and each engine's own folder.
ALLOWED = (
    "dsl/spec/engine.py",
    "compiler/engines.py",
    "compiler/lower/trainer/",
    "compiler/lower/ray/",
    "compiler/lower/training_operator/",
)
#: Not engine names: the submodules of trainspec.k8s (named after the API groups they model),
#: upstream's label values (Trainer's ``trainjob-ancestor-step: trainer``), and the Python spec
#: language's Literal type for ``engine=`` (type checkers need the strings; a test below keeps it
#: equal to the enum).
NOT_ENGINES = ("k8s/__init__.py", "k8s/wellknown.py", "dsl/spec/models.py")


def _is_name(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES


def _uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each engine name used as one in ``tree``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            equalities = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
            sides = [node.left, *node.comparators]
            if any(isinstance(op, equalities) for op in node.ops) and any(_is_name(side) for side in sides):
                found.append((node.lineno, "compared with an engine name"))
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            if len({e.value for e in node.elts if _is_name(e)}) >= 2:  # type: ignore[attr-defined]
                found.append((node.lineno, "a list of engine names"))
        elif isinstance(node, ast.Dict):
            if len({k.value for k in node.keys if _is_name(k)}) >= 2:  # type: ignore[union-attr]
                found.append((node.lineno, "a table keyed by engine name"))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_name(node.value):
            found.append((node.lineno, "an engine name assigned"))
        elif isinstance(node, ast.arguments):
            if any(_is_name(d) for d in [*node.defaults, *node.kw_defaults]):
                found.append((node.lineno if hasattr(node, "lineno") else 0, "an engine name as a default"))
        elif isinstance(node, ast.keyword) and node.arg == "default" and _is_name(node.value):
            found.append((node.value.lineno, "an engine name as a default"))
    return found


def test_engine_names_are_written_only_in_the_registry_and_the_dialects() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(ALLOWED) or relative in NOT_ENGINES:
            continue
        for line, what in _uses(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"trainspec/{relative}:{line}: {what}")
    assert not offenders, "ask the job's dialect instead:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    "source",
    [
        'if plan.engine == "trainer": pass',
        'ok = engine != "ray"',
        'ENGINES = ("trainer", "ray")',
        'FIELD = {"ray": 1, "training-operator": 2}',
        'engine = "training-operator"',
        'def f(engine="trainer"): pass',
        'parser.add_argument("--to", default="ray")',
    ],
)
def test_the_scan_finds_each_way_of_naming_an_engine(source: str) -> None:
    assert _uses(ast.parse(source))


@pytest.mark.parametrize(
    "source",
    [
        'path = ("spec", "trainer", "numNodes")',
        'spec.get("trainer")',
        'getattr(spec, "ray", None)',
        '"trainer" in fields',
    ],
)
def test_field_names_that_happen_to_be_engine_names_are_not_flagged(source: str) -> None:
    assert not _uses(ast.parse(source))


def test_every_engine_has_a_dialect_and_a_version_entry() -> None:
    assert set(DIALECT_MODULES) == set(EMITS_FOR) == set(Engine)
    assert DEFAULT_ENGINE in Engine
    assert {e.value for e in Engine} == NAMES


def test_the_python_spec_languages_literal_names_every_engine() -> None:
    tree = ast.parse((PACKAGE / "dsl" / "spec" / "models.py").read_text(encoding="utf-8"))
    (literal,) = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_EngineName" for t in node.targets)
    ]
    assert isinstance(literal, ast.Subscript)
    assert tuple(e.value for e in literal.slice.elts) == ENGINE_NAMES  # type: ignore[attr-defined]


def test_the_registry_is_cheap_to_import() -> None:
    """The command line's parsers read ENGINE_NAMES: importing the registry loads no spec model."""
    import subprocess
    import sys

    code = "import sys, trainspec.compiler.engines; print(sorted(m for m in sys.modules if m.startswith('trainspec.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "trainspec.dsl.spec.models" not in out and "trainspec.dsl.spec.parts" not in out, out


def test_an_engine_prints_as_its_name() -> None:
    assert (str(Engine.RAY), f"{Engine.TRAINING_OPERATOR}", f"{Engine.RAY:>5}") == ("ray", "training-operator", "  ray")
