"""Throughput of validation at scale: N generated job specs (and 10 runtimes), one spec per file,
validated in one process, against the floor of loading the same files with PyYAML's C loader
alone. Each size runs in its own child process (so peak memory is per size); within it, each
side runs ``--repeat`` times, interleaved; medians.

    python bench/validate_many.py [--jobs 1000,10000] [--repeat 5]

Reported per size: time and ms per spec of both sides, the ratio (goal <= 3x), the growth of
peak RSS during one validation (``ru_maxrss`` before and after), and the cyclic garbage one
validation leaves (``gc.collect()`` after it: 0 when nothing waits for the cycle collector).
"""

from __future__ import annotations

import gc
import resource
import tempfile
from pathlib import Path
from typing import Any

from _common import generate_specs, interleaved, sizes_main

GOAL = 3.0


def child(jobs: int, repeat: int) -> dict[str, Any]:
    """Measure one size in this process and return the figures."""
    import yaml

    from trainspec.compiler.pipeline import compile_paths

    with tempfile.TemporaryDirectory() as tmp:
        paths = generate_specs(Path(tmp), jobs)
        compile_paths([str(paths[0])], lower=False)  # warm: imports and the built-in catalog

        def load_only() -> None:
            for path in paths:
                list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))

        def validate() -> None:
            result = compile_paths([tmp], lower=False)
            if not result.ok:
                raise SystemExit(str([d.message for d in result.diagnostics if d.is_error][:3]))

        gc.collect()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        validate()  # the first full run: its peak is the RSS figure
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cyclic = gc.collect()
        floor, took = interleaved(load_only, validate, repeat)
    return {
        "specs": len(paths),
        "floor": floor,
        "took": took,
        "rss_before_kb": before,
        "rss_after_kb": after,
        "cyclic": cyclic,
    }


def _row(r: dict[str, Any]) -> str:
    n = r["specs"]
    return (
        f"{n:7d} {r['floor'] * 1000:8.0f}ms {r['floor'] * 1000 / n:8.3f} {r['took'] * 1000:8.0f}ms "
        f"{r['took'] * 1000 / n:8.3f} {r['took'] / r['floor']:5.2f}x {r['rss_after_kb'] / 1024:7.1f}MB "
        f"{(r['rss_after_kb'] - r['rss_before_kb']) / 1024:6.1f}MB {r['cyclic']:6d}"
    )


def main() -> None:
    sizes_main(
        __doc__,
        __file__,
        child,
        f"{'specs':>7} {'C loader':>10} {'ms/spec':>8} {'validate':>10} {'ms/spec':>8} {'ratio':>6} "
        f"{'peak RSS':>9} {'+during':>8} {'cyclic':>6}",
        _row,
        "the C loader",
        GOAL,
    )


if __name__ == "__main__":
    main()
