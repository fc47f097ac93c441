"""The pipeline's prep step: write the training records (standard library only, deterministic).

Records are ``{"id": k, "x": [x1, x2], "y": y}`` with ``y = 3*x1 - 2*x2 + 0.5`` plus a little
noise, in two JSONL files under ``--out`` (the step's output ``dataset``).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rng = random.Random(7)  # noqa: S311 (synthetic sample data, seeded so every run writes the same)
    args.out.mkdir(parents=True, exist_ok=True)
    half = args.records // 2
    for part, (start, stop) in enumerate(((0, half), (half, args.records))):
        with (args.out / f"part-{part:05d}.jsonl").open("w", encoding="utf-8") as f:
            for k in range(start, stop):
                x = [round(rng.uniform(-1, 1), 4), round(rng.uniform(-1, 1), 4)]
                y = round(3 * x[0] - 2 * x[1] + 0.5 + rng.gauss(0, 0.01), 4)
                f.write(json.dumps({"id": k, "x": x, "y": y}) + "\n")
    print(f"prep: {args.records} records in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
