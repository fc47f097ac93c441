"""The built-in runtime catalog: trainspec ``Runtime`` specs shipped as package data.

They are compiled by the same code as a user's runtimes and are emitted only when a job uses
one. A user's runtime of the same name replaces the built-in one. Their names are trainspec's
own (``trainspec-torch``, ...), never one Kubeflow Trainer installs: those runtimes belong to the
cluster, and jobs reach them as external catalog entries (:mod:`trainspec.runtimes.upstream`).
"""

from __future__ import annotations

import os
from functools import cache, lru_cache

from trainspec.dsl.load.loaded import LoadedSpec
from trainspec.dsl.load.spec_sources import load_path

#: The folder of the built-in runtimes (a string: ``pathlib`` is not imported to find them).
CATALOG_DIR = os.path.dirname(os.path.abspath(__file__))


@lru_cache(maxsize=1)
def builtin_names() -> tuple[str, ...]:
    """Names of the built-in runtimes: each lives in ``<name>.yaml`` (a test holds that)."""
    # A listing, not Path.glob: glob compiles a pattern and builds selectors on every start-up.
    return tuple(sorted(name[: -len(".yaml")] for name in os.listdir(CATALOG_DIR) if name.endswith(".yaml")))


@cache
def builtin_runtime(name: str) -> LoadedSpec | None:
    """One built-in runtime, read on first use (most runs need one or none of them)."""
    if name not in builtin_names():
        return None
    file = f"{name}.yaml"
    specs, problems = load_path(os.path.join(CATALOG_DIR, file))
    errors = [d for d in problems if d.is_error]
    if errors or len(specs) != 1:  # a packaging defect, not user input
        raise RuntimeError(f"built-in runtime {file} is invalid: {errors[0].message if errors else 'not one spec'}")
    (spec,) = specs
    return LoadedSpec(spec=spec.spec, file=f"<built-in>/{file}", doc=spec.doc, origin=spec.origin)


def builtin_runtimes() -> tuple[LoadedSpec, ...]:
    """Every built-in runtime, by name."""
    return tuple(runtime for name in builtin_names() if (runtime := builtin_runtime(name)) is not None)
