"""Fixtures for the data-sharding stage tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def jsonl_source(tmp_path: Path) -> Path:
    """Two jsonl files (the second without trailing newline), 25 records in all."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(15)))
    (src / "b.jsonl").write_text("\n".join(json.dumps({"id": i}) for i in range(15, 25)))
    return src
