"""Start-up: median wall time of ``trainspec validate <one spec>`` (and a cold compile to stdout)
against ``python -c pass``, side by side in one run.

    python bench/startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import sys

from _common import median_wall, trainspec_command

SPEC = "examples/ddp-cpu.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    bare = median_wall([sys.executable, "-c", "pass"], args.runs)
    rows = [
        ("python -c pass", bare),
        (f"trainspec validate {SPEC}", median_wall(trainspec_command("validate", SPEC), args.runs)),
        (f"trainspec compile {SPEC} -o -", median_wall(trainspec_command("compile", SPEC, "-o", "-"), args.runs)),
    ]
    print(f"{'command':48} {'median':>9} {'ratio':>7}")
    for name, seconds in rows:
        print(f"{name:48} {seconds * 1000:7.0f}ms {seconds / bare:6.1f}x")


if __name__ == "__main__":
    main()
