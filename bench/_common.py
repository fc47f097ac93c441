"""Helpers shared by the benchmarks: timing commands side by side and generating specs."""

from __future__ import annotations

import gc
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from _shard_lib import Result

ROOT = Path(__file__).resolve().parents[1]


#: Users run an installed package whose bytecode is cached; an environment that forbids writing
#: bytecode would make every run recompile trainspec from source and measure the wrong thing.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def interleaved_walls(
    commands: dict[str, list[str]], runs: int, cwd: Path = ROOT, warmup: int = 2
) -> dict[str, list[float]]:
    """Wall seconds of each command over ``runs`` rounds, side by side.

    Every round runs each command once, in an order rotated from round to round, so load from
    elsewhere on the machine falls on all of them alike; ``warmup`` untimed rounds first (bytecode
    caches written, files in the page cache).
    """
    names = list(commands)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_no in range(warmup + runs):
        shift = round_no % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            subprocess.run(
                commands[name], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV
            )
            if round_no >= warmup:
                times[name].append(time.perf_counter() - start)
    return times


def machine() -> str:
    """Cores, kernel, Python and the load average now: the line every report starts with."""
    uname = os.uname()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} cores, {uname.sysname} {uname.release} {uname.machine}, "
        f"Python {sys.version.split()[0]}, load average {load}"
    )


def trainspec_command(*args: str) -> list[str]:
    """The installed console script next to this interpreter (what users run)."""
    script = Path(sys.executable).parent / "trainspec"
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "trainspec", *args]


RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata:
  name: runtime-{r}
spec:
  framework: {framework}
  image: registry.example.com/train/base:{r}.0
  maxNodes: 64
  resourcesPerNode: {{gpu: 8, cpu: 96, memory: 1600Gi}}
  sharedMemory: 64Gi
  network:
    env: {{NCCL_IB_HCA: mlx5}}
    resources: {{rdma/ib: 8}}
  restarts: {{max: 3}}
  scheduling:
    nodeSelector: {{pool: gpu-{r}}}
    tolerations:
      - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}
  dataSharding: {{image: ghcr.io/trainspec/trainspec:0.1.0}}
"""

JOB = """\
apiVersion: trainspec.dev/v1alpha1
kind: TrainingJob
metadata:
  name: job-{i:04d}
  namespace: team-{team}
  labels: {{team: team-{team}, cost-center: cc-{team}}}
spec:
  runtime: runtime-{r}
  image: registry.example.com/train/sft:{i}
  command: [torchrun, -m, sft.train]
  args: [--lr, "3e-4", --epochs, "{epochs}"]
  env: {{WANDB_PROJECT: sft-{i}, LOG_LEVEL: info}}
  secretEnv:
    HF_TOKEN: {{secret: hf-token, key: token}}
  nodes: {nodes}
  queue: team-{team}
  priority: high
  maxRunTime: {hours}h
  data:
    source: s3://datasets/sft/v{i}/
    format: jsonl
  checkpoint:
    size: auto
    model: {{parameters: {params}B, dtype: bf16, optimizer: adamw}}
    keep: 3
    storageClass: lustre
"""

FRAMEWORKS = ("torch", "deepspeed", "jax", "torch", "mpi")


def generate_specs(directory: Path, jobs: int, runtimes: int = 10) -> list[Path]:
    """``runtimes`` runtime files and ``jobs`` job files, one spec per file."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in range(runtimes):
        path = directory / f"runtime-{r}.yaml"
        path.write_text(RUNTIME.format(r=r, framework=FRAMEWORKS[r % len(FRAMEWORKS)]))
        paths.append(path)
    for i in range(jobs):
        path = directory / f"job-{i:04d}.yaml"
        path.write_text(
            JOB.format(
                i=i,
                r=i % runtimes,
                team=i % 7,
                epochs=1 + i % 5,
                nodes=1 + i % 8,
                hours=1 + i % 72,
                params=(7, 13, 70)[i % 3],
            )
        )
        paths.append(path)
    return paths


def generate_copies(directory: Path, count: int, source: Path = ROOT / "examples" / "ddp-cpu.yaml") -> list[Path]:
    """``count`` copies of the spec ``source``, one per file, each with its own ``metadata.name``.

    The shape of a repository of many small real jobs; ``examples/ddp-cpu.yaml`` runs on a built-in
    runtime, so no runtime file is needed. Only the first ``name:`` line (metadata's) is renamed.
    """
    text = source.read_text()
    name = next(line for line in text.splitlines() if line.startswith("  name: ")).split(": ", 1)[1]
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    width = len(str(max(count - 1, 0)))
    for i in range(count):
        path = directory / f"{name}-{i:0{width}d}.yaml"
        path.write_text(text.replace(f"  name: {name}\n", f"  name: {name}-{i:0{width}d}\n", 1))
        paths.append(path)
    return paths


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Collection[int] = ()) -> str:
    """A markdown table; the columns at the indexes ``right`` are right-aligned (figures)."""
    align = ["---:" if i in right else "---" for i in range(len(header))]
    lines = [header, align, *rows]
    return "\n".join(f"| {' | '.join(cells)} |" for cells in lines)


