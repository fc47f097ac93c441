"""The distributions: ``python -m build`` in a copy of the checkout, ``twine check --strict``, and the
wheel installed by pip into a fresh virtual environment, where it runs like the editable install.

Offline: the build backend and trainspec's dependencies come from a wheelhouse packed from this
environment (tests/wheelhouse.py), and pip is told to use nothing else (``--no-index``, no config file).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from email.message import Message
from email.parser import BytesParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import trainspec
from tests.conftest import ROOT
from tests.wheelhouse import build_wheelhouse
from trainspec.schemas import FILES

if sys.version_info < (3, 11):  # pragma: no cover - CI runs 3.11
    pytest.skip("reads pyproject.toml with tomllib (Python 3.11+)", allow_module_level=True)
import tomllib

VERSION = trainspec.__version__
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: Not in the checkout's copy: version control, environments, caches and earlier build output.
SKIP = (
    ".git",
    ".venv*",
    "__pycache__",
    "*.pyc",
    "*.egg-info",
    "build",
    "dist",
    ".*_cache",
    ".hypothesis",
    ".trainspec",
)
#: Where the generators of the package's data lived before they moved to ``tools/`` (never installed,
#: run from a checkout by ``python -m tools.regenerate``): none of them may come back into the wheel.
GENERATORS = (
    "trainspec/k8s/generate.py",
    "trainspec/k8s/_gen/",
    "trainspec/check/vendor.py",
    "trainspec/schemas/generate.py",
    "tools/",
)


def _env(house: Path) -> dict[str, str]:
    """pip sees the wheelhouse and nothing else: no index, no configuration file of this machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "TRAINSPEC_")) and k != "PYTHONPATH"}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(house), PIP_CONFIG_FILE=os.devnull)
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    env["XDG_CACHE_HOME"] = str(house.parent / "cache")  # check's verdict cache: not the user's
    return env


def _run(*command: str | Path, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """sdist and wheel built as a release would be: ``python -m build`` (the wheel from the sdist)."""
    base = tmp_path_factory.mktemp("packaging")
    source = base / "checkout"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*SKIP))
    house = build_wheelhouse(base / "house", PYPROJECT["build-system"]["requires"])
    _run(sys.executable, "-m", "build", "--outdir", base / "dist", source, env=_env(house), cwd=base)
    files = sorted((base / "dist").iterdir())
    return {"base": base, "house": house, **{f.name: f for f in files}}


def _wheel(built: dict[str, Path]) -> Path:
    return built[f"trainspec-{VERSION}-py3-none-any.whl"]


def _sdist(built: dict[str, Path]) -> Path:
    return built[f"trainspec-{VERSION}.tar.gz"]


def _metadata(built: dict[str, Path]) -> Message:
    with zipfile.ZipFile(_wheel(built)) as wheel:
        return BytesParser().parsebytes(wheel.read(f"trainspec-{VERSION}.dist-info/METADATA"))


@pytest.mark.slow
def test_build_makes_one_sdist_and_one_wheel_that_twine_accepts(built: dict[str, Path]) -> None:
    made = sorted(name for name in built if name.endswith((".whl", ".tar.gz")))
    assert made == [f"trainspec-{VERSION}-py3-none-any.whl", f"trainspec-{VERSION}.tar.gz"]
    done = _run(
        sys.executable,
        "-m",
        "twine",
        "check",
        "--strict",
        _sdist(built),
        _wheel(built),
        env=_env(built["house"]),
        cwd=built["base"],
    )
    assert done.stdout.count("PASSED") == 2 and "WARNING" not in done.stdout + done.stderr, done.stdout


@pytest.mark.slow
def test_the_wheel_holds_the_package_with_its_data_and_nothing_else(built: dict[str, Path]) -> None:
    checkout = built["base"] / "checkout"  # what was built (the working tree may have changed since)
    source = {
        p.relative_to(checkout).as_posix()
        for p in (checkout / "trainspec").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }
    with zipfile.ZipFile(_wheel(built)) as wheel:
        names = set(wheel.namelist())
    info = f"trainspec-{VERSION}.dist-info/"
    assert {n for n in names if not n.startswith(info)} == source
    # no generator: they are development tools (tools/), and the package never imports them
    assert [n for n in names if n.startswith(GENERATORS)] == []
    # the data the commands read at run time: every file of the package that is not Python
    data = {n for n in source if not n.endswith(".py")}
    assert data <= names
    for name in ("py.typed", "schemas/trainingjob.schema.json", "runtimes/trainspec-torch.yaml"):
        assert f"trainspec/{name}" in data
    assert {f"trainspec/schemas/{name}" for name in FILES.values()} <= data
    index = json.loads((checkout / "trainspec/check/schema/data/index.json").read_text(encoding="utf-8"))
    listed = {f"trainspec/check/schema/data/{crd['file']}" for bundle in index["bundles"] for crd in bundle["crds"]}
    assert listed and listed | {"trainspec/check/schema/data/index.json"} <= data
    assert any(n.startswith("trainspec/gitops/health/") and n.endswith(".lua") for n in data)
    assert f"{info}licenses/LICENSE" in names  # Apache-2.0 asks for its text with every copy


