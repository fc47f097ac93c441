"""Validating and compiling leave no garbage in reference cycles.

Garbage in cycles is freed only by the cyclic collector, whose every run walks all live objects:
with thousands of specs in one run, each collection costs more than the last and validation grows
superlinearly (issue 14 measured 0.69 -> 1.03 ms a spec from 1,000 to 10,000). Reference counting
alone must free what one spec leaves behind.
"""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path

import pytest

from trainspec.compiler.pipeline import Options, Stop, run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("lower", [False, True], ids=["validate", "compile"])
def test_a_run_over_the_examples_leaves_no_cycles(lower: bool) -> None:
    inputs = [str(EXAMPLES / "llama-sft"), str(EXAMPLES / "ddp-cpu.yaml"), str(EXAMPLES / "templated" / "job.yaml")]
    options = Options(
        project=None,
        values_files=[str(EXAMPLES / "templated" / "envs" / "prod.yaml")],
        stop=Stop.LOWER if lower else Stop.CHECK,
    )
    run(inputs, options)  # warm: imports, the built-in catalog, lazy field tables
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            result = run(inputs, options)
            assert not [d for d in result.diagnostics if d.is_error]
        del result
        found = gc.collect()
        kinds = Counter(type(obj).__name__ for obj in gc.garbage).most_common(8)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert found == 0, kinds
