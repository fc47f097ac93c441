"""Helpers of the sharding benchmarks (``bench/shard.py``, ``bench/shard_readers.py``).

Deterministic JSONL generation, running one command with its wall time and peak RSS, the
page-cache preparation done before every measured run, and a description of the machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
TIME = "/usr/bin/time"
DROP_CACHES = "/proc/sys/vm/drop_caches"
_UNITS = {"": 1, "B": 1, "K": KIB, "M": MIB, "G": GIB, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``"64M"``, ``"1G"``, ``"1.5GiB"`` or a byte count -> bytes (binary units)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not match:
        raise ValueError(f"not a size: {text!r} (examples: 64M, 1G, 4G)")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def size_label(size: int) -> str:
    """1073741824 -> ``"1 GiB"``; sizes that are not whole MiB get two decimals."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if size >= unit:
            value = size / unit
            return f"{value:.0f} {name}" if value == int(value) else f"{value:.2f} {name}"
    return f"{size} B"


# A fixed vocabulary (no random module: the same bytes on every Python version).
_WORDS = (
    "t",
    "h",
    "e",
    "o",
    "f",
    "a",
    "n",
    "d",
    "t",
    "o",
    "i",
    "n",
    "i",
    "s",
    "w",
    "a",
    "s",
    "f",
    "o",
    "r",
    "o",
    "n",
    "t",
    "h",
    "a",
    "t",
    "w",
    "i",
    "t",
    "h",
    "a",
    "s",
    "b",
    "y",
    "a",
    "t",
    "f",
    "r",
    "o",
    "m",
    "h",
    "i",
    "s",
    "h",
    "e",
    "r",
    "a",
    "n",
    "w",
    "h",
    "i",
    "c",
    "h",
    "o",
    "r",
    "b",
    "e",
    "a",
    "r",
    "e",
    "t",
    "h",
    "i",
    "s",
    "m",
    "o",
    "d",
    "e",
    "l",
    "d",
    "a",
    "t",
    "a",
    "t",
    "r",
    "a",
    "i",
    "n",
    "i",
    "n",
    "g",
    "l",
    "o",
    "s",
    "s",
    "s",
    "t",
    "e",
    "p",
    "b",
    "a",
    "t",
    "c",
    "h",
    "t",
    "o",
    "k",
    "e",
    "n",
    "g",
    "r",
    "a",
    "d",
    "i",
    "e",
    "n",
    "t",
    "l",
    "a",
    "y",
    "e",
    "r",
    "a",
    "t",
    "t",
    "e",
    "n",
    "t",
    "i",
    "o",
    "n",
    "e",
    "p",
    "o",
    "c",
    "h",
    "s",
    "h",
    "a",
    "r",
    "d",
    "r",
    "a",
    "n",
    "k",
    "n",
    "o",
    "d",
    "e",
    "l",
    "e",
    "a",
    "r",
    "n",
    "i",
    "n",
    "g",
    "r",
    "a",
    "t",
    "e",
    "o",
    "p",
    "t",
    "i",
    "m",
    "i",
    "z",
    "e",
    "r",
    "c",
    "h",
    "e",
    "c",
    "k",
    "p",
    "o",
    "i",
    "n",
    "t",
    "d",
    "a",
    "t",
    "a",
    "s",
    "e",
    "t",
    "r",
    "e",
    "c",
    "o",
    "r",
    "d",
    "s",
    "a",
    "m",
    "p",
    "l",
    "e",
    "s",
    "e",
    "q",
    "u",
    "e",
    "n",
    "c",
    "e",
    "l",
    "e",
    "n",
    "g",
    "t",
    "h",
    "v",
    "o",
    "c",
    "a",
    "b",
    "u",
    "l",
    "a",
    "r",
    "y",
    "w",
    "e",
    "i",
    "g",
    "h",
    "t",
    "b",
    "i",
    "a",
    "s",
    "a",
    "c",
    "t",
    "i",
    "v",
    "a",
    "t",
    "i",
    "o",
    "n",
    "n",
    "o",
    "r",
    "m",
    "d",
    "r",
    "o",
    "p",
    "o",
    "u",
    "t",
    "e",
    "m",
    "b",
    "e",
    "d",
    "d",
    "i",
    "n",
    "g",
    "t",
    "r",
    "a",
    "n",
    "s",
    "f",
    "o",
    "r",
    "m",
    "e",
    "r",
    "e",
    "n",
    "c",
    "o",
    "d",
    "e",
    "r",
    "d",
    "e",
    "c",
    "o",
    "d",
    "e",
    "r",
    "c",
    "l",
    "u",
    "s",
    "t",
    "e",
    "r",
    "s",
    "t",
    "o",
    "r",
    "a",
    "g",
    "e",
    "n",
    "e",
    "t",
    "w",
    "o",
    "r",
    "k",
    "q",
    "u",
    "a",
    "n",
    "t",
    "u",
    "m",
    "r",
    "i",
    "v",
    "e",
    "r",
    "m",
    "o",
    "u",
    "n",
    "t",
    "a",
    "i",
    "n",
    "h",
    "a",
    "r",
    "b",
    "o",
    "u",
    "r",
    "v",
    "i",
    "l",
    "l",
    "a",
    "g",
    "e",
    "m",
    "a",
    "r",
    "k",
    "e",
    "t",
    "l",
    "a",
    "n",
    "g",
    "u",
    "a",
    "g",
    "e",
    "h",
    "i",
    "s",
    "t",
    "o",
    "r",
    "y",
    "s",
    "c",
    "i",
    "e",
    "n",
    "c",
    "e",
    "m",
    "u",
    "s",
    "i",
    "c",
    "g",
    "a",
    "r",
    "d",
    "e",
    "n",
)
#: Titles carry the JSON escapes, whole (a slice of text could cut one in half).
_TITLES = (
    r"caf\u00e9 notes",
    r"a \"quoted\" title",
    r"line\nbreak",
    r"tab\tsep",
    "plain title",
    r"na\u00efve \u65e5\u672c",
    r"path C:\\data",
)


