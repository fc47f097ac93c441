"""Throughput of compilation: 1,000 generated job specs over 10 runtimes in one process, against
the floor of PyYAML's C loader on the inputs plus its C dumper on the outputs. Each side runs
``--repeat`` times; medians.

    python bench/compile_many.py [--jobs 1000] [--repeat 5]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml

from _common import generate_specs, interleaved, many_specs_arguments

from trainspec.compiler.emit import manifest_dicts, render_tree
from trainspec.compiler.pipeline import compile_paths


def main() -> None:
    args = many_specs_arguments(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        paths = generate_specs(Path(tmp), args.jobs)
        result = compile_paths([tmp])  # warm: imports and the built-in catalog; the floor's outputs
        assert result.ok, [d.message for d in result.diagnostics if d.is_error][:3]
        outputs = [d for out in result.outputs for d in manifest_dicts(out.objects)]
        files = render_tree(result.outputs)

        def load_and_dump() -> None:
            for path in paths:
                list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))
            yaml.dump_all(outputs, Dumper=yaml.CSafeDumper, sort_keys=False)

        def compile_and_render() -> None:
            render_tree(compile_paths([tmp]).outputs)

        floor, took = interleaved(load_and_dump, compile_and_render, args.repeat)
    print(f"specs: {len(paths)} ({args.jobs} jobs over {len(paths) - args.jobs} runtimes) -> "
          f"{len(outputs)} objects in {len(files)} files, median of {args.repeat}")
    print(f"floor (C load + C dump): {floor * 1000:7.0f}ms  {len(paths) / floor:8.0f} specs/s")
    print(f"trainspec compile:       {took * 1000:7.0f}ms  {len(paths) / took:8.0f} specs/s")
    print(f"ratio to the floor:      {took / floor:7.2f}x")


if __name__ == "__main__":
    main()
