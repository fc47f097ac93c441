"""The published JSON Schemas: usable by check-jsonschema and editors (fresh: tests/test_generated_fresh.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, INVALID, ROOT, run_cli
from trainspec.schemas import FILES, SCHEMA_DIR

CHECK_JSONSCHEMA = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
VALID = sorted([*EXAMPLES.glob("*.yaml"), *(EXAMPLES / "llama-sft").glob("*.yaml")])
# Invalid examples whose defect a JSON Schema can see (the rest need trainspec's own checks).
# TS109 is not among them: check-jsonschema reads YAML 1.2, where `no` is the string "no".
SCHEMA_LEVEL = [
    "TS110",
    "TS111",
    "TS200",
    "TS201",
    "TS202",
    "TS203",
    "TS204",
    "TS205",
    "TS206",
    "TS207",
    "TS209",
    "TS210",
    "TS211",
]


def _one_document_each(paths: list[Path], scratch: Path) -> list[Path]:
    """check-jsonschema reads one document per file: a runtime-and-job example becomes one file per spec."""
    out: list[Path] = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        docs = [doc for doc in text.split("\n---\n") if doc.strip()]
        if len(docs) == 1:
            out.append(path)
            continue
        for index, doc in enumerate(docs):
            out.append(scratch / f"{path.stem}-{index}.yaml")
            out[-1].write_text(doc, encoding="utf-8")
    return out


def test_schema_command_prints_the_combined_schema() -> None:
    proc = run_cli("schema")
    assert proc.returncode == 0
    schema = json.loads(proc.stdout)
    assert schema["properties"]["kind"]["enum"] == ["Runtime", "TrainingJob", "Pipeline"]
    job = json.loads(run_cli("schema", "--kind", "TrainingJob").stdout)
    spec = job["$defs"]["TrainingJobSpec"]["properties"]
    assert "Kueue LocalQueue" in spec["queue"]["description"]


def test_every_field_is_documented() -> None:
    schema = json.loads((SCHEMA_DIR / FILES["all"]).read_text())
    undocumented = [
        f"{name}.{field}"
        for name, definition in schema["$defs"].items()
        for field, prop in definition.get("properties", {}).items()
        if not prop.get("description")
    ]
    assert undocumented == []


@pytest.mark.skipif(CHECK_JSONSCHEMA is None, reason="check-jsonschema is not installed (pip install '.[test]')")
def test_check_jsonschema_accepts_every_valid_example(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            CHECK_JSONSCHEMA,
            "--schemafile",
            str(SCHEMA_DIR / FILES["all"]),
            *map(str, _one_document_each(VALID, tmp_path)),
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(CHECK_JSONSCHEMA is None, reason="check-jsonschema is not installed (pip install '.[test]')")
@pytest.mark.parametrize("code", SCHEMA_LEVEL)
def test_check_jsonschema_rejects_schema_level_mistakes(code: str) -> None:
    (path,) = INVALID.glob(f"{code}-*.yaml")
    proc = subprocess.run(
        [CHECK_JSONSCHEMA, "--schemafile", str(SCHEMA_DIR / FILES["all"]), str(path)],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 1, proc.stdout


def test_examples_point_editors_at_the_schema() -> None:
    for path in VALID:
        first = path.read_text().splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema="), path
        target = (path.parent / first.split("=", 1)[1]).resolve()
        assert target == (SCHEMA_DIR / FILES["all"]).resolve(), path
