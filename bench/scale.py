"""Scale (issue 26): ``validate``, ``compile``, ``check`` and ``diff`` on generated repositories of
1,000 to 30,000 specs, against the floors of PyYAML's C loader and dumper, before and after a change,
side by side in one run: wall time and peak RSS of every command as its own process.

    python bench/scale.py [--sizes 1000,10000,30000] [--shapes harness,ddp-cpu]
        [--commands validate,compile-stdout,compile-dir,check,diff] [--runs 3] [--large-runs 1]
        [--baseline REV | --no-baseline] [--current] [--workdir DIR] [--quick]

Two installs, each a normal ``pip install`` of a wheel into a new venv (bench/_install.py), with
trainspec's dependencies at this interpreter's versions: commit ``--baseline`` (default cbff14b, the
main branch before issue 26) and the working tree. ``--current`` times this interpreter's trainspec
as the working tree instead (an editable install's import hook slows every start: for smoke runs).

Two shapes of repository, each at every ``--sizes`` N (one spec per file):

* ``harness``: ``bench/_common.generate_specs`` (N jobs over 10 runtimes, queues, data, checkpoints);
* ``ddp-cpu``: N copies of ``examples/ddp-cpu.yaml``, each renamed (it runs on a built-in runtime).

Per size and shape, in each round, every command runs once per install, the two installs one after
the other and in the other order the next round (A B, then B A), with the floors in the same round:

* ``floor: C loader``: ``yaml.load_all(..., Loader=yaml.CSafeLoader)`` of every spec file, in a child;
* ``floor: C load + C dump``: the same, then ``yaml.dump_all`` of the compiled documents (the working
  tree's compiled tree, read beforehand and not timed) with ``yaml.CSafeDumper``, ``sort_keys=False``;
* ``trainspec validate DIR``, ``trainspec compile DIR -o -`` (to /dev/null), ``trainspec compile DIR
  -o OUTDIR`` (a new directory every run), ``trainspec validate OUTDIR`` (at the size check's goal
  is set for: 1,000, or the largest size below it), ``trainspec check OUTDIR`` (the tree the same
  install just compiled), ``trainspec diff DIR NEWDIR`` (NEWDIR: the same files with one job's
  image changed; diff compiles both sides, without git).

Every command runs cold: ``TRAINSPEC_NO_CACHE=1``, no ``TRAINSPEC_CRDS_DIR`` (check uses the CRDs the
package ships). Wall time is the parent's clock around the child; peak RSS is the command's own, read
by a small wrapper that starts it (``bench/_shard_lib.run_measured``: GNU time, else a fresh
interpreter), since Linux bills a child the memory of the process that forked it. Medians of
``--runs`` rounds, of ``--large-runs`` (default 1) from 10,000 specs on: three rounds of everything at
30,000 would take hours on 2 cores. A command that fails is reported as such and the run goes on.
``--quick``: sizes 200,1000, one round.

Printed: the machine, the installs, one markdown table (command x shape x N) and the goals of
issue 26 with the figures that meet or miss them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from _common import ENV, ROOT, Runs, comma_names, generate_copies, generate_specs, machine, markdown_table
from _install import Install, current_install, install_kind, normal_install, with_dependencies
from _shard_lib import rss_method, run_measured

BASELINE = "cbff14b"
LARGE = 10_000  # sizes from this on run --large-runs rounds
CHECK_AT = 1_000  # check's goal is set on this many compiled specs
COMMANDS = ("validate", "compile-stdout", "compile-dir", "check", "diff")
SHAPES: dict[str, Callable[[Path, int], list[Path]]] = {"harness": generate_specs, "ddp-cpu": generate_copies}
#: Every step of a round, in order: floors (install-independent) and commands (once per install).
STEPS = ("load", "validate", "compile-stdout", "compile-dir", "dump", "validate-tree", "check", "diff")
FLOORS = ("load", "dump")
TITLES = {
    "load": "floor: C loader",
    "validate": "`trainspec validate DIR`",
    "compile-stdout": "`trainspec compile DIR -o -`",
    "compile-dir": "`trainspec compile DIR -o OUTDIR`",
    "dump": "floor: C load + C dump",
    "validate-tree": "`trainspec validate OUTDIR`",
    "check": "`trainspec check OUTDIR`",
    "diff": "`trainspec diff DIR NEWDIR`",
}
#: step -> (the step its ratio is over, what the table calls that)
RATIO_OF = {
    "validate": ("load", "C loader"),
    "compile-stdout": ("dump", "C load + C dump"),
    "compile-dir": ("dump", "C load + C dump"),
    "check": ("validate-tree", "validate OUTDIR"),
}
#: Exit codes that mean the command did its work: check may report findings, diff exits 1 on changes.
EXPECTED = {"check": (0, 1), "diff": (1,)}

# The floors, in a child of the working tree's interpreter. Reading the compiled documents for the
# dump is preparation, not floor: its time goes to the file named last and is taken off the wall time.
_FLOOR = r"""
import json, os, sys, time
import yaml
def files(root):
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            if name.endswith((".yaml", ".yml")) and not name.startswith("."):
                yield os.path.join(folder, name)
