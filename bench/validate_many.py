"""Throughput of validation: 1,000 generated specs in one process, against the floor of loading
the same files with PyYAML's C loader alone. Each side runs ``--repeat`` times; medians.

    python bench/validate_many.py [--jobs 1000] [--repeat 5]
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

from trainspec.compiler.pipeline import compile_paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each side; medians are reported")
    args = parser.parse_args()
    floors, runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        paths = generate_specs(Path(tmp), args.jobs)
        compile_paths([str(paths[0])], lower=False)  # warm: imports and the built-in catalog
        for _ in range(args.repeat):  # interleaved, so both sides see the same machine load
            result = None
            gc.collect()  # each run starts from the same heap, like a fresh process
            start = time.perf_counter()
            for path in paths:
                list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))
            floors.append(time.perf_counter() - start)
            start = time.perf_counter()
            result = compile_paths([tmp], lower=False)
            runs.append(time.perf_counter() - start)
            errors = [d for d in result.diagnostics if d.is_error]
            assert not errors, errors[:3]
    floor, took = statistics.median(floors), statistics.median(runs)
    print(f"specs: {len(paths)} ({args.jobs} jobs, {len(paths) - args.jobs} runtimes), median of {args.repeat}")
    print(f"PyYAML CSafeLoader alone: {floor * 1000:7.0f}ms  {len(paths) / floor:8.0f} specs/s")
    print(f"trainspec validate:       {took * 1000:7.0f}ms  {len(paths) / took:8.0f} specs/s")
    print(f"ratio to the floor:       {took / floor:7.2f}x")


if __name__ == "__main__":
    main()
