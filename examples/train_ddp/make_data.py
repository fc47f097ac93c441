"""Regenerate the example dataset (already committed under data/; deterministic).

Records are ``{"id": k, "x": [x1, x2], "y": y}`` with ``y = 3*x1 - 2*x2 + 0.5`` plus a little
noise, split over two files of different lengths.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SIZES = (160, 140)


def main() -> None:
    rng = random.Random(7)  # noqa: S311 (synthetic sample data, seeded so every run writes the same)
    out = Path(__file__).parent / "data"
    out.mkdir(exist_ok=True)
    k = 0
    for part, size in enumerate(SIZES):
        lines = []
        for _ in range(size):
            x1, x2 = round(rng.uniform(-1, 1), 4), round(rng.uniform(-1, 1), 4)
            y = round(3 * x1 - 2 * x2 + 0.5 + rng.gauss(0, 0.05), 4)
            lines.append(json.dumps({"id": k, "x": [x1, x2], "y": y}))
            k += 1
        (out / f"part-{part:05d}.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
