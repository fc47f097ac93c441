"""Every generated file the package ships is fresh: ``python -m tools.regenerate --check`` passes.

The generated files are the JSON Schemas (``trainspec/schemas/``), the model modules of
``trainspec.k8s`` with its lazy export table, and the CRD data of ``trainspec/check/schema/data/``.
What needs the real CRDs reads ``../shared/crds`` (under ``CI=true`` its absence is a failure,
elsewhere a skip); what needs none (the schemas, the ``core`` and ``meta`` models) is always checked.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

import trainspec.k8s as k8s
from tests.conftest import ROOT, SHARED
from tools import crd_data, regenerate
from tools.k8s_models import config, generator

CRDS = SHARED / "crds"


def _crds() -> Path:
    if not CRDS.is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but the CRDs are missing: {CRDS}")
        pytest.skip(f"no CRDs at {CRDS}: cannot regenerate what is derived from them")
    return CRDS


def _command(*args: str) -> subprocess.CompletedProcess[str]:
    """The one command, as a contributor runs it from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "tools.regenerate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_everything_generated_is_fresh() -> None:
    done = _command("--check", "--crds", str(_crds()))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), f"{done.stderr}run: python -m tools.regenerate"


def test_what_needs_no_crds_is_fresh() -> None:
    done = _command("--check", "--offline")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), f"{done.stderr}run: python -m tools.regenerate"


def test_every_configured_module_is_generated() -> None:
    # (The check mode covers the CRD data both ways: a file it makes that is not shipped is stale,
    # and so is a shipped JSON file it does not make.)
    assert set(generator.generate(_crds())) == {f"{m.name}.py" for m in config.MODULES} | {"__init__.py"}


def test_a_shipped_file_the_generator_does_not_make_is_stale(tmp_path: Path) -> None:
    files = {"a.json": "{}\n"}
    (tmp_path / "a.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "left-over.json").write_text("{}\n", encoding="utf-8")
    [step] = [step for step in regenerate.STEPS if step.out == crd_data.DATA_DIR]
    assert step.stale(files, tmp_path) == ["left-over.json"]


def test_generated_files_say_so_and_how_to_regenerate() -> None:
    for module in config.MODULES:
        head = (generator.K8S / f"{module.name}.py").read_text(encoding="utf-8").splitlines()[:3]
        assert head[0] == f"{generator.GENERATED_BY}: do not edit."
        assert head[2] == f"# Regenerate: {generator.REGENERATE}" == "# Regenerate: python -m tools.regenerate"


def test_the_lazy_export_table_is_the_generated_one() -> None:
    init = (generator.K8S / "__init__.py").read_text(encoding="utf-8")
    assert init == generator.render_exports(config.MODULES, config.STATIC_EXPORTS, init)
    lazy = {m.name for m in config.MODULES if m.lazy}
    assert lazy | set(config.STATIC_EXPORTS) == set(k8s._MODULES)
    assert "legacy" not in k8s._MODULES  # imported directly, never re-exported


def test_check_mode_reports_stale_files_and_a_run_rewrites_them(tmp_path: Path) -> None:
    # The steps that need no CRDs, writing into an empty folder each: everything is stale there.
    offline = [step for step in regenerate.STEPS if not step.needs_crds]
    steps = [dataclasses.replace(step, out=tmp_path / str(i)) for i, step in enumerate(offline)]
    stale = regenerate.run(None, check=True, steps=steps)
    assert tmp_path / "0" / "trainspec.schema.json" in stale
    assert tmp_path / "1" / "core.py" in stale
    assert not list(tmp_path.rglob("*")), "check mode wrote something"
    assert sorted(regenerate.run(None, check=False, steps=steps)) == sorted(stale)
    assert regenerate.run(None, check=True, steps=steps) == []
    assert (tmp_path / "1" / "core.py").read_text(encoding="utf-8") == (generator.K8S / "core.py").read_text(
        encoding="utf-8"
    )


def test_missing_crds_are_an_error_not_a_silent_partial_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert regenerate.main(["--check", "--crds", str(tmp_path / "nowhere")]) == 2
    assert "no CRDs at" in capsys.readouterr().err
    # A folder without the CRD files: the generator's error, exit 2.
    assert regenerate.main(["--check", "--crds", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: ")
