"""``trainspec check`` against ``trainspec validate`` on the same files, before and after a change,
side by side in one run. Goal (issue 26): a cold check (no cache) <= 2x a cold validate, on the
examples with and without ``--crds``, and on 1,000 compiled manifests.

    python bench/check.py [--runs 11] [--jobs 1000] [--baseline HEAD] [--crds DIR] [--keep DIR]

Two normal installs (``bench/_install.py``: a wheel into a new venv, not the editable install,
whose import hook slows every start): the working tree ("after") and commit ``--baseline``
("before", default ``HEAD``), each with trainspec's dependencies at the versions this
interpreter has. ``--baseline none`` times the working tree alone. The files:

* ``examples/`` (what the README's examples compile to: TrainJobs, runtimes, a RayJob, a
  PyTorchJob, an MPIJob, PVCs...), against the CRDs shipped in the package and against
  ``--crds`` (default: the CRDs beside the project, ``../shared/crds``);
* ``--jobs`` generated specs (``bench/_common.generate_specs``) compiled into a directory by the
  after install (``trainspec compile -o DIR``): the manifests a GitOps repository holds, checked
  as manifests (one TrainJob and one PVC per spec, ten runtimes).

Every round runs every command of both installs once, in an order rotated from round to round,
so that load from elsewhere falls on all of them alike; medians are reported, wall time and CPU
time (user + system of the process). ``TRAINSPEC_NO_CACHE=1`` for every check (the cold case of
the goal) but one: ``--crds`` with the on-disk cache filled by the untimed first round. Both installs must print the same report for every check (the change keeps every
diagnostic). Then one instrumented cold check per file set says where its time goes (after
install).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ENV, ROOT, generate_specs, machine
from _install import Install, normal_install

GOAL = 2.0
#: trainspec's dependencies (pyproject.toml), pinned in both venvs to this interpreter's versions.
DEPENDENCIES = ("jinja2", "jsonschema", "cel-expr-python", "protobuf", "google-re2")

# One cold check in a child, its phases timed by wrapping the functions that do them.
_BREAKDOWN = r"""
import json, sys, time
start = time.perf_counter()
spent = {}
def timed(owner, name, label):
    original = getattr(owner, name)
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - t
    setattr(owner, name, wrapper)
    return wrapper
import trainspec.compiler.pipeline as pipeline, trainspec.check.passes as passes, trainspec.check.manifests as m
import trainspec.check.api_server as api, trainspec.check.schema.structural as st, trainspec.check.schema.core_kinds as ck
spent["imports (check, pipeline)"] = time.perf_counter() - start
timed(pipeline, "run", "read + compile the inputs (the pipeline)")
timed(m, "compiled_manifests", "manifests (compiled, foreign)")
timed(m, "foreign_manifests", "manifests (compiled, foreign)")
timed(passes, "crd_findings", "CRD pass (all of it)")
timed(st.StructuralValidator, "validate", "  structural schema")
timed(ck, "check_core_kind", "  core kinds (PVC)")
api.check_cel = timed(api, "check_cel", "  CEL rules (defaulting included)")
timed(passes, "webhook_findings", "webhook rules")
timed(passes, "preflight_findings", "Kueue pre-flight")
from trainspec.cli.main import main
sys.argv = ["trainspec", "check", *sys.argv[1:], "-q"]
try:
    main()
except SystemExit:
    pass
