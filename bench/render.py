"""Rendering at C speed (issue 26): the compiler's YAML writer against the dumper it replaced, and
``compile`` end to end against the floor of C-loading and C-dumping the same documents.

    python bench/render.py [--jobs 1000,30000] [--repeat 5]

Each size runs in its own child process: N generated job specs over 10 runtimes (one spec per
file, bench/_common.generate_specs) are compiled once to get the output objects, then these run
side by side, interleaved (every round runs each once, in an order rotated from round to round;
the heap collected before each; medians):

* ``dumper``: the emit path before the writer, one ``yaml.dump`` per object with the compiler's
  dumper (libyaml's emitter, PyYAML's representer), again in ASCII where the text holds a raw
  control or bidi character;
* ``writer``: ``dump_objects`` today (the writer, the dumper for what it leaves);
* ``load``: ``yaml.load_all(..., Loader=yaml.CSafeLoader)`` of every input file;
* ``floor``: ``load`` plus ``yaml.dump_all(outputs, Dumper=yaml.CSafeDumper, sort_keys=False)``
  (bench/compile_many.py's floor; PyYAML has no dump path without its Python representer);
* ``compile``: ``compile_paths`` and ``render_tree`` (every output file's text, nothing written);
* ``compile, dumper``: the same with the writer switched off (every object to the dumper): the
  compile of the commit before.

The goal is ``compile`` <= 1.5x ``floor`` at every size.
"""

from __future__ import annotations

import gc
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import generate_specs, sizes_main

GOAL = 1.5


def interleaved_medians(works: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds of each of ``works``, run in rounds with the order rotated every round."""
    names = list(works)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_no in range(repeat):
        shift = round_no % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            start = time.perf_counter()
            works[name]()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def child(jobs: int, repeat: int) -> dict[str, Any]:
    """Measure one size in this process and return the figures."""
    import yaml

    from trainspec.compiler import emit
    from trainspec.compiler.emit import dump_objects, manifest_dicts, render_tree
    from trainspec.compiler.pipeline import compile_paths

    def dumper(obj: dict[str, Any]) -> str:
        options: dict[str, Any] = {"Dumper": emit._Dumper, "sort_keys": False, "default_flow_style": False}
        text: str = yaml.dump(obj, allow_unicode=True, width=1 << 16, **options)
        if not emit._RAW_IN_VALUES.search(text):
            return text
        return str(yaml.dump(obj, width=1 << 16, **options))

    with tempfile.TemporaryDirectory() as tmp:
        paths = generate_specs(Path(tmp), jobs)
        result = compile_paths([tmp])  # warm: imports and the built-in catalog; the outputs
        if not result.ok:
            raise SystemExit(str([d.message for d in result.diagnostics if d.is_error][:3]))
        outputs = [d for out in result.outputs for d in manifest_dicts(out.objects)]
        old = [dumper(obj) for obj in outputs]
        new = [dump_objects([obj]) for obj in outputs]
        if old != new:
            raise SystemExit("the writer's text differs from the dumper's")
        taken = sum(emit.render(obj) is not None for obj in outputs)
        del result, old, new

        def load() -> None:
            for path in paths:
                list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))

        def floor() -> None:
            load()
            yaml.dump_all(outputs, Dumper=yaml.CSafeDumper, sort_keys=False)

        def compile_with_dumper() -> None:
            real = emit.render
            emit.render = lambda obj: None  # every object to the dumper, as before the writer
            try:
                render_tree(compile_paths([tmp]).outputs)
            finally:
                emit.render = real

        medians = interleaved_medians(
            {
                "dumper": lambda: [dumper(obj) for obj in outputs],
                "writer": lambda: [dump_objects([obj]) for obj in outputs],
                "load": load,
                "floor": floor,
                "compile": lambda: render_tree(compile_paths([tmp]).outputs),
                "compile_dumper": compile_with_dumper,
            },
            repeat,
        )
    return {
        "specs": len(paths),
        "objects": len(outputs),
        "taken": taken,
        **medians,
        "took": medians["compile"],
        "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def _row(r: dict[str, Any]) -> str:
    ms = {k: r[k] * 1000 for k in ("dumper", "writer", "load", "floor", "compile", "compile_dumper")}
    return (
        f"{r['specs']:7d} {r['objects']:8d} {r['taken']:6d} {ms['dumper']:8.0f}ms {ms['writer']:7.0f}ms "
        f"{r['dumper'] / r['writer']:6.1f}x {ms['load']:7.0f}ms {ms['floor']:7.0f}ms "
        f"{ms['compile_dumper']:8.0f}ms {ms['compile']:7.0f}ms {r['compile_dumper'] / r['floor']:6.2f}x "
        f"{r['compile'] / r['floor']:6.2f}x {r['compile'] / r['load']:6.2f}x {r['rss_kb'] / 1024:7.1f}MB"
    )


def main() -> None:
    sizes_main(
        __doc__,
        __file__,
        child,
        f"{'specs':>7} {'objects':>8} {'writer':>6} {'dumper':>10} {'writer':>9} {'faster':>7} {'load':>9} "
        f"{'floor':>9} {'compile(d)':>10} {'compile':>9} {'(d)/fl':>7} {'/floor':>7} {'/load':>7} {'peak RSS':>9}",
        _row,
        "the floor",
        GOAL,
        jobs="1000,30000",
    )


if __name__ == "__main__":
    main()
