"""This machine's GPUs, and which of them each local node sees (``CUDA_VISIBLE_DEVICES``).

In a cluster the device plugin gives each pod its own GPUs, and a pod that asks for none sees
none. Locally node ``i`` of a job with ``g`` GPUs per node gets devices ``i*g .. i*g+g-1`` of
this machine; a job without GPUs gets ``CUDA_VISIBLE_DEVICES=""`` when the machine has some.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence

VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
_SMI_LINE = re.compile(r"^GPU (\d+):")


def parse_smi(text: str) -> list[str]:
    """GPU indices from ``nvidia-smi -L`` output (``GPU 0: NVIDIA H100 (UUID: GPU-...)`` lines)."""
    return [m.group(1) for line in text.splitlines() if (m := _SMI_LINE.match(line.strip()))]


def parse_visible(value: str) -> list[str]:
    """The devices a ``CUDA_VISIBLE_DEVICES`` value names (indices or UUIDs); empty or -1: none."""
    tokens = [t.strip() for t in value.split(",") if t.strip()]
    # CUDA stops at the first invalid entry; a negative index hides every device after it.
    out: list[str] = []
    for token in tokens:
        if token.startswith("-"):
            break
        out.append(token)
    return out


def detect(
    environ: Mapping[str, str],
    run: Callable[..., subprocess.CompletedProcess] = subprocess.run,
    which: Callable[[str], str | None] = shutil.which,
) -> list[str]:
    """The GPUs this process may use: ``CUDA_VISIBLE_DEVICES`` if set, else ``nvidia-smi -L``, else none."""
    if VISIBLE_DEVICES in environ:
        return parse_visible(environ[VISIBLE_DEVICES])
    smi = which("nvidia-smi")
    if smi is None:
        return []
    try:
        done = run([smi, "-L"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_smi(done.stdout) if done.returncode == 0 else []


def slices(devices: Sequence[str], nodes: int, per_node: int) -> list[str] | None:
    """``CUDA_VISIBLE_DEVICES`` for each node, or None when the machine has too few GPUs.

    A job without GPUs sees none (an empty value) when the machine has some, and is left alone
    (no variable set: an empty list) when it has none.
    """
    if per_node <= 0:
        return [""] * nodes if devices else []
    if len(devices) < nodes * per_node:
        return None
    return [",".join(devices[i * per_node : (i + 1) * per_node]) for i in range(nodes)]
