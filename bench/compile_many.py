"""Throughput of compilation: N generated job specs over 10 runtimes compiled and rendered in one
process (nothing written), against the floor of PyYAML's C loader on the inputs plus its C dumper
on the outputs. Each size runs in its own child process; within it, each side runs ``--repeat``
times, interleaved; medians.

    python bench/compile_many.py [--jobs 1000,10000] [--repeat 5]

Writing the files (and making them durable) is bench/compile_to_dir.py.
"""

from __future__ import annotations

import resource
import tempfile
from pathlib import Path
from typing import Any

from _common import generate_specs, interleaved, sizes_main

GOAL = 3.0


def child(jobs: int, repeat: int) -> dict[str, Any]:
    """Measure one size in this process and return the figures."""
    import yaml

    from trainspec.compiler.emit import manifest_dicts, render_tree
    from trainspec.compiler.pipeline import compile_paths

    with tempfile.TemporaryDirectory() as tmp:
        paths = generate_specs(Path(tmp), jobs)
        result = compile_paths([tmp])  # warm: imports and the built-in catalog; the floor's outputs
        if not result.ok:
            raise SystemExit(str([d.message for d in result.diagnostics if d.is_error][:3]))
        outputs = [d for out in result.outputs for d in manifest_dicts(out.objects)]
        files = len(render_tree(result.outputs))
        del result

        def load_and_dump() -> None:
            for path in paths:
                list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))
            yaml.dump_all(outputs, Dumper=yaml.CSafeDumper, sort_keys=False)

        def compile_and_render() -> None:
            render_tree(compile_paths([tmp]).outputs)

        floor, took = interleaved(load_and_dump, compile_and_render, repeat)
    return {
        "specs": len(paths),
        "objects": len(outputs),
        "files": files,
        "floor": floor,
        "took": took,
        "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def _row(r: dict[str, Any]) -> str:
    n = r["specs"]
    return (
        f"{n:7d} {r['objects']:8d} {r['files']:6d} {r['floor'] * 1000:7.0f}ms {r['floor'] * 1000 / n:8.3f} "
        f"{r['took'] * 1000:7.0f}ms {r['took'] * 1000 / n:8.3f} {r['took'] / r['floor']:5.2f}x "
        f"{r['rss_kb'] / 1024:7.1f}MB"
    )


def main() -> None:
    sizes_main(
        __doc__,
        __file__,
        child,
        f"{'specs':>7} {'objects':>8} {'files':>6} {'floor':>9} {'ms/spec':>8} {'compile':>9} {'ms/spec':>8} "
        f"{'ratio':>6} {'peak RSS':>9}",
        _row,
        "the floor",
        GOAL,
    )


if __name__ == "__main__":
    main()
