"""``trainspec check`` against the CRDs vs ``trainspec validate`` on the same files: median wall
time of fresh processes, side by side. Goal: a cold check (no cache) <= 2x a cold validate.

    python bench/check.py [--runs 15] [--crds ../shared/crds] [PATH ...]

The kinds of check, interleaved with validate so that machine noise hits all alike:

* ``check (no cache)``: ``TRAINSPEC_NO_CACHE=1``, the goal's case;
* ``check (first run)``: an empty cache every run (a new CI machine, a changed CRD);
* ``check (cache)``: the on-disk cache holds the parsed CRDs and the verdicts of unchanged
  manifests (primed once before timing);
* ``check (shipped CRDs)``: no ``--crds``, the CRD data shipped in the package, no cache;
* ``check (cel-python)``: no cache, ``TRAINSPEC_CEL_ENGINE=celpy``, the engine used before.

Then one instrumented cold run says where the time of a check goes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ENV, ROOT, trainspec_command

# Run in a child: one cold check with the phases timed (the CLI's own code path).
_BREAKDOWN = r"""
import json, sys, time
start = time.perf_counter()
from trainspec.check.cel import validations as cel
from trainspec.check.schema import crds, structural as schema
spent = {"CRD YAML parsing": 0.0, "structural schema (convert + validate)": 0.0, "CEL rules": 0.0}
def timed(owner, name, label):
    original = getattr(owner, name)
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            spent[label] += time.perf_counter() - t
    setattr(owner, name, wrapper)
timed(crds, "_load_yaml_documents", "CRD YAML parsing")
timed(schema.StructuralValidator, "__init__", "structural schema (convert + validate)")
timed(schema.StructuralValidator, "validate", "structural schema (convert + validate)")
timed(cel, "check_cel", "CEL rules")
import trainspec.check as package
package.check_cel = cel.check_cel
from trainspec.cli.main import main
sys.argv = ["trainspec", "check", *sys.argv[1:], "-q"]
try:
    main()
except SystemExit:
    pass
spent["total (in process)"] = time.perf_counter() - start
print(json.dumps(spent))
"""


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


def _breakdown(paths: list[str], crds: str, runs: int) -> dict[str, float]:
    env = {**ENV, "TRAINSPEC_NO_CACHE": "1"}
    samples: list[dict[str, float]] = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-c", _BREAKDOWN, *paths, "--crds", crds],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        samples.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


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
        shipped = trainspec_command("check", *args.paths)
        cases: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "validate": (validate, ENV),
            "check (no cache)": (check, nocache),
            "check (first run)": (check, None),  # a fresh cache directory per run
            "check (cache)": (check, warm),
            "check (shipped CRDs)": (shipped, {**nocache, "TRAINSPEC_CRDS_DIR": ""}),
            "check (cel-python)": (check, {**nocache, "TRAINSPEC_CEL_ENGINE": "celpy"}),
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
    print(
        f"paths: {paths}   crds: {os.path.relpath(crds, ROOT)}   runs: {args.runs}   python {sys.version.split()[0]}"
        f"   load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'command':22} {'median':>8} {'min':>8} {'vs validate':>12}")
    for name, values in times.items():
        print(
            f"{name:22} {statistics.median(values) * 1000:6.0f}ms {min(values) * 1000:6.0f}ms "
            f"{statistics.median(values) / base:11.2f}x"
        )
    ratio = statistics.median(times["check (no cache)"]) / base
    print(f"goal cold check <= 2x validate: {'met' if ratio <= 2 else 'NOT met'} ({ratio:.2f}x without a cache)")

    print("where a cold check's time goes (one instrumented process, medians of 5):")
    for label, seconds in _breakdown(args.paths, crds, 5).items():
        print(f"  {label:40} {seconds * 1000:6.0f}ms")


if __name__ == "__main__":
    main()