def load(path):
    with open(path, "rb") as f:
        return [d for d in yaml.load_all(f.read(), Loader=yaml.CSafeLoader) if d is not None]
mode, specs, tree, report = sys.argv[1:5]
start = time.perf_counter()
docs = [d for path in files(tree) for d in load(path)] if mode == "dump" else []
prep = time.perf_counter() - start
for path in files(specs):
    load(path)
if mode == "dump":
    yaml.dump_all(docs, sys.stdout, Dumper=yaml.CSafeDumper, sort_keys=False)
with open(report, "w") as f:
    json.dump({"prep": prep}, f)
"""


class Workload(NamedTuple):
    """One generated repository in its own folder; paths in commands are relative to ``root``."""

    shape: str
    size: int
    root: Path
    trees: dict[str, str]  # install label -> the tree it compiled last (check reads it)


def prepare(shape: str, size: int, root: Path) -> Workload:
    """The specs (``specs/``) and, for diff, ``new/``: the same files (hard links) but one job changed."""
    paths = SHAPES[shape](root / "specs", size)
    shutil.copytree(root / "specs", root / "new", copy_function=os.link)
    job = root / "new" / paths[-1].name  # the last file is a job in both shapes
    text = job.read_text()
    job.unlink()  # a new file, not a write through the link into specs/
    image = next(line for line in text.splitlines() if line.startswith("  image: "))
    job.write_text(text.replace(image, f"{image}-new", 1))
    return Workload(shape, size, root, {})


def _argv(step: str, install: Install, tree: str) -> list[str]:
    args = {
        "validate": ["validate", "specs"],
        "compile-stdout": ["compile", "specs", "-o", "-"],
        "compile-dir": ["compile", "specs", "-o", tree],
        "validate-tree": ["validate", tree],
        "check": ["check", tree],
        "diff": ["diff", "specs", "new"],
    }[step]
    return [*install.trainspec, *args]


def _tree(install: Install, work: Workload, env: dict[str, str], name: str) -> str | None:
    """The tree ``install`` compiled last, else a new one compiled now (untimed); None if that fails."""
    if install.label not in work.trees:
        got = run_measured([*install.trainspec, "compile", "specs", "-o", name], work.root, env)
        if got.returncode != 0:
            return None
        work.trees[install.label] = name
    return work.trees[install.label]


def _floor(step: str, work: Workload, mine: Install, env: dict[str, str], round_no: int, runs: Runs) -> None:
    """One floor, run by the working tree's interpreter; the dump floor dumps that install's tree."""
    tree = _tree(mine, work, env, f"tree-{round_no}-prep") if step == "dump" else "."
    argv = [str(mine.python), "-c", _FLOOR, step, "specs", tree or "no-tree", "floor.json"]
    got = run_measured(argv, work.root, env)
    if got.returncode == 0:  # the time spent reading the documents to dump is not floor
        got = got._replace(wall=got.wall - json.loads((work.root / "floor.json").read_text())["prep"])
    runs.add((step, work.shape, work.size, "floor"), got, what=f"{work.shape} {work.size:,}: {TITLES[step]}")


def run_round(
    work: Workload, steps: list[str], installs: list[Install], round_no: int, env: dict[str, str], runs: Runs
) -> None:
    """One round of ``steps`` on ``work``: each command once per install (A B, or B A on odd rounds),
    each floor once. Runs are keyed (step, shape, size, install label), "floor" for the floors."""
    order = installs if round_no % 2 == 0 else installs[::-1]
    mine = installs[-1]  # the working tree: its interpreter runs the floors, its tree is dumped
    for step in steps:
        if step in FLOORS:
            _floor(step, work, mine, env, round_no, runs)
            continue
        for install in order:
            slug = "baseline" if install is not mine else "after"
            key = (step, work.shape, work.size, install.label)
            tree: str | None = ""
            if step == "compile-dir":
                tree = f"tree-{slug}-{round_no}"
            elif step in ("validate-tree", "check"):
                tree = _tree(install, work, env, f"tree-{slug}-{round_no}-prep")
            if tree is None:
                runs.failed[key] = "no compiled tree to read"
                continue
            got = run_measured(_argv(step, install, tree), work.root, env)
            what = f"{work.shape} {work.size:,}: {TITLES[step]} ({install.label})"
            done = runs.add(key, got, EXPECTED.get(step, (0,)), what)
            if step == "compile-dir" and done:  # check reads the newest tree; the older one only takes disk
                old = work.trees.get(install.label)
                work.trees[install.label] = tree
                if old and old != tree:
                    shutil.rmtree(work.root / old)


def plan(commands: list[str], size: int, check_at: int) -> list[str]:
    """The steps of a round at ``size`` for the chosen commands, floors included where a ratio needs them."""
    wanted = set(commands)
    if "validate" in wanted:
        wanted.add("load")
    if wanted & {"compile-stdout", "compile-dir"}:
        wanted.add("dump")
    if "check" in wanted and size == check_at:
        wanted.add("validate-tree")
    return [step for step in STEPS if step in wanted]


def _ratio(runs: Runs, step: str, shape: str, size: int, label: str) -> float | None:
    if step not in RATIO_OF:
        return None
    over = RATIO_OF[step][0]
    top = runs.median((step, shape, size, label))
    bottom = runs.median((over, shape, size, "floor" if over in FLOORS else label))
    return top[0] / bottom[0] if top and bottom else None


def _x(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}x"


def table(runs: Runs, labels: list[str], shapes: list[str], sizes: list[int]) -> str:
    """Every measured step as a row (command x shape x N); the floors' figures in the last install's columns."""
    header = ["command", "shape", "N"]
    for label in labels:
        header += [f"{label} wall", f"{label} peak RSS"]
    if len(labels) > 1:
        header.append(f"{labels[-1]} / {labels[0]} wall")
    header += [f"{label} ratio" for label in labels] + ["ratio over"]
    rows = []
    for shape in shapes:
        for size in sizes:
            for step in STEPS:
                floor = step in FLOORS
                figures = {label: runs.median((step, shape, size, "floor" if floor else label)) for label in labels}
                failed = {label for label in labels if (step, shape, size, "floor" if floor else label) in runs.failed}
                if all(f is None for f in figures.values()) and not failed:
                    continue
                row = [TITLES[step], shape, f"{size:,}"]
                for label in labels:
                    got = figures[label]
                    if floor and label != labels[-1]:
                        row += ["", ""]
                    elif got:
                        row += [f"{got[0]:.2f} s", f"{got[1]:.1f} MB"]
                    else:
                        row += ["failed" if label in failed else "", ""]
                before, after = figures[labels[0]], figures[labels[-1]]
                if len(labels) > 1:
                    row.append(_x(after[0] / before[0]) if before and after and not floor else "")
                row += [_x(_ratio(runs, step, shape, size, label)) for label in labels]
                row.append(RATIO_OF[step][1] if step in RATIO_OF else "")
                rows.append(row)
    return markdown_table(header, rows, right=range(2, len(header) - 1))


def _at(sizes: list[int], wanted: tuple[int, ...]) -> list[int]:
    """The sizes of ``wanted`` that were measured, else the largest one measured."""
    return [n for n in wanted if n in sizes] or [max(sizes)]


def goals(runs: Runs, labels: list[str], shapes: list[str], sizes: list[int]) -> str:
    """Issue 26's goals, each with the figure of every install; met or missed by the working tree's."""
    rows: list[list[str]] = []

    def add(goal: str, shape: str, at: str, figures: list[float | None], limit: float) -> None:
        last = figures[-1]
        verdict = "n/a" if last is None else "met" if last <= limit else "missed"
        rows.append([goal, shape, at, *(_x(f) for f in figures), verdict])

    for shape in shapes:
        for size in _at(sizes, (1_000, 30_000)):
            figures = [_ratio(runs, "compile-stdout", shape, size, label) for label in labels]
            add("`compile -o -` <= 1.5x C load + C dump", shape, f"{size:,}", figures, 1.5)
    for shape in shapes:
        for size in _at(sizes, (10_000,)):
            figures = [_ratio(runs, "validate", shape, size, label) for label in labels]
            add("`validate` <= 3x C loader", shape, f"{size:,}", figures, 3.0)
    for shape in shapes:
        size = check_size(sizes)
        figures = [_ratio(runs, "check", shape, size, label) for label in labels]
        add("`check OUTDIR` <= 2x `validate OUTDIR`", shape, f"{size:,}", figures, 2.0)
    small, large = min(sizes), max(sizes)
    for step in COMMANDS if large > small else ():
        for shape in shapes:
            figures = []
            for label in labels:
                low, high = (runs.median((step, shape, n, label)) for n in (small, large))
                figures.append(high[1] / low[1] if low and high else None)
            if any(f is not None for f in figures):
                add(f"peak RSS of {TITLES[step]}, {large:,} / {small:,}", shape, "", figures, 2.0)
    header = ["goal (issue 26)", "shape", "N", *labels, f"result ({labels[-1]})"]
    return markdown_table(header, rows, right=range(2, len(header) - 1))


def rounds(args: argparse.Namespace, size: int) -> int:
    """Rounds at ``size``: ``--large-runs`` from 10,000 specs on, else ``--runs``."""
    return int(args.large_runs if size >= LARGE else args.runs)


def warm_up(installs: list[Install], env: dict[str, str]) -> None:
    """Untimed: each install's files and its interpreter's into the page cache before the first figure."""
    one = str(ROOT / "examples" / "ddp-cpu.yaml")
    for install in installs:
        for argv in ([*install.trainspec, "validate", one], [str(install.python), "-c", "import yaml"]):
            got = run_measured(argv, ROOT, env)
            if got.returncode != 0:  # an install that cannot do this is broken: say so now, not in an hour
                raise SystemExit(f"{install.label}: {' '.join(argv)} exited {got.returncode}: {got.error}")


def check_size(sizes: list[int]) -> int:
    """Where ``validate OUTDIR`` runs beside check: 1,000 specs, or the nearest size below (else the smallest)."""
    below = [n for n in sizes if n <= CHECK_AT]
    return max(below) if below else min(sizes)


def _installs(args: argparse.Namespace, workdir: Path) -> list[Install]:
    """The baseline (unless ``--no-baseline``) and the working tree, in that order."""
    if args.current:
        after = current_install()._replace(label="working tree")
    else:
        after = with_dependencies(normal_install(workdir / "after", label="working tree"))
    if args.no_baseline:
        return [after]
    before = with_dependencies(normal_install(workdir / "before", args.baseline, label=f"baseline {args.baseline}"))
    return [before, after]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,30000", help="comma-separated numbers of specs")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated: {', '.join(SHAPES)}")
    parser.add_argument(
        "--commands",
        default=",".join(COMMANDS),
        help=f"comma-separated: {', '.join(COMMANDS)} (compile: both compiles)",
    )
    parser.add_argument("--runs", type=int, default=3, help="rounds at sizes below 10,000 (medians are reported)")
    parser.add_argument("--large-runs", type=int, default=1, help="rounds at 10,000 specs and more")
    parser.add_argument("--baseline", default=BASELINE, metavar="REV", help="the commit to compare with")
    parser.add_argument("--no-baseline", action="store_true", help="time the working tree alone")
    parser.add_argument("--current", action="store_true", help="this interpreter's trainspec as the working tree")
    parser.add_argument("--workdir", type=Path, help="where the installs and repositories go (default: temp)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: sizes 200,1000, one round")
    return parser


def main() -> None:
    args = _parser().parse_args()
    if args.quick:
        args.sizes, args.runs, args.large_runs = "200,1000", 1, 1
    sizes = sorted({int(n) for n in args.sizes.split(",") if n})
    shapes = comma_names(args.shapes, tuple(SHAPES), {})
    commands = comma_names(args.commands, COMMANDS, {"compile": ("compile-stdout", "compile-dir")})
    started = time.perf_counter()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="trainspec-scale-", dir=args.workdir) as tmp:
        workdir = Path(tmp)
        installs = _installs(args, workdir)
        labels = [install.label for install in installs]
        env = {**ENV, "TRAINSPEC_NO_CACHE": "1", "TRAINSPEC_CRDS_DIR": "", "XDG_CACHE_HOME": str(workdir / "cache")}
        print(machine())
        print(f"Python {sys.version.split()[0]} ({sys.implementation.name}); peak RSS: {rss_method()}")
        for install in installs:
            print(f"- {install.label}: {install_kind(install.python)} install; {install.note}")
        warm_up(installs, env)
        runs = Runs()
        for size in sizes:
            for shape in shapes:
                work = prepare(shape, size, workdir / f"{shape}-{size}")
                steps = plan(commands, size, check_size(sizes))
                for round_no in range(rounds(args, size)):
                    run_round(work, steps, installs, round_no, env, runs)
                shutil.rmtree(work.root)
        counts = ", ".join(f"{rounds(args, n)} at {n:,}" for n in sizes)
        print(
            f"\nshapes: harness = bench/_common.generate_specs (N jobs + 10 runtimes); ddp-cpu = N renamed copies"
            f" of examples/ddp-cpu.yaml. Rounds: {counts} (medians; --large-runs from {LARGE:,} specs on: more"
            f" rounds of everything there take hours on 2 cores); installs alternate A B / B A; every"
            f" command cold (TRAINSPEC_NO_CACHE=1). Ratios: the same install's command over the floor named in"
            f" `ratio over`.\n"
        )
        print(table(runs, labels, shapes, sizes))
        print()
        print(goals(runs, labels, shapes, sizes))
        for (step, shape, size, label), why in runs.failed.items():
            print(f"failed: {TITLES[step]}, {shape}, {size:,}, {label}: {why}")
        print(
            f"\nload average at the end: {machine().rsplit('load average ', 1)[1]}; took {time.perf_counter() - started:.0f} s"
        )


if __name__ == "__main__":
    main()
