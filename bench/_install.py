"""Installs to measure: a normal (non-editable) install of the working tree in a new virtual
environment, and what kind of install the running interpreter has.

An editable install puts an import hook on every interpreter start (its ``.pth`` file imports a
finder), which makes even ``python -c pass`` slower; users run a normal install, so start-up
figures are taken there. The new environment gets the same PyYAML build as the running one (the
C extension's sha256 is compared), so ``python -c 'import yaml'`` means the same in both.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path
from typing import NamedTuple

from _common import ENV, ROOT


class Install(NamedTuple):
    """An interpreter with trainspec installed, and how it was installed."""

    label: str  # "normal" or "editable" (or "source tree")
    python: Path
    trainspec: list[str]  # the command users type: the console script beside the interpreter
    note: str


def install_kind(python: str | os.PathLike[str]) -> str:
    """``editable``, ``normal`` or ``source tree`` for trainspec as ``python`` imports it."""
    probe = (
        "import importlib.metadata as m, json\n"
        "try:\n    d = m.distribution('trainspec')\n"
        "except m.PackageNotFoundError:\n    print('none'); raise SystemExit\n"
        "u = d.read_text('direct_url.json')\n"
        "print('editable' if u and json.loads(u).get('dir_info', {}).get('editable') else 'normal')\n"
    )
    # Not from the repository: a ``-c`` child puts its working directory first on sys.path.
    out = subprocess.run(
        [str(python), "-c", probe], capture_output=True, text=True, env=ENV, check=False, cwd=tempfile.gettempdir()
    )
    kind = out.stdout.strip()
    return "source tree" if kind == "none" else kind or "unknown"


def current_install() -> Install:
    """The running interpreter's trainspec (typically the development environment's editable one)."""
    python = Path(sys.executable)
    kind = install_kind(python)
    return Install(kind, python, _console_script(python), f"the running interpreter ({python})")


def _console_script(python: Path) -> list[str]:
    script = python.parent / "trainspec"
    return [str(script)] if script.exists() else [str(python), "-m", "trainspec"]


def _yaml_extension(python: str | os.PathLike[str]) -> tuple[str, str]:
    """PyYAML's version and the sha256 of its C extension as ``python`` imports it ('' when absent)."""
    probe = (
        "import hashlib, yaml\n"
        "try:\n    import yaml._yaml as c; h = hashlib.sha256(open(c.__file__, 'rb').read()).hexdigest()\n"
        "except ImportError:\n    h = ''\n"
        "print(yaml.__version__, h)\n"
    )
    out = subprocess.run(
        [str(python), "-c", probe], capture_output=True, text=True, env=ENV, check=True, cwd=tempfile.gettempdir()
    )
    version, _, digest = out.stdout.strip().partition(" ")
    return version, digest


def _snapshot(destination: Path) -> Path:
    """The working tree as it is (tracked and new files, not ignored ones), copied to build from.

    Building from a copy leaves no ``build/`` directory in the tree others are editing.
    """
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listing.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def _archive(revision: str, destination: Path) -> Path:
    """The tree of a commit (``git archive``: read-only), to build a baseline from."""
    destination.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(destination)], input=archive, check=True)
    return destination


def normal_install(workdir: Path, revision: str | None = None, label: str = "normal") -> Install:
    """``pip install`` of a wheel built from the working tree (or from commit ``revision``) into a
    new venv under ``workdir``.

    The wheel is built by the running interpreter's pip and setuptools (``--no-build-isolation``:
    nothing is downloaded); the venv is a plain ``python -m venv`` of the base interpreter. PyYAML
    comes from pip's usual sources (its cache or index) at the running interpreter's version, and
    must be the same build; trainspec's other dependencies are not installed (validate and compile
    to stdout import none of them).
    """
    version, digest = _yaml_extension(sys.executable)
    wheels, env_dir = workdir / "wheels", workdir / "venv"
    shutil.rmtree(workdir / "src", ignore_errors=True)  # a --keep directory from an earlier run
    shutil.rmtree(wheels, ignore_errors=True)
    source = _snapshot(workdir / "src") if revision is None else _archive(revision, workdir / "src")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(source),
        ],
        check=True,
        env=ENV,
        capture_output=True,
    )
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check"]
    subprocess.run([*pip, f"pyyaml=={version}"], check=True, env=ENV, capture_output=True)
    got_version, got_digest = _yaml_extension(python)
    if (got_version, got_digest) != (version, digest):
        raise SystemExit(
            f"the new venv's PyYAML ({got_version}, C extension {got_digest[:12] or 'absent'}) "
            f"is not the running interpreter's ({version}, {digest[:12] or 'absent'})"
        )
    wheel = next(wheels.glob("trainspec-*.whl"))
    subprocess.run([*pip, str(wheel)], check=True, env=ENV, capture_output=True)
    if install_kind(python) != "normal":
        raise SystemExit(f"{python}: trainspec did not install as a normal package")
    what = "the working tree" if revision is None else f"commit {revision}"
    note = (
        f"pip install of {wheel.name} built from {what} into a new venv, PyYAML {version} "
        f"(C extension sha256 {digest[:12]})"
    )
    return Install(label, python, _console_script(python), note)


#: trainspec's dependencies besides PyYAML (pyproject.toml), for the commands that import them (check).
DEPENDENCIES = ("jinja2", "jsonschema", "cel-expr-python", "protobuf", "google-re2")


def with_dependencies(install: Install, names: tuple[str, ...] = DEPENDENCIES) -> Install:
    """``install`` plus ``names`` pinned to the versions the running interpreter has.

    Every venv then holds the same versions, so a before/after measures trainspec alone. A name the
    running interpreter lacks is left out (the install then lacks it too, as that interpreter does).
    """
    pins = []
    for name in names:
        try:
            pins.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    if pins:
        command = [str(install.python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins]
        subprocess.run(command, check=True, env=ENV, capture_output=True)
    return install._replace(note=f"{install.note}; {', '.join(pins) or 'no other dependency'}")


def same_output(installs: list[Install], args: list[str]) -> None:
    """Fail unless every install prints the same thing (and exit code) for ``trainspec ARGS``."""
    seen = {}
    for install in installs:
        out = subprocess.run([*install.trainspec, *args], cwd=ROOT, capture_output=True, env=ENV, check=False)
        seen[install.label] = (out.returncode, hashlib.sha256(out.stdout).hexdigest())
    if len(set(seen.values())) > 1:
        raise SystemExit(f"trainspec {' '.join(args)} differs between installs: {json.dumps(seen)}")
