"""Which CEL engine a check runs, and its version, found without importing it.

Verdicts depend on the engine: with none installed every rule is "not evaluated" (TS502), and the
two built-in engines part on some rules (docs/check.md). So the verdict cache (:mod:`trainspec.check.crd_cache`) is keyed
by :func:`engine_identity`. It follows :func:`trainspec.check.cel.validations.make_engine`'s choice
(``$TRAINSPEC_CEL_ENGINE``, else the first installed) by looking the modules up instead of importing
them: cel-expr-python loads a 14 MB extension, which a check answered from the cache never needs.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys

from trainspec.check.cel import validations as cel

__all__ = ["distribution_version", "engine_identity"]

#: The built-in engines in the order ``auto`` tries them: the names ``$TRAINSPEC_CEL_ENGINE`` takes, the
#: module :func:`~trainspec.check.cel.validations.make_engine` imports, and the distribution that installs it.
_ENGINES = (
    (("cel-expr", "cel-expr-python"), "cel_expr_python.cel", "cel-expr-python"),
    (("celpy", "cel-python"), "celpy", "cel-python"),
)


def engine_identity() -> str:
    """The engine :func:`~trainspec.check.cel.validations.default_engine` gives here, as ``"<distribution> <version>"``,
    or ``"none"`` where it would raise ImportError. Once the shared engine is built, that one is named."""
    built = cel._DEFAULT
    if built is not None:
        name = str(getattr(built, "name", type(built).__name__))
        return f"{name} {distribution_version(name)}"
    choice = (os.environ.get(cel.ENV_ENGINE, "") or "auto").strip().lower()
    for names, module, distribution in _ENGINES:
        if choice != "auto" and choice not in names:
            continue
        if findable(module):
            return f"{distribution} {distribution_version(distribution)}"
        if choice != "auto":
            break
    return "none"


def findable(module: str) -> bool:
    """``module`` can be imported (its file is there); only its parent package is imported to tell."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent, or a module hidden as None in sys.modules
        return False


def distribution_version(distribution: str) -> str:
    """The installed version of ``distribution`` (``"unknown"``: a copy on sys.path without its metadata).

    Read from the name of its ``<name>-<version>.dist-info`` folder, the first on sys.path, as
    importlib.metadata finds it: importing importlib.metadata costs more (~20 ms, the email package)
    than the rest of the verdict cache's key, so it is only asked for other layouts.
    """
    found = _dist_infos().get(_normalized(distribution))
    if found is not None:
        return found
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


_DIST_INFOS: tuple[tuple[str, ...], dict[str, str]] | None = None


def _dist_infos() -> dict[str, str]:
    """Normalized distribution name -> version, from the dist-info folders on sys.path (first wins)."""
    global _DIST_INFOS
    path = tuple(sys.path)
    if _DIST_INFOS is None or _DIST_INFOS[0] != path:
        found: dict[str, str] = {}
        for entry in path:
            try:
                names = os.listdir(entry or ".")
            except OSError:
                continue  # a zip file, or gone
            for name in names:
                if name.endswith(".dist-info"):
                    project, _, version = name[: -len(".dist-info")].partition("-")
                    if version:
                        found.setdefault(_normalized(project), version)
        _DIST_INFOS = (path, found)
    return _DIST_INFOS[1]
