"""The Python DSL as a discoverable, typed API: signatures, did-you-mean, exports, writing a result."""

from __future__ import annotations

import ast
import inspect
import os
import pydoc
import subprocess
import sys
from pathlib import Path

import pytest

import trainspec
from tests.conftest import EXAMPLES, ROOT
from trainspec import Resources, Runtime, TrainingJob
from trainspec.dsl.framework import modeling
from trainspec.dsl.framework.modeling import Model, ValidationError

DSL = ROOT / "trainspec" / "dsl"


# -- did-you-mean from constructors ---------------------------------------------------------------


def test_unknown_keyword_names_it_and_suggests_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        TrainingJob(name="a", runtime="b", nods=8)  # type: ignore[call-arg, call-overload]
    text = str(info.value)
    assert "'nods'" in text and "did you mean 'nodes'?" in text
    (err,) = info.value.errors()
    assert err["loc"] == ("spec", "nods") and err["ctx"] == {"suggestion": "nodes"}


def test_unknown_keyword_on_a_part_suggests_too() -> None:
    with pytest.raises(ValidationError, match=r"unknown field 'gpuu'; did you mean 'gpu'\?"):
        Resources(gpuu=8)  # type: ignore[call-arg]


def test_nothing_close_gives_no_suggestion() -> None:
    with pytest.raises(ValidationError) as info:
        Resources(zzzzzz=1)  # type: ignore[call-arg]
    (err,) = info.value.errors()
    assert "ctx" not in err and "did you mean" not in str(info.value)


def test_yaml_and_python_give_the_same_suggestion() -> None:
    from trainspec.dsl.load.spec_sources import load_string

    _, problems = load_string(
        "apiVersion: trainspec.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: a}\nspec: {runtime: b, nods: 8}\n"
    )
    (problem,) = problems
    assert problem.code == "TS200" and problem.hint == "did you mean nodes?"


def test_a_python_spec_file_gets_the_suggestion_as_its_hint(tmp_path: Path) -> None:
    from trainspec.dsl.load.spec_sources import load_files

    spec = tmp_path / "job.py"
    spec.write_text('from trainspec import TrainingJob\njob = TrainingJob(name="a", runtime="b", nods=2)\n')
    _, problems = load_files([spec])
    (problem,) = problems
    assert (problem.code, problem.line, problem.hint) == ("TS200", 2, "did you mean nodes?")


# -- signatures: runtime (help) and static (type checkers) ----------------------------------------


def test_help_shows_a_keyword_only_typed_signature() -> None:
    signature = inspect.signature(Resources)
    assert list(signature.parameters) == ["gpu", "cpu", "memory", "ephemeral_storage", "extra"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in signature.parameters.values())
    assert signature.parameters["gpu"].default is None
    flat = inspect.signature(TrainingJob)
    assert {"name", "namespace", "runtime", "nodes", "resources_per_node"} <= set(flat.parameters)
    assert flat.parameters["name"].default is inspect.Parameter.empty
    text = pydoc.render_doc(TrainingJob, renderer=pydoc.plaintext)
    assert "TrainingJob(*, name: " in text and "A training run" in text


