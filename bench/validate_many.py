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

import argparse
import gc
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
        f"{'specs':>7} {'C loader':>10} {'ms/spec':>8} {'validate':>10} {'ms/spec':>8} {'ratio':>6} "
        f"{'peak RSS':>9} {'+during':>8} {'cyclic':>6}"
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
            f"{n:7d} {r['floor'] * 1000:8.0f}ms {r['floor'] * 1000 / n:8.3f} {r['took'] * 1000:8.0f}ms "
            f"{r['took'] * 1000 / n:8.3f} {r['took'] / r['floor']:5.2f}x {r['rss_after_kb'] / 1024:7.1f}MB "
            f"{(r['rss_after_kb'] - r['rss_before_kb']) / 1024:6.1f}MB {r['cyclic']:6d}"
        )
    worst = max(r["took"] / r["floor"] for r in rows)
    print(
        f"medians of {args.repeat} interleaved runs; goal <= {GOAL:.0f}x the C loader at every size: "
        f"{'met' if worst <= GOAL else 'missed'} (worst {worst:.2f}x)"
    )
    if len(rows) > 1:
        per = [r["took"] / r["specs"] for r in rows]
        print(f"per-spec cost, largest size / smallest: {per[-1] / per[0]:.2f}x (1.00x is linear)")
    print(f"load average at the end: {machine().rsplit('load average ', 1)[1]}")


if __name__ == "__main__":
    main()
