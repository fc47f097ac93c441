"""Start-up: cold ``trainspec validate <one spec>``, ``trainspec compile <one spec> -o -`` and
``trainspec --help`` against ``python -c pass`` and ``python -c 'import yaml'`` (the floor of any
YAML tool), side by side in one run, on a normal install and on the editable one.

    python bench/startup.py [--runs 30] [--imports 25] [--keep DIR] [--no-editable] [--baseline REV]
                            [--instructions]

The normal install is built for the run: a wheel of the working tree (built by this
interpreter's pip and setuptools, nothing downloaded) installed with pip into a new
``python -m venv``, with the same PyYAML build as this interpreter's. The editable install is
this interpreter's, when trainspec is installed editable here (``pip install -e .``): its import
hook runs on every start, ``python -c pass`` included, so its rows are for comparison only.

Every round runs each command of both installs once, in rotated order (medians over ``--runs``
rounds). ``--baseline REV`` adds a normal install of commit REV (``git archive``), timed in the same
rounds, for a before/after. Goals (issue 26), on the normal install: validate <= 1.8x ``import
yaml``, ``--help`` <= 1.3x. ``--imports N`` then lists the N costliest imports of validate on the
normal install (``-X importtime``, self time, medians of 7 runs).

Wall times on a shared machine move by +-10% from run to run. ``--instructions`` also counts the
instructions each command executes (``valgrind --tool=callgrind``, once per command and install,
hash seed fixed): the same count on every run whatever else the machine does, so a change of a
few percent shows; it leaves out what the kernel does (files opened, pages mapped), which wall
times include.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from _common import ENV, ROOT, interleaved_walls, machine
from _install import Install, current_install, normal_install, same_output

SPEC = "examples/ddp-cpu.yaml"
VALIDATE = f"trainspec validate {SPEC}"
HELP = "trainspec --help"
#: Command -> most it may take, as a multiple of ``import yaml`` (normal install; issue 26).
GOALS = {VALIDATE: 1.8, HELP: 1.3}


def commands(install: Install) -> dict[str, list[str]]:
    """The commands timed for one install."""
    python = str(install.python)
    return {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import yaml'": [python, "-c", "import yaml"],
        VALIDATE: [*install.trainspec, "validate", SPEC],
        f"trainspec compile {SPEC} -o -": [*install.trainspec, "compile", SPEC, "-o", "-"],
        HELP: [*install.trainspec, "--help"],
    }


def instructions(command: list[str]) -> int | None:
    """Instructions ``command`` executes (callgrind's count), None when valgrind fails."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**ENV, "PYTHONHASHSEED": "0"},  # the same dictionaries and sets on every run
        check=False,
    )
    found = re.search(r"Collected : (\d+)", out.stderr)
    return int(found[1]) if found else None


def import_costs(install: Install, top: int, runs: int = 7) -> list[tuple[str, float, float]]:
    """(module, self ms, cumulative ms) of validate's costliest imports, medians of ``runs``."""
    line = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
    samples: dict[str, list[tuple[int, int]]] = {}
    entry = install.trainspec[1:] if len(install.trainspec) > 1 else install.trainspec  # script or -m
    for _ in range(runs):
        err = subprocess.run(
            [str(install.python), "-X", "importtime", *entry, "validate", SPEC],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=ENV,
            check=False,
        ).stderr
        for match in line.finditer(err):
            samples.setdefault(match[4], []).append((int(match[1]), int(match[2])))
    rows = [
        (name, statistics.median(s for s, _ in v) / 1000, statistics.median(c for _, c in v) / 1000)
        for name, v in samples.items()
    ]
    return sorted(rows, key=lambda row: -row[1])[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30, help="timed rounds (medians are reported)")
    parser.add_argument(
        "--imports",
        type=int,
        default=0,
        metavar="N",
        help="also list validate's N costliest imports on the normal install",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="build the normal install in DIR and leave it there (default: a temporary directory)",
    )
    parser.add_argument("--no-editable", action="store_true", help="time the normal install only")
    parser.add_argument("--baseline", metavar="REV", help="also a normal install of commit REV (before/after)")
    parser.add_argument(
        "--instructions", action="store_true", help="also count each command's instructions (valgrind callgrind)"
    )
    args = parser.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind on PATH")

    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        installs = [normal_install(workdir / "normal")]
        if args.baseline:
            installs.append(normal_install(workdir / "baseline", args.baseline, label="baseline"))
        here = current_install()
        if not args.no_editable and here.label == "editable":
            installs.append(here)
        same_output([i for i in installs if i.label != "baseline"], ["validate", SPEC])
        same_output([i for i in installs if i.label != "baseline"], ["compile", SPEC, "-o", "-"])
        print(machine())
        for install in installs:
            print(f"{install.label} install: {install.note}")
        table = {(i.label, name): command for i in installs for name, command in commands(i).items()}
        walls = interleaved_walls({f"{k[0]}: {k[1]}": v for k, v in table.items()}, args.runs)
        print(f"{args.runs} interleaved rounds, medians; ratios are to the same install's floors\n")
        print(f"{'install':9} {'command':44} {'median':>8} {'min':>8} {'/ pass':>7} {'/ yaml':>7}")
        ratios = {}
        for install in installs:
            median = {name: statistics.median(walls[f"{install.label}: {name}"]) for name in commands(install)}
            bare, floor = median["python -c pass"], median["python -c 'import yaml'"]
            for name in commands(install):
                low = min(walls[f"{install.label}: {name}"])
                print(
                    f"{install.label:9} {name:44} {median[name] * 1000:6.1f}ms {low * 1000:6.1f}ms "
                    f"{median[name] / bare:6.2f}x {median[name] / floor:6.2f}x"
                )
                ratios[install.label, name] = median[name] / floor
        print()
        for name, goal in GOALS.items():
            ratio = ratios["normal", name]
            print(
                f"goal: {name} <= {goal:.1f}x import yaml (normal install): {ratio:.2f}x, "
                f"{'met' if ratio <= goal else 'missed'}"
            )
        print(f"load average at the end: {machine().rsplit('load average ', 1)[1]}")
        if args.instructions:
            print("\ninstructions (callgrind, millions; ratios to the same install's import yaml):")
            for install in installs:
                counts = {name: instructions(command) for name, command in commands(install).items()}
                yaml_count = counts["python -c 'import yaml'"]
                for name, count in counts.items():
                    millions = f"{count / 1e6:8.1f}M" if count else "     n/a"
                    times = f"{count / yaml_count:6.2f}x" if count and yaml_count else "   n/a"
                    print(f"{install.label:9} {name:44} {millions} {times}")
        if args.imports:
            print("\nvalidate's costliest imports (normal install, -X importtime, medians of 7):")
            print(f"{'module':48} {'self':>8} {'cumulative':>11}")
            for name, self_ms, cumulative in import_costs(installs[0], args.imports):
                print(f"{name:48} {self_ms:6.2f}ms {cumulative:9.2f}ms")


if __name__ == "__main__":
    main()
