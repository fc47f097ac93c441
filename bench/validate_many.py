"""Throughput of validation: 1,000 generated specs in one process, against the floor of loading
the same files with PyYAML's C loader alone. Each side runs ``--repeat`` times; medians.

    python bench/validate_many.py [--jobs 1000] [--repeat 5]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml

from _common import generate_specs, interleaved, many_specs_arguments

from trainspec.compiler.pipeline import compile_paths


def main() -> None:
    args = many_specs_arguments(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        paths = generate_specs(Path(tmp), args.jobs)
        compile_paths([str(paths[0])], lower=False)  # warm: imports and the built-in catalog

        def load_only() -> None:
            for path in paths:
                list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))

        def validate() -> None:
            result = compile_paths([tmp], lower=False)
            assert result.ok, [d.message for d in result.diagnostics if d.is_error][:3]

        floor, took = interleaved(load_only, validate, args.repeat)
    print(f"specs: {len(paths)} ({args.jobs} jobs, {len(paths) - args.jobs} runtimes), median of {args.repeat}")
    print(f"PyYAML CSafeLoader alone: {floor * 1000:7.0f}ms  {len(paths) / floor:8.0f} specs/s")
    print(f"trainspec validate:       {took * 1000:7.0f}ms  {len(paths) / took:8.0f} specs/s")
    print(f"ratio to the floor:       {took / floor:7.2f}x")


if __name__ == "__main__":
    main()
