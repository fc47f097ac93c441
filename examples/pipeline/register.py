"""The pipeline's register step: copy the newest complete checkpoint to the model registry.

Here the registry is a directory (``--to``, the step's output ``model``); a real one would be an
MLflow model registry or an object store path.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--to", type=Path, required=True)
    args = parser.parse_args()
    complete = sorted(p for p in args.checkpoint.glob("step-*") if (p / "COMPLETE").exists())
    if not complete:
        raise SystemExit(f"register: no complete checkpoint in {args.checkpoint}")
    shutil.copytree(complete[-1], args.to / complete[-1].name, dirs_exist_ok=True)
    print(f"register: {complete[-1].name} -> {args.to}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
