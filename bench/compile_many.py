"""Throughput of compilation: N generated job specs over 10 runtimes compiled and rendered in one
process (nothing written), against the floor of PyYAML's C loader on the inputs plus its C dumper
on the outputs. Each size runs in its own child process; within it, each side runs ``--repeat``
times, interleaved; medians.

    python bench/compile_many.py [--jobs 1000,10000] [--repeat 5]

Writing the files (and making them durable) is bench/compile_to_dir.py.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ENV, ROOT, generate_specs, interleaved, machine

GOAL = 3.0


def child(jobs: int, repeat: int) -> dict[str, float]:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", default="1000,10000", help="comma-separated sizes (job specs per run)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each side; medians are reported")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.repeat)))
        return
    print(machine())
    print(
        f"{'specs':>7} {'objects':>8} {'files':>6} {'floor':>9} {'ms/spec':>8} {'compile':>9} {'ms/spec':>8} "
        f"{'ratio':>6} {'peak RSS':>9}"
    )
    rows = []
    for jobs in (int(j) for j in args.jobs.split(",")):
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(jobs), "--repeat", str(args.repeat)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=ENV,
            check=True,
        ).stdout
        r = json.loads(out.splitlines()[-1])
        n = r["specs"]
        rows.append(r)
        print(
            f"{n:7d} {r['objects']:8d} {r['files']:6d} {r['floor'] * 1000:7.0f}ms {r['floor'] * 1000 / n:8.3f} "
            f"{r['took'] * 1000:7.0f}ms {r['took'] * 1000 / n:8.3f} {r['took'] / r['floor']:5.2f}x "
            f"{r['rss_kb'] / 1024:7.1f}MB"
        )
    worst = max(r["took"] / r["floor"] for r in rows)
    print(
        f"medians of {args.repeat} interleaved runs; goal <= {GOAL:.0f}x the floor at every size: "
        f"{'met' if worst <= GOAL else 'missed'} (worst {worst:.2f}x)"
    )
    if len(rows) > 1:
        per = [r["took"] / r["specs"] for r in rows]
        print(f"per-spec cost, largest size / smallest: {per[-1] / per[0]:.2f}x (1.00x is linear)")
    print(f"load average at the end: {machine().rsplit('load average ', 1)[1]}")


if __name__ == "__main__":
    main()