def _corpus(length: int) -> str:
    """``length`` characters of words and spaces, a pure function of ``length``."""
    parts, total, i = [], 0, 0
    while total < length:
        word = _WORDS[(i * 7919 + (i >> 3) * 104729) % len(_WORDS)]
        parts.append(word)
        total += len(word) + 1
        i += 1
    return " ".join(parts)[:length]


def generate_jsonl(path: Path, size: int) -> int:
    """Write ``size`` bytes (up to the end of the last record) of JSON lines (objects of 200-2000 bytes); returns the line count.

    The content is a pure function of ``size``: records of varied length (a multiplicative hash
    of the record number picks each length, uniform over 200-2000 bytes), varied fields and
    string escapes, so line lengths and newline density look like a real corpus.
    """
    corpus = _corpus(1 << 20)
    limit = len(corpus) - 2100
    langs = ("en", "de", "fr", "ja", "es", "pt", "zh")
    written = lines = 0
    with open(path, "wb") as fh:
        while written < size:
            rows = []
            for i in range(lines, lines + 8192):
                h = (i * 2654435761) & 0xFFFFFFFF
                head = (
                    f'{{"id": {i}, "source": "crawl-{h % 97:02d}/part-{h % 4099:05d}", '
                    f'"lang": "{langs[h % 7]}", "score": {h / 4294967296:.6f}, "tokens": {h % 1847 + 48}, '
                    f'"tags": ["t{h % 13}", "t{h % 29}"], "title": "{_TITLES[(h >> 8) % 7]}", "text": "'
                )
                want = 200 + h % 1801 - len(head) - 3  # the record's length, newline included
                start = (i * 40503) % limit
                text = corpus[start : start + want]
                rows.append(f'{head}{text}"}}\n')
            chunk = "".join(rows).encode()
            if written + len(chunk) > size:  # stop at the first record end at or past ``size``
                chunk = chunk[: chunk.index(b"\n", max(0, size - written - 1)) + 1]
            fh.write(chunk)
            written += len(chunk)
            lines += chunk.count(b"\n")
    return lines


class Result(NamedTuple):
    """One run of one command."""

    wall: float  # seconds
    cpu: float  # user + system seconds of the command and its children (and of the small wrapper)
    rss_kib: int  # peak RSS of the command (and of the children it waited for)
    returncode: int
    error: str  # last line of stderr when the command failed, else ""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:160] if lines else ""


#: Without GNU time: a fresh interpreter runs the command and reports RUSAGE_CHILDREN (its only
#: child, so the maximum over children is that command's peak; floored at the wrapper's ~10 MB).
_RUSAGE_WRAPPER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[2:]).returncode\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(code)"
)


def rss_method() -> str:
    """How peak RSS is measured here (for the report)."""
    if os.access(TIME, os.X_OK):
        return f"`{TIME} -f %M` around each command"
    return "getrusage(RUSAGE_CHILDREN) in a fresh wrapper interpreter around each command (floor ~10 MB)"


