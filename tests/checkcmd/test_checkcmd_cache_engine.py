"""The verdict cache is keyed by what decides a verdict: the CEL engine that runs (and its version),
and each CRD by its source file and content.

Installing an engine after a check without one (what the TS502 hint tells users to do) must give
evaluated rules at once, not the stored "rules not evaluated" warnings until the cache is deleted.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.checkcmd.conftest import check
from tests.conftest import EXAMPLES
from trainspec.check.cel import validations as cel
from trainspec.check.crd_cache import CachedCrdRegistry, DiskCache, VerdictCache, crd_files

#: A compiled TrainJob checked against the shipped Trainer CRD, which carries CEL rules.
SPEC = EXAMPLES / "upstream-torch.yaml"
NOT_EVALUATED = "CEL rule(s) not evaluated"


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``modules`` unimportable and unfindable (``None`` in sys.modules), with a fresh engine."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setattr(cel, "_DEFAULT", None)


def _warnings(found: list[dict[str, Any]]) -> list[str]:
    return [d["message"] for d in found if d["code"] == "TS502"]


def test_verdicts_stored_without_an_engine_are_not_reused_once_one_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(cel.ENV_ENGINE, raising=False)
    # cel-python stays away throughout: as after `pip install 'trainspec[check]'` on CPython 3.11+,
    # which brings cel-expr-python (and not cel-python) into an environment that had no engine.
    _hide(monkeypatch, "celpy")
    with monkeypatch.context() as before:
        _hide(before, "cel_expr_python", "cel_expr_python.cel")
        _, found = check(str(SPEC))
        assert any(NOT_EVALUATED in message for message in _warnings(found)), found
    monkeypatch.setattr(cel, "_DEFAULT", None)  # the next engine is built from what is installed now
    _, again = check(str(SPEC))
    assert _warnings(again) == [], "the verdicts of the engine-less run were reused"
    assert type(cel.default_engine()).__name__ == "CelExprEngine"  # the engine that ran


def _key(registry: CachedCrdRegistry, cache: DiskCache, manifest: dict[str, Any]) -> str:
    verdicts = VerdictCache(cache, registry)
    key = verdicts.key_of(manifest)
    assert key is not None
    return key


def _trainjob() -> dict[str, Any]:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "a"}, "spec": {}}


def test_the_key_changes_with_the_engine_and_its_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trainspec.check.cel import engine_choice as cel_engines

    monkeypatch.delenv(cel.ENV_ENGINE, raising=False)
    monkeypatch.setattr(cel, "_DEFAULT", None)  # not built yet, as at the start of a check: looked up, not imported
    cache = DiskCache(tmp_path)
    registry = CachedCrdRegistry(crd_files([_trainer_crd(tmp_path)]), None)
    first = _key(registry, cache, _trainjob())
    assert _key(registry, cache, _trainjob()) == first  # stable while nothing changed
    with monkeypatch.context() as upgraded:
        # Another release of the engine, first on sys.path (as an upgrade in place, or a user install).
        newer = tmp_path / "newer" / "cel_expr_python-0.1.99.dist-info"
        newer.mkdir(parents=True)
        (newer / "METADATA").write_text("Metadata-Version: 2.1\nName: cel-expr-python\nVersion: 0.1.99\n")
        upgraded.syspath_prepend(str(newer.parent))
        assert importlib.metadata.version("cel-expr-python") == "0.1.99"
        assert cel_engines.engine_identity() == "cel-expr-python 0.1.99"
        assert _key(registry, cache, _trainjob()) != first
    with monkeypatch.context() as other:
        other.setenv(cel.ENV_ENGINE, "celpy")
        assert _key(registry, cache, _trainjob()) != first
    with monkeypatch.context() as none:
        _hide(none, "celpy", "cel_expr_python", "cel_expr_python.cel")
        assert cel_engines.engine_identity() == "none"
        assert _key(registry, cache, _trainjob()) != first


def _trainer_crd(directory: Path) -> Path:
    """A copy of the shipped TrainJob CRD data in ``directory`` (a file the checker reads as a CRD)."""
    from trainspec.check.schema.vendored import DATA_DIR

    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "trainjobs.json"
    shutil.copyfile(DATA_DIR / "trainer.kubeflow.org_trainjobs.json", target)
    return target


def test_the_key_changes_with_the_crd_content_and_source(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path / "cache")
    crd = _trainer_crd(tmp_path / "a")
    first = _key(CachedCrdRegistry([crd], None), cache, _trainjob())
    # The same bytes at another path: another source, another key.
    moved = _trainer_crd(tmp_path / "b")
    assert _key(CachedCrdRegistry([moved], None), cache, _trainjob()) != first
    # Other content at the same path, of the same size and modification time: another key.
    stat = crd.stat()
    text = crd.read_text(encoding="utf-8")
    assert text.count('"minimum":1') >= 1
    crd.write_text(text.replace('"minimum":1', '"minimum":2', 1), encoding="utf-8")
    os.utime(crd, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (crd.stat().st_size, crd.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    assert _key(CachedCrdRegistry([crd], None), cache, _trainjob()) != first