spent["total (in the process)"] = time.perf_counter() - start
print(json.dumps(spent))
"""


def _with_dependencies(install: Install) -> Install:
    """``install`` plus trainspec's dependencies at this interpreter's versions (same in every venv)."""
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in DEPENDENCIES]
    command = [str(install.python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins]
    subprocess.run(command, check=True, env=ENV, capture_output=True)
    return install._replace(note=f"{install.note}; {', '.join(pins)}")


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    """(wall seconds, CPU seconds of the child, the finished process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc


#: The case the cache is on for: its cache directory (per install) is filled in round 0.
WARM = "check examples --crds, warm cache"


def _cases(paths: list[str], crds: str, compiled: Path) -> dict[str, tuple[str, list[str]]]:
    """name -> (the validate it is compared with, the trainspec arguments)."""
    out = str(compiled)
    return {
        "validate examples": ("validate examples", ["validate", *paths]),
        "check examples (shipped CRDs)": ("validate examples", ["check", *paths]),
        "check examples --crds": ("validate examples", ["check", *paths, "--crds", crds]),
        WARM: ("validate examples", ["check", *paths, "--crds", crds]),
        "validate compiled": ("validate compiled", ["validate", out]),
        "check compiled (shipped CRDs)": ("validate compiled", ["check", out]),
    }


def _rounds(
    installs: list[Install], cases: dict[str, tuple[str, list[str]]], runs: int, cache: Path
) -> dict[tuple[str, str], list[tuple[float, float]]]:
    cold = {**ENV, "TRAINSPEC_NO_CACHE": "1", "TRAINSPEC_CRDS_DIR": ""}
    jobs = [(i, name) for name in cases for i in installs]
    times: dict[tuple[str, str], list[tuple[float, float]]] = {(i.label, n): [] for i, n in jobs}
    outputs: dict[str, set[tuple[int, str]]] = {}
    for round_no in range(runs + 1):  # round 0 warms up (bytecode, page cache, the cache) and is not timed
        shift = round_no % len(jobs)
        for install, name in jobs[shift:] + jobs[:shift]:
            env = cold
            if name == WARM:
                env = {**cold, "TRAINSPEC_NO_CACHE": "", "XDG_CACHE_HOME": str(cache / install.label)}
            wall, cpu, proc = _timed([*install.trainspec, *cases[name][1]], env)
            if proc.returncode not in (0, 1):
                sys.exit(
                    f"{install.label}: trainspec {' '.join(cases[name][1])} exited {proc.returncode}:\n{proc.stderr.decode()}"
                )
            if round_no == 0:
                outputs.setdefault(name, set()).add((proc.returncode, hashlib.sha256(proc.stdout).hexdigest()))
            else:
                times[install.label, name].append((wall, cpu))
    differ = [name for name, seen in outputs.items() if len(seen) > 1]
    if differ:
        sys.exit(f"the installs do not print the same report for: {', '.join(differ)}")
    return times


def _breakdown(install: Install, args: list[str], runs: int = 3) -> dict[str, float]:
    env = {**ENV, "TRAINSPEC_NO_CACHE": "1", "TRAINSPEC_CRDS_DIR": ""}
    samples = []
    for _ in range(runs):
        proc = subprocess.run(
            [str(install.python), "-c", _BREAKDOWN, *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        samples.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(s.get(key, 0.0) for s in samples) for key in samples[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", default=["examples/"], metavar="PATH")
    parser.add_argument("--runs", type=int, default=11, help="timed rounds (medians are reported)")
    parser.add_argument("--jobs", type=int, default=1000, help="generated specs compiled into manifests")
    parser.add_argument("--baseline", default="HEAD", help="the commit to compare with ('none': no baseline)")
    parser.add_argument("--crds", default=str(ROOT.parent / "shared" / "crds"), help="CRD folder for --crds")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="build the installs in DIR and keep them")
    args = parser.parse_args()
    if not Path(args.crds).is_dir():
        sys.exit(f"{args.crds}: no such directory (pass --crds DIR)")

    with tempfile.TemporaryDirectory(prefix="trainspec-bench-") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        installs = [_with_dependencies(normal_install(workdir / "after", label="after"))]
        if args.baseline != "none":
            installs.insert(0, _with_dependencies(normal_install(workdir / "before", args.baseline, label="before")))
        specs, compiled = Path(tmp) / "specs", Path(tmp) / "compiled"
        generate_specs(specs, args.jobs)
        subprocess.run(
            [*installs[-1].trainspec, "compile", str(specs), "-o", str(compiled)],
            check=True,
            env=ENV,
            capture_output=True,
        )
        cases = _cases(args.paths, args.crds, compiled)

        print(machine())
        for install in installs:
            print(f"{install.label}: {install.note}")
        print(
            f"examples: {' '.join(args.paths)}; --crds {os.path.relpath(args.crds, ROOT)}; compiled: {args.jobs} specs"
        )
        times = _rounds(installs, cases, args.runs, Path(tmp) / "cache")
        print(f"\n{args.runs} interleaved rounds, medians; TRAINSPEC_NO_CACHE=1 except for the warm cache\n")
        print(f"| command | {' | '.join(f'{i.label} wall | {i.label} CPU | {i.label} / validate' for i in installs)} |")
        print(f"|---|{'---:|' * 3 * len(installs)}")
        verdicts = []
        for name, (base, _) in cases.items():
            cells = []
            for install in installs:
                wall = statistics.median(t[0] for t in times[install.label, name])
                cpu = statistics.median(t[1] for t in times[install.label, name])
                ratio = wall / statistics.median(t[0] for t in times[install.label, base])
                cells.append(f"{wall * 1000:.0f} ms | {cpu * 1000:.0f} ms | {ratio:.2f}x")
                if install is installs[-1] and name.startswith("check") and name != WARM:
                    verdicts.append(f"{name}: {ratio:.2f}x ({'met' if ratio <= GOAL else 'MISSED'})")
            print(f"| `trainspec {' '.join(cases[name][1])}` ({name}) | {' | '.join(cells)} |")
        print(f"\ngoal: check <= {GOAL:.0f}x validate, after: " + "; ".join(verdicts))
        print(f"load average at the end: {machine().rsplit('load average ', 1)[1]}")
        for label, name in (
            ("examples, --crds", "check examples --crds"),
            ("compiled", "check compiled (shipped CRDs)"),
        ):
            print(f"\nwhere a cold check's time goes ({label}; after install, one instrumented process, medians of 3):")
            for phase, seconds in _breakdown(installs[-1], cases[name][1][1:]).items():
                print(f"  {phase:48} {seconds * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
