"""The published JSON Schemas of the spec language (committed files, generated from the models).

``python -m tools.regenerate`` rewrites them; tests/test_generated_fresh.py fails when they are stale.
"""

from __future__ import annotations

from pathlib import Path

SCHEMA_DIR = Path(__file__).parent
FILES = {
    "all": "trainspec.schema.json",
    "Runtime": "runtime.schema.json",
    "TrainingJob": "trainingjob.schema.json",
    "Pipeline": "pipeline.schema.json",
}


def schema_path(kind: str = "all") -> Path:
    return SCHEMA_DIR / FILES[kind]


def schema_text(kind: str = "all") -> str:
    """The committed schema (reading the file is faster than building it from the models)."""
    return schema_path(kind).read_text(encoding="utf-8")
