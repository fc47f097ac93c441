"""Bad input never makes ``trainspec migrate`` raise: every field of our manifests, replaced in turn
by a value of the wrong type, gives diagnostics (or specs), never a traceback."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from trainspec.migrate import migrate

HERE = Path(__file__).parent / "manifests"
WRONG = (7, "x", [1], None, {"a": 1})


def _paths(node: Any, base: tuple = ()) -> Iterator[tuple]:
    if base:
        yield base
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*base, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*base, index))


@pytest.mark.parametrize("path", sorted(HERE.glob("*.yaml")), ids=lambda p: p.stem)
def test_wrong_types_anywhere_are_diagnostics(path: Path, tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    failures = []
    target = tmp_path / path.name
    for index, doc in enumerate(docs):
        for field in list(_paths(doc)):
            for value in WRONG:
                changed = copy.deepcopy(docs)
                node = changed[index]
                for part in field[:-1]:
                    node = node[part]
                node[field[-1]] = value
                target.write_text(yaml.safe_dump_all(changed), encoding="utf-8")
                try:
                    migrate([target])
                except Exception as exc:
                    failures.append(f"{field} = {value!r}: {type(exc).__name__}: {exc}")
    assert failures == []
