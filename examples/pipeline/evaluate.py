"""The pipeline's evaluate step: score the newest checkpoint on the dataset.

The score is ``1 / (1 + mean squared error)`` (1.0 is perfect), written as text to ``--score``
(the step's output ``score``, which the register step's ``when`` compares).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--checkpoint", type=Path, required=True, help="the train step's checkpoint directory")
    parser.add_argument("--data", type=Path, required=True, help="the prep step's dataset directory")
    parser.add_argument("--score", type=Path, required=True)
    args = parser.parse_args()
    complete = sorted(p for p in args.checkpoint.glob("step-*") if (p / "COMPLETE").exists())
    if not complete:
        raise SystemExit(f"evaluate: no complete checkpoint in {args.checkpoint}")
    state = json.loads((complete[-1] / "state.json").read_text(encoding="utf-8"))
    w, b = state["w"], state["b"]
    errors = []
    for path in sorted(args.data.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            guess = sum(wi * xi for wi, xi in zip(w, record["x"], strict=True)) + b
            errors.append((guess - record["y"]) ** 2)
    mse = sum(errors) / len(errors)
    score = 1 / (1 + mse)
    args.score.parent.mkdir(parents=True, exist_ok=True)
    args.score.write_text(f"{score:.4f}\n", encoding="utf-8")
    print(f"evaluate: {complete[-1].name}, mse {mse:.4f}, score {score:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