def _typed_inits(tree: ast.Module) -> dict[str, list[list[str]]]:
    """Class name -> the keyword-only parameter names of each ``__init__`` overload type checkers see."""
    found: dict[str, list[list[str]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.If) and ast.unparse(stmt.test) == "TYPE_CHECKING":
                for fn in stmt.body:
                    if isinstance(fn, ast.FunctionDef) and fn.name == "__init__" and fn.args.kwonlyargs:
                        found.setdefault(node.name, []).append([a.arg for a in fn.args.kwonlyargs])
    return found


def _spec_modules() -> list[Path]:
    """Every module of trainspec.dsl that declares spec models (new ones get the same checks)."""
    return sorted(
        p
        for p in DSL.rglob("*.py")
        if any(base in p.read_text(encoding="utf-8") for base in ("(Model)", "(_Model)", "(_Flat)"))
    )


def test_every_typed_init_lists_exactly_the_fields() -> None:
    """A field added to a model but not to its hand-written signature fails here."""
    import importlib

    checked = 0
    for path in _spec_modules():
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for cls_name, overloads in _typed_inits(ast.parse(path.read_text(encoding="utf-8"))).items():
            cls = getattr(module, cls_name)
            fields = list(cls.model_fields)
            forms = {tuple(fields)}
            if hasattr(cls, "_flat_fields"):
                forms.add(tuple(cls._flat_fields()))
            for names in overloads:
                best = min(forms, key=lambda form: len(set(form) ^ set(names)))
                assert tuple(names) == best, (
                    f"{path.name}: the typed __init__ of {cls_name} (under TYPE_CHECKING) differs from its fields "
                    f"by {sorted(set(names) ^ set(best))}: list every field, in field order, in each overload"
                )
                checked += 1
            assert len(overloads) == len(forms), f"{cls_name}: one overload per form ({len(forms)})"
    assert checked >= 5  # Resources, Runtime (flat, nested), TrainingJob (flat, nested)


def test_flat_fields_are_the_metadata_and_spec_fields() -> None:
    flat = TrainingJob._flat_fields()
    assert flat[:4] == ["name", "namespace", "labels", "annotations"]
    assert set(flat) == {
        *trainspec.Metadata.model_fields,
        *TrainingJob.model_fields["spec"].annotation.model_fields,
        "api_version",
        "kind",
    }


def test_value_types_are_written_in_the_source_not_built_by_calls() -> None:
    """pyright rejects a type built by a call (reportInvalidTypeForm); every alias is a static form."""
    tree = ast.parse((DSL / "framework" / "types.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.targets[0].id[:1].isupper():
            raise AssertionError(f"types.py: {node.targets[0].id} is built by a call")


def test_py_typed_ships() -> None:
    assert (ROOT / "trainspec" / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"trainspec" = ["py.typed"]' in pyproject


def test_field_tables_stay_lazy() -> None:
    code = (
        "import trainspec.dsl.models as m, inspect; "
        "print(sum('_field_table' in c.__dict__ for c in vars(m).values() if isinstance(c, type)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "0"


def test_model_base_is_declared_with_dataclass_transform() -> None:
    transform = Model.__dataclass_transform__  # type: ignore[attr-defined]
    assert transform["kw_only_default"] is True
    # Python 3.11 keeps frozen_default among kwargs; 3.12 has it as a parameter of its own
    assert transform.get("frozen_default", transform["kwargs"].get("frozen_default")) is True
    assert modeling.field in transform["field_specifiers"]


# -- discoverable exports ---------------------------------------------------------------------------


def test_all_and_dir_show_the_public_names_without_importing_them() -> None:
    code = (
        "import sys, trainspec; names = dir(trainspec); "
        "print(all(n in names for n in trainspec.__all__), 'trainspec.dsl.spec.models' in sys.modules, "
        "'trainspec.api' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == ["True", "False", "False"]
    for name in (
        "TrainingJob",
        "Runtime",
        "Resources",
        "compile",
        "validate",
        "load",
        "ValidationError",
        "CompileResult",
        "Quantity",
        "Duration",
        "__version__",
    ):
        assert name in trainspec.__all__
    for name in trainspec.__all__:
        assert getattr(trainspec, name) is not None
    assert trainspec.__all__ == [*sorted(trainspec._EXPORTS), "__version__"]  # type checkers read the literal


def test_dir_shows_no_helpers_of_the_module_itself() -> None:
    trainspec.compile  # noqa: B018 - loads trainspec.api, trainspec.compiler... as attributes of the package
    public = [name for name in dir(trainspec) if not name.startswith("__")]
    assert public == sorted(trainspec._EXPORTS)


# -- compile(...).write(dir) ------------------------------------------------------------------------


def test_write_produces_what_compile_o_dir_writes(tmp_path: Path) -> None:
    from trainspec.cli.main import main

    out_cli, out_lib = tmp_path / "cli", tmp_path / "lib"
    assert main(["compile", str(EXAMPLES / "ddp-cpu.yaml"), "-o", str(out_cli), "--no-project"]) == 0
    report = trainspec.compile(EXAMPLES / "ddp-cpu.yaml", project=None).write(out_lib)
    assert report.exit_code == 0
    cli_files = sorted(p.relative_to(out_cli) for p in out_cli.rglob("*") if p.is_file())
    lib_files = sorted(p.relative_to(out_lib) for p in out_lib.rglob("*") if p.is_file())
    assert cli_files == lib_files and cli_files
    for rel in cli_files:
        assert (out_cli / rel).read_bytes() == (out_lib / rel).read_bytes()


def test_write_refuses_what_the_cli_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trainspec.api import OutputRefused

    result = trainspec.compile(EXAMPLES / "ddp-cpu.yaml", project=None)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("mine")
    for bad in ("", ".", "/", str(tmp_path)):
        with pytest.raises(OutputRefused) as info:
            result.write(bad)
        assert [d.code for d in info.value.diagnostics] == ["TS412"]
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    with pytest.raises(OutputRefused):
        result.write(repo)
    assert (tmp_path / "keep.txt").read_text() == "mine" and os.listdir(repo) == [".git"]


def test_write_refuses_a_directory_holding_the_inputs(tmp_path: Path) -> None:
    from trainspec.api import OutputRefused

    spec = tmp_path / "specs" / "job.yaml"
    spec.parent.mkdir()
    spec.write_text((EXAMPLES / "ddp-cpu.yaml").read_text())
    result = trainspec.compile(spec, project=None)
    with pytest.raises(OutputRefused, match="an input of this compile"):
        result.write(tmp_path / "specs")
    assert os.listdir(tmp_path / "specs") == ["job.yaml"]


def test_write_of_a_failed_compile_raises_with_its_diagnostics(tmp_path: Path) -> None:
    from trainspec.api import OutputRefused

    result = trainspec.compile(TrainingJob(name="x", runtime="no-such-runtime"), project=None)
    with pytest.raises(OutputRefused) as info:
        result.write(tmp_path / "out")
    assert [d.code for d in info.value.diagnostics] == ["TS305"]
    assert not (tmp_path / "out").exists()


def test_compile_of_objects_renders_yaml() -> None:
    runtime = Runtime(name="torch-cpu", framework="torch", image="pytorch/pytorch:2.13.0")
    text = trainspec.compile(runtime, TrainingJob(name="a", runtime="torch-cpu"), project=None).to_yaml()
    assert "kind: ClusterTrainingRuntime" in text and "kind: TrainJob" in text
