"""The test tree itself: pytest imports test modules of folders without ``__init__.py`` by their
basename, so two such modules with one name make the second one fail to collect on a clean
checkout (and pass where a stale ``__pycache__`` hides it)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_rootless_test_modules_share_a_basename() -> None:
    seen: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        if "__pycache__" in path.parts or (path.parent / "__init__.py").exists():
            continue  # a package's modules are imported by their dotted name
        seen[path.name].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
