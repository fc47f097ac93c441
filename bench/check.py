"""``trainspec check`` against the CRDs vs ``trainspec validate`` on the same files: median wall
time of fresh processes, side by side. Goal: check <= 2x validate.

    python bench/check.py [--runs 15] [--crds ../shared/crds] [PATH ...]

Three kinds of check run, interleaved with validate so that machine noise hits all alike:

* ``check (cache)``: the usual case, the on-disk cache holds the CRD schemas, the CEL parse
  trees and the verdicts of unchanged manifests (primed once before timing);
* ``check (first run)``: an empty cache every run (a new CI machine, a changed CRD);
* ``check (no cache)``: ``TRAINSPEC_NO_CACHE=1``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ENV, ROOT, trainspec_command


def _default_crds() -> str:
    sys.path.insert(0, str(ROOT))
    from trainspec.check import default_crd_dirs

    dirs = default_crd_dirs()
    if not dirs:
        sys.exit("no CRDs found: pass --crds DIR")
    return str(dirs[0])


def _run(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", default=["examples/"], metavar="PATH")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--crds", default=None, help="CRD folder (default: ../shared/crds)")
    args = parser.parse_args()
    crds = args.crds or _default_crds()

    with tempfile.TemporaryDirectory(prefix="trainspec-bench-") as tmp:
        warm = {**ENV, "XDG_CACHE_HOME": str(Path(tmp) / "warm")}
        nocache = {**ENV, "TRAINSPEC_NO_CACHE": "1"}
        validate = trainspec_command("validate", *args.paths)
        check = trainspec_command("check", *args.paths, "--crds", crds)
        cases: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "validate": (validate, ENV),
            "check (cache)": (check, warm),
            "check (first run)": (check, None),  # a fresh cache directory per run
            "check (no cache)": (check, nocache),
        }
        for command, env in (cases["validate"], cases["check (cache)"]):  # warm-up; primes the cache
            _run(command, env or ENV)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for i in range(args.runs):
            for name, (command, env) in cases.items():
                if env is None:
                    env = {**ENV, "XDG_CACHE_HOME": str(Path(tmp) / f"fresh-{i}")}
                times[name].append(_run(command, env))

    base = statistics.median(times["validate"])
    paths = " ".join(args.paths)
    print(f"paths: {paths}   crds: {os.path.relpath(crds, ROOT)}   runs: {args.runs}   python {sys.version.split()[0]}")
    print(f"{'command':22} {'median':>8} {'min':>8} {'vs validate':>12}")
    for name, values in times.items():
        print(f"{name:22} {statistics.median(values) * 1000:6.0f}ms {min(values) * 1000:6.0f}ms "
              f"{statistics.median(values) / base:11.2f}x")
    ratio = statistics.median(times["check (cache)"]) / base
    print(f"goal check <= 2x validate: {'met' if ratio <= 2 else 'NOT met'} ({ratio:.2f}x with the cache)")


if __name__ == "__main__":
    main()
