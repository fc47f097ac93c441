"""Helpers for the ``run --local`` tests: write specs, run the CLI as a user would, read its output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "train_ddp"
#: A bound on how long one local run may take before the test gives up (never asserted on).
RUN_TIMEOUT = 300

RUNTIME = """\
apiVersion: trainspec.dev/v1alpha1
kind: Runtime
metadata: {{name: {name}}}
spec:
  framework: {framework}
  image: registry.example.com/train:1
  gang: none
  env: {{RUNTIME_LEVEL: from-runtime, OVERRIDDEN: runtime}}
  dataSharding: {{image: registry.example.com/trainspec:0.1.0, size: 1Gi}}
"""

_PREFIX = re.compile(r"^\[([^\]]+)\] (.*)$")


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any TRAINSPEC_* (as a fresh shell), python first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAINSPEC_")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def trainspec(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``trainspec ARGS`` in a separate process, real exit status and streams."""
    return subprocess.run(
        [sys.executable, "-m", "trainspec", *args],
        cwd=cwd,
        check=False,
        capture_output=True,
        text=True,
        env=env or clean_env(),
        timeout=RUN_TIMEOUT,
    )


def by_prefix(text: str, *, stage: bool = False) -> dict[str, list[str]]:
    """The relayed output lines of each node (``[node 0] x`` -> {"node 0": ["x"]}); the stage's too with ``stage``."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        m = _PREFIX.match(line)
        if m and (stage or m.group(1) != "dataset-initializer"):
            out.setdefault(m.group(1), []).append(m.group(2))
    return out


def env_lines(lines: list[str]) -> dict[str, str]:
    """``NAME=value`` lines (what the printenv command of a spec prints) as a mapping."""
    return dict(line.split("=", 1) for line in lines if "=" in line)


PRINTENV = ["python", "-c", "import os\nfor k, v in sorted(os.environ.items()): print(f'{k}={v}')"]
