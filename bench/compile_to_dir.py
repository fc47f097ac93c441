"""``trainspec compile DIR -o OUT`` from the command line, cold, at 1,000 and 10,000 specs, and the
durability calls it makes: one ``syncfs`` per output tree, not an ``fsync`` per file.

    python bench/compile_to_dir.py [--jobs 1000,10000] [--runs 3] [--current]

For each size: the generated specs (N jobs over 10 runtimes, one spec per file) are compiled
into a new directory (every run a fresh OUT) and again over the tree already there (the whole
tree rebuilt and swapped in), interleaved with ``trainspec validate DIR`` on the same files;
medians of ``--runs`` rounds. Then one more compile into a new directory runs under
``strace -f -c`` (when strace is installed) to count fsync, fdatasync, syncfs and sync calls.
Runs against a normal install built for the run (as bench/startup.py builds it), or with
``--current`` the running interpreter's trainspec.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _common import ENV, generate_specs, machine
from _install import current_install, normal_install

SYNC_CALLS = ("fsync", "fdatasync", "syncfs", "sync", "sync_file_range", "msync")


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, env=ENV, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return took


def sync_calls(command: list[str], cwd: Path, work: Path) -> dict[str, int] | None:
    """Durability system calls of ``command`` and its children (strace -f -c), None without strace."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    report = work / "strace.txt"
    subprocess.run(
        [strace, "-f", "-c", "-o", str(report), "-e", "trace=" + ",".join(SYNC_CALLS), *command],
        cwd=cwd,
        capture_output=True,
        env=ENV,
        check=True,
    )
    counts = dict.fromkeys(SYNC_CALLS, 0)
    for line in report.read_text().splitlines():
        words = line.split()
        if words and words[-1] in counts:  # % time, seconds, usecs/call, calls, [errors,] syscall
            counts[words[-1]] = int(words[3])
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", default="1000,10000", help="comma-separated sizes (job specs)")
    parser.add_argument("--runs", type=int, default=3, help="timed rounds (medians are reported)")
    parser.add_argument("--current", action="store_true", help="use this interpreter's trainspec, not a new install")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        install = current_install() if args.current else normal_install(work / "install")
        trainspec = install.trainspec
        print(machine())
        print(f"{install.label} install: {install.note}")
        print(
            f"{'specs':>7} {'files out':>9} {'new dir':>9} {'ms/spec':>8} {'over tree':>9} {'validate':>9} "
            f"{'compile/validate':>16}  durability calls (strace -f -c)"
        )
        for jobs in (int(j) for j in args.jobs.split(",")):
            specs = work / f"specs-{jobs}"
            generate_specs(specs, jobs)
            count = len(list(specs.iterdir()))
            fresh, over, valid = [], [], []
            timed([*trainspec, "compile", str(specs), "-o", str(work / "warm")], work)  # bytecode, page cache
            for i in range(args.runs):
                fresh.append(timed([*trainspec, "compile", str(specs), "-o", str(work / f"new-{jobs}-{i}")], work))
                over.append(timed([*trainspec, "compile", str(specs), "-o", str(work / "warm")], work))
                valid.append(timed([*trainspec, "validate", str(specs)], work))
            files = sum(len(names) for _, _, names in os.walk(work / "warm"))
            calls = sync_calls([*trainspec, "compile", str(specs), "-o", str(work / f"strace-{jobs}")], work, work)
            shown = "strace not installed" if calls is None else ", ".join(f"{k} {v}" for k, v in calls.items() if v)
            new, again, check = (statistics.median(x) for x in (fresh, over, valid))
            print(
                f"{count:7d} {files:9d} {new:8.2f}s {new * 1000 / count:8.3f} {again:8.2f}s {check:8.2f}s "
                f"{new / check:15.2f}x  {shown or 'none'}"
            )
            for name in os.listdir(work):  # keep the disk use of the next size down
                if name.startswith(("new-", "strace-", "warm")):
                    shutil.rmtree(work / name)
        print(f"medians of {args.runs} rounds; load average at the end: {machine().rsplit('load average ', 1)[1]}")


if __name__ == "__main__":
    main()
