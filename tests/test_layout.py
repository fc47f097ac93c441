"""The package's layout shows its parts: a module name repeats only where the folder says which is meant.

Two modules of one name that mean different things (three ``ladder.py``, ``compiler/pipeline.py``
beside ``kfp/pipeline.py``) make a reader open the wrong one; a repeat is allowed only for the
patterns below, each with its reason (docs/pipeline.md, "Layers").
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "trainspec"

#: basename -> the modules that may share it (paths under trainspec/), and why.
ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "dialect.py": (
        frozenset(f"compiler/lower/{engine}/dialect.py" for engine in ("trainer", "ray", "training_operator")),
        "each engine's folder has its dialect",
    ),
    "mpijob.py": (
        frozenset({"compiler/lower/training_operator/mpijob.py", "migrate/mpijob.py"}),
        "one module per kind: built by the lowering, read by migrate",
    ),
    "pytorchjob.py": (
        frozenset({"compiler/lower/training_operator/pytorchjob.py", "migrate/pytorchjob.py"}),
        "one module per kind: built by the lowering, read by migrate",
    ),
    "trainjob.py": (
        frozenset({"compiler/lower/trainer/trainjob.py", "migrate/trainjob.py"}),
        "one module per kind: built by the lowering, read by migrate",
    ),
    "errors.py": (
        frozenset({"dsl/errors.py", "client/errors.py", "stages/errors.py"}),
        "each package's own exceptions",
    ),
    "logs.py": (frozenset({"cli/logs.py", "client/logs.py"}), "a command beside what it drives"),
    "submit.py": (frozenset({"cli/submit.py", "kube/submit.py"}), "a command beside what it drives"),
    "models.py": (
        frozenset({"dsl/models.py", "dsl/spec/models.py"}),
        "trainspec.dsl.models is the public import path of the spec language's kinds",
    ),
    "dashboard.py": (
        frozenset({"observability/dashboard.py", "compiler/observability/dashboard.py"}),
        "trainspec.observability.dashboard is the documented path of the lowering's dashboard",
    ),
    "ray.py": (
        frozenset({"k8s/ray.py", "stages/ray.py"}),
        "the generated KubeRay models, and the in-pod helper training scripts import",
    ),
}


def repeated_basenames(package: Path) -> dict[str, set[str]]:
    """basename -> its modules (paths relative to ``package``), for names used more than once."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in package.rglob("*.py"):
        if path.name != "__init__.py":
            found[path.name].add(path.relative_to(package).as_posix())
    return {name: paths for name, paths in found.items() if len(paths) > 1}


def test_a_module_name_repeats_only_where_the_pattern_allows() -> None:
    unexpected = {
        name: sorted(paths)
        for name, paths in repeated_basenames(PACKAGE).items()
        if name not in ALLOWED or not paths <= ALLOWED[name][0]
    }
    assert not unexpected, (
        f"module names that repeat with different meanings: {unexpected}; name each for what it holds "
        "(or, for a new instance of a pattern, add it to ALLOWED with the reason)"
    )


def test_every_allowed_repeat_still_exists() -> None:
    """An allowance outlives no rename: each names modules that are all there."""
    repeats = repeated_basenames(PACKAGE)
    for name, (paths, _) in ALLOWED.items():
        assert name in repeats and repeats[name] == set(paths), name


def test_the_check_finds_a_planted_repeat(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "ladder.py").write_text("")
    assert repeated_basenames(tmp_path) == {"ladder.py": {"a/ladder.py", "b/ladder.py"}}