@pytest.mark.slow
def test_the_sdist_holds_what_the_wheel_is_built_from_and_no_tests_or_caches(built: dict[str, Path]) -> None:
    with tarfile.open(_sdist(built)) as sdist:
        names = {m.name.split("/", 1)[1] for m in sdist.getmembers() if m.isfile()}
    assert {
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "PKG-INFO",
        "trainspec/__init__.py",
        "trainspec/py.typed",
    } <= names
    top = {name.split("/", 1)[0] for name in names}
    allowed = {
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "MANIFEST.in",
        "PKG-INFO",
        "setup.cfg",
        "trainspec",
        "trainspec.egg-info",
    }
    assert top <= allowed, top
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


@pytest.mark.slow
def test_the_metadata_says_what_an_index_shows(built: dict[str, Path]) -> None:
    meta = _metadata(built)
    assert meta["Name"] == "trainspec" and meta["Version"] == VERSION
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["Description-Content-Type"] == "text/markdown"
    readme = (built["base"] / "checkout" / "README.md").read_text(encoding="utf-8")
    assert meta.get_payload(decode=True).decode("utf-8") == readme  # the long description
    assert {"kube", "kfp", "check", "data", "test"} <= set(meta.get_all("Provides-Extra") or [])
    classifiers = meta.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers  # py.typed ships (checked above)
    assert not [c for c in classifiers if c.startswith("License ::")]  # License-Expression says it (PEP 639)
    # Project URLs: all on the host the JSON Schemas' $id names, so one move is one edit.
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or [])
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues"}
    schema = json.loads((ROOT / "trainspec/schemas/trainingjob.schema.json").read_text(encoding="utf-8"))
    host = urlsplit(schema["$id"]).netloc
    assert host and {urlsplit(u).netloc for u in urls.values()} == {host}
    assert all(u.startswith("https://") for u in urls.values())


@pytest.mark.slow
def test_one_version_source(built: dict[str, Path]) -> None:
    """``trainspec.__version__`` is the version: pyproject reads it, the distributions carry it."""
    assert "version" not in PYPROJECT["project"] and "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "trainspec.__version__"}
    assert _metadata(built)["Version"] == VERSION
    with tarfile.open(_sdist(built)) as sdist:
        pkg_info = sdist.extractfile(f"trainspec-{VERSION}/PKG-INFO")
        assert pkg_info is not None
        assert BytesParser().parsebytes(pkg_info.read())["Version"] == VERSION
    # The README's install-from-a-wheel command names the file the build makes.
    assert f"dist/{_wheel(built).name}" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_wheel_installs_and_runs_in_a_fresh_venv(built: dict[str, Path]) -> None:
    base, wheel = built["base"], _wheel(built)
    build_wheelhouse(built["house"], _metadata(built).get_all("Requires-Dist") or [])  # no extra: the plain install
    env = _env(built["house"])
    fresh = base / "fresh"
    venv.create(fresh, with_pip=False, symlinks=os.name != "nt")
    bindir = fresh / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / "python"
    pip = (sys.executable, "-m", "pip", "--python", python)
    _run(*pip, "install", "--quiet", wheel, env=env, cwd=base)
    _run(*pip, "check", env=env, cwd=base)  # every declared requirement is there, none broken

    # A working directory outside the checkout, with the examples: nothing resolves to the sources.
    work = base / "work"
    shutil.copytree(ROOT / "examples", work / "examples")
    (work / ".git").mkdir()  # a repository root: project discovery stops here, as in a checkout
    where = _run(python, "-c", "import trainspec; print(trainspec.__file__)", env=env, cwd=work).stdout.strip()
    assert Path(where).is_relative_to(fresh), where

    installed = str(bindir / "trainspec")
    assert _run(installed, "--version", env=env, cwd=work).stdout == f"trainspec {VERSION}\n"
    editable = (sys.executable, "-m", "trainspec")
    for command in (
        ("validate", "examples/"),
        ("compile", "examples/", "-o", "-"),
        ("check", "examples/ddp-cpu.yaml"),  # the packaged CRDs and the CEL engine
    ):
        ours = _run(installed, *command, env=env, cwd=work)
        theirs = _run(*editable, *command, env=env, cwd=work)
        assert (ours.stdout, ours.stderr) == (theirs.stdout, theirs.stderr), command
        assert ours.stdout or ours.stderr


def test_the_generators_live_outside_the_package_and_it_never_imports_them() -> None:
    """The wheel is built from ``trainspec/`` alone (``[tool.setuptools.packages.find]``), so a
    generator outside it cannot ship; and a module that imported one would fail once installed."""
    assert PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"] == ["trainspec*"]
    for generator in ("regenerate.py", "k8s_models/generator.py", "crd_data.py", "json_schemas.py"):
        assert (ROOT / "tools" / generator).is_file(), generator
    assert [name for name in GENERATORS[:-1] if (ROOT / name).exists()] == []
    importing = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "trainspec").rglob("*.py"))
        if re.search(r"^\s*(from|import)\s+tools\b", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    ]
    assert importing == []


def test_the_docs_name_the_wheel_of_this_version() -> None:
    """Install commands that name the wheel file name the one ``python -m build`` makes today."""
    named = {
        (path.relative_to(ROOT).as_posix(), version)
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
        for version in re.findall(r"trainspec-([^-\s/'\"]+)-py3-none-any\.whl", path.read_text(encoding="utf-8"))
    }
    assert named and {version for _, version in named} == {VERSION}, named