class Runs:
    """Repeated runs of commands by key: the figures of those that did their work, and why the others
    failed (a long benchmark reports a failure and goes on). Each run is also printed to stderr."""

    def __init__(self) -> None:
        self.ok: dict[tuple[Any, ...], list[Result]] = {}
        self.failed: dict[tuple[Any, ...], str] = {}

    def add(self, key: tuple[Any, ...], got: Result, expected: Collection[int] = (0,), what: str = "") -> bool:
        """Keep ``got`` under ``key``; False (the reason kept) when it exited otherwise than ``expected``."""
        what = what or str(key)
        if got.returncode not in expected:
            self.failed[key] = f"exit {got.returncode}: {got.error}"
            print(f"{what}: FAILED, {self.failed[key]}", file=sys.stderr, flush=True)
            return False
        self.ok.setdefault(key, []).append(got)
        print(f"{what}: {got.wall:.2f} s, {got.rss_kib / 1024:.1f} MB", file=sys.stderr, flush=True)
        return True

    def median(self, key: tuple[Any, ...]) -> tuple[float, float] | None:
        """(median wall seconds, median peak RSS in MB) of ``key``, None when nothing was measured."""
        runs = self.ok.get(key)
        if not runs:
            return None
        return statistics.median(m.wall for m in runs), statistics.median(m.rss_kib for m in runs) / 1024


def comma_names(value: str, known: Sequence[str], alias: dict[str, Sequence[str]] | None = None) -> list[str]:
    """The names of a comma-separated option, each one of ``known`` (or an alias for several), in
    ``known``'s order; an unknown name ends the program with the list of known ones."""
    names = set()
    for name in filter(None, value.split(",")):
        for one in (alias or {}).get(name, (name,)):
            if one not in known:
                raise SystemExit(f"unknown name {one!r}: choose from {', '.join(known)}")
            names.add(one)
    return [name for name in known if name in names]


def interleaved(floor: Callable[[], object], measured: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median seconds of ``floor()`` and ``measured()``, run alternately so both see the same load.

    The heap is collected before every run so each starts like a fresh process would.
    """
    floors: list[float] = []
    runs: list[float] = []
    for _ in range(repeat):
        for timings, work in ((floors, floor), (runs, measured)):
            gc.collect()
            start = time.perf_counter()
            work()
            timings.append(time.perf_counter() - start)
    return statistics.median(floors), statistics.median(runs)


def sizes_main(
    doc: str | None,
    script: str,
    child: Callable[[int, int], dict[str, Any]],
    header: str,
    row: Callable[[dict[str, Any]], str],
    floor: str,
    goal: float,
    jobs: str = "1000,10000",
) -> None:
    """The command line of a benchmark measured at several sizes, each in a fresh process.

    ``--jobs 1000,10000`` (default: ``jobs``) runs ``script --child N`` per size (so one size's heap and collector state
    cannot bill the next); ``child(jobs, repeat)`` is what such a process measures, returned as a
    dict with ``specs``, ``floor`` and ``took`` (seconds); ``row`` formats one size under
    ``header``; the summary says whether every size is within ``goal`` x ``floor`` and how the
    per-spec cost grows.
    """
    import argparse
    import json

    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", default=jobs, help="comma-separated sizes (job specs per run)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each side; medians are reported")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.repeat)))
        return
    print(machine())
    print(header)
    rows = []
    for size in (int(j) for j in args.jobs.split(",")):
        out = subprocess.run(
            [sys.executable, script, "--child", str(size), "--repeat", str(args.repeat)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=ENV,
            check=True,
        ).stdout
        result = json.loads(out.splitlines()[-1])
        rows.append(result)
        print(row(result))
    worst = max(r["took"] / r["floor"] for r in rows)
    print(
        f"medians of {args.repeat} interleaved runs; goal <= {goal:g}x {floor} at every size: "
        f"{'met' if worst <= goal else 'missed'} (worst {worst:.2f}x)"
    )
    if len(rows) > 1:
        per = [r["took"] / r["specs"] for r in rows]
        print(f"per-spec cost, largest size / smallest: {per[-1] / per[0]:.2f}x (1.00x is linear)")
    print(f"load average at the end: {machine().rsplit('load average ', 1)[1]}")