def run_measured(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Result:
    """Run ``cmd`` (stdout discarded, stderr kept): wall time around it, CPU time, peak RSS.

    Linux bills a child's pre-exec memory (the forking parent's pages, with vfork) to the
    child's peak RSS, so the command is started by a small wrapper (GNU time, else a fresh
    interpreter) that reads the peak of its one child; the bench's own memory never counts.
    CPU time comes from ``os.wait4`` on the wrapper (the command's time is in it).
    """
    with tempfile.TemporaryFile("w+") as err, tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        if os.access(TIME, os.X_OK):
            argv = [TIME, "-q", "-f", "%M", "-o", rss.name, *cmd]
        else:
            argv = [sys.executable, "-c", _RUSAGE_WRAPPER, rss.name, *cmd]
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        error = "" if code == 0 else (_last_line(err.read()) or f"exit status {code}")
        figures = rss.read().split()
        peak = int(figures[-1]) if figures and figures[-1].isdigit() else 0
        return Result(wall, usage.ru_utime + usage.ru_stime, peak, code, error)


def remove(path: Path) -> None:
    """Delete a previous output directory (or file), if any."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def can_drop_caches() -> str | None:
    """``None`` when the page cache can be dropped here, else why not."""
    try:
        with open(DROP_CACHES, "w") as fh:
            fh.write("1")
    except OSError as exc:
        return f"cannot write {DROP_CACHES}: {exc.strerror or exc}"
    return None


def prepare_cache(data: Path, cold: bool) -> None:
    """Flush dirty pages (a previous run's writeback is not billed to the next), then either
    read ``data`` once (warm: ``cat FILE > /dev/null``) or drop the page cache (cold)."""
    os.sync()
    if cold:
        with open(DROP_CACHES, "w") as fh:
            fh.write("3")
    else:
        subprocess.run(["cat", str(data)], stdout=subprocess.DEVNULL, check=True)


def check_disk(directory: Path, needed: int) -> None:
    """Refuse (exit with a message) when ``directory``'s filesystem has less than ``needed`` free."""
    free = shutil.disk_usage(directory).free
    if free < needed:
        raise SystemExit(
            f"bench/shard.py: not enough free disk in {directory}: {size_label(free)} free, "
            f"{size_label(needed)} needed (the input plus one output at a time, and a margin); "
            "pass --workdir on a bigger filesystem or smaller --sizes"
        )


def install_kind(python: str, cwd: Path, env: dict[str, str], on_path: bool) -> str:
    """How ``python`` imports trainspec from ``cwd`` with ``env`` (``on_path``: the repository was put
    on ``PYTHONPATH`` because it has none installed): editable, normal or the source tree."""
    probe = (
        "import json, trainspec, importlib.metadata as m\n"
        "try:\n text = m.distribution('trainspec').read_text('direct_url.json')\n"
        "except m.PackageNotFoundError:\n text = None\n"
        "print(json.dumps([trainspec.__file__, json.loads(text or '{}')]))"
    )
    proc = subprocess.run([python, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return "not importable"
    where, direct = json.loads(proc.stdout)
    if on_path:
        kind = "source tree on PYTHONPATH (not installed in this interpreter)"
    elif direct.get("dir_info", {}).get("editable"):
        kind = "editable install (pip install -e)"
    else:
        kind = "normal install (pip install .)"
    return f"{kind}, {Path(where).parent}"


def python_version(python: str) -> str:
    """The version string of another interpreter."""
    proc = subprocess.run(
        [python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True, check=False
    )
    return proc.stdout.strip() or "?"


def importable(python: str, module: str, cwd: Path, env: dict[str, str]) -> bool:
    """Whether ``python`` can import ``module``."""
    return (
        subprocess.run(
            [python, "-c", f"import {module}"], cwd=cwd, env=env, capture_output=True, check=False
        ).returncode
        == 0
    )


def filesystem(directory: Path) -> str:
    """Filesystem type and device of ``directory`` (findmnt, else /proc/self/mounts)."""
    proc = subprocess.run(
        ["findmnt", "-n", "-o", "FSTYPE,SOURCE,TARGET", "-T", str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode == 0 and proc.stdout.strip():
        fstype, source, target = proc.stdout.split()[:3]
        return f"{fstype} on {source} (mounted at {target})"
    best = ("?", "?", "")
    real = os.path.realpath(directory)
    with open("/proc/self/mounts") as fh:
        for line in fh:
            source, target, fstype = line.split()[:3]
            if (real + "/").startswith(target.rstrip("/") + "/") and len(target) >= len(best[2]):
                best = (fstype, source, target)
    return f"{best[0]} on {best[1]} (mounted at {best[2]})"


def machine(python: str) -> list[str]:
    """Cores, ``uname -srm``, the interpreter, memory and load: one line each."""
    uname = subprocess.run(["uname", "-srm"], capture_output=True, text=True, check=False).stdout.strip()
    mem = "?"
    try:
        with open("/proc/meminfo") as fh:
            info = dict(line.split(":", 1) for line in fh)
        total, avail = (int(info[k].split()[0]) * KIB for k in ("MemTotal", "MemAvailable"))
        mem = f"{size_label(total)} RAM, {size_label(avail)} available"
    except (OSError, KeyError, ValueError):
        pass
    return [
        f"{len(os.sched_getaffinity(0))} cores, {uname}, Python {python_version(python)} ({python})",
        f"{mem}; load average {os.getloadavg()[0]:.2f} at start",
    ]


def stage_env(importable_from_install: bool) -> dict[str, str]:
    """The children's environment: bytecode caching on (as installed), the repo on
    ``PYTHONPATH`` only when the interpreter has no trainspec of its own."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not importable_from_install:
        repo = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = repo + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


if __name__ == "__main__":  # pragma: no cover - a quick look at the generator
    target = Path(sys.argv[1])
    t0 = time.perf_counter()
    n = generate_jsonl(target, parse_size(sys.argv[2]))
    print(f"{n} lines, {target.stat().st_size} bytes in {time.perf_counter() - t0:.2f} s")
