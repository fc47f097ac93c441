"""The built-in runtime catalog: trainspec ``Runtime`` specs shipped as package data.

They are compiled by the same code as a user's runtimes and are emitted only when a job uses
one. A user's runtime of the same name replaces the built-in one.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from trainspec.dsl.sources import LoadedSpec, load_path

CATALOG_DIR = Path(__file__).parent


@lru_cache(maxsize=1)
def builtin_runtimes() -> tuple[LoadedSpec, ...]:
    """Every built-in runtime, by file name order. Raises if the shipped catalog is broken."""
    loaded: list[LoadedSpec] = []
    for path in sorted(CATALOG_DIR.glob("*.yaml")):
        specs, problems = load_path(path)
        errors = [d for d in problems if d.is_error]
        if errors:  # a packaging defect, not user input
            raise RuntimeError(f"built-in runtime {path.name} is invalid: {errors[0].message}")
        loaded.extend(LoadedSpec(spec=s.spec, file=f"<built-in>/{path.name}", doc=s.doc, origin=s.origin)
                      for s in specs)
    return tuple(loaded)


def builtin_names() -> list[str]:
    return [s.name for s in builtin_runtimes()]
