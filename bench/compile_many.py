"""Throughput of compilation: 1,000 generated job specs over 10 runtimes in one process, against
the floor of PyYAML's C loader on the inputs plus its C dumper on the outputs. Each side runs
``--repeat`` times; medians.

    python bench/compile_many.py [--jobs 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from _common import generate_specs

from trainspec.compiler.emit import manifest_dicts, render_tree
from trainspec.compiler.pipeline import compile_paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each side; medians are reported")
    args = parser.parse_args()
    floors, runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        paths = generate_specs(Path(tmp), args.jobs)
        warm = compile_paths([str(paths[0])])  # imports and the built-in catalog
        render_tree(warm.outputs)
        for _ in range(args.repeat):  # interleaved, so both sides see the same machine load
            result = None
            gc.collect()  # each run starts from the same heap, like a fresh process
            start = time.perf_counter()
            result = compile_paths([tmp])
            files = render_tree(result.outputs)
            runs.append(time.perf_counter() - start)
            assert result.ok, [d.message for d in result.diagnostics if d.is_error][:3]

            outputs = [d for out in result.outputs for d in manifest_dicts(out.objects)]
            start = time.perf_counter()
            for path in paths:
                list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))
            yaml.dump_all(outputs, Dumper=yaml.CSafeDumper, sort_keys=False)
            floors.append(time.perf_counter() - start)
    floor, took = statistics.median(floors), statistics.median(runs)
    print(f"specs: {len(paths)} ({args.jobs} jobs over {len(paths) - args.jobs} runtimes) -> "
          f"{len(outputs)} objects in {len(files)} files, median of {args.repeat}")
    print(f"floor (C load + C dump): {floor * 1000:7.0f}ms  {len(paths) / floor:8.0f} specs/s")
    print(f"trainspec compile:       {took * 1000:7.0f}ms  {len(paths) / took:8.0f} specs/s")
    print(f"ratio to the floor:      {took / floor:7.2f}x")


if __name__ == "__main__":
    main()
