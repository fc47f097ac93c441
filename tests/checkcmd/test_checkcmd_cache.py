"""The on-disk cache of ``trainspec check``: same answers with and without it, keyed by content,
robust to damage, and off with TRAINSPEC_NO_CACHE=1."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.checkcmd.conftest import check
from tests.checkcmd.test_checkcmd_crds import V21_TRAINJOB
from trainspec.check import CrdRegistry, default_engine, iter_rules
from trainspec.check.crd_cache import CachedCelEngine, CachedCrdRegistry, DiskCache, crd_files

# Objects only: cel-python degrades badly on macros over mistyped values, which the checker
# never produces (values are typed by the schema first).
SAMPLES = [
    {"self": {}},
    {"self": {"metadata": {"name": "Bad_Name"}, "a": 1}},
    {"self": {"metadata": {"name": "ok"}, "levels": [{"nodeLabel": "x"}, {"nodeLabel": "x"}]}},
]


def _same(a: dict, b: dict) -> bool:
    """Equal schemas, descriptions aside."""
    from tools.crd_data import strip_schema

    return strip_schema(a, "a") == strip_schema(b, "b")


def test_crd_files_the_package_ships_are_read_from_its_json(crds: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No cache at all, and still no YAML parsing for a file whose bytes the shipped data came from.
    from trainspec.check.schema import crds as crds_module

    monkeypatch.setattr(crds_module, "_load_yaml_documents", lambda text: pytest.fail("parsed shipped YAML"))
    registry = CachedCrdRegistry(crd_files([crds / "trainer"]), None)
    crd = registry.lookup("trainer.kubeflow.org/v1alpha1", "TrainJob")
    assert crd is not None and crd.source.endswith("trainer.kubeflow.org_trainjobs.yaml")
    monkeypatch.undo()
    plain = CrdRegistry(crd_files([crds / "trainer"])).lookup("trainer.kubeflow.org/v1alpha1", "TrainJob")
    assert plain is not None and _same(crd.schema, plain.schema)


def _outcome(engine, program, activation):
    try:
        return engine.evaluate(program, activation)
    except Exception as exc:  # the error type is part of the verdict
        return type(exc).__name__


def test_cached_cel_engine_is_the_default_engine_and_stores_nothing(crds: Path, tmp_path: Path) -> None:
    # CEL programs are not kept on disk (cel-expr-python compiles a rule in ~0.1 ms): the
    # cached engine is the process's engine, with the same answers, and writes no file.
    rules = sorted({rule["rule"] for crd in CrdRegistry(crd_files([crds])) for _, rule in iter_rules(crd.schema)})
    assert len(rules) >= 40
    plain = default_engine()
    cached = CachedCelEngine(DiskCache(tmp_path))
    for rule in rules:
        program, reference = cached.compile(rule), plain.compile(rule)
        for sample in SAMPLES:
            assert _outcome(cached, program, sample) == _outcome(plain, reference, sample), rule
    cached.flush()
    assert list(tmp_path.iterdir()) == []


def test_cached_registry_matches_the_plain_one(crds: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = crd_files([crds])
    plain = {(v.api_version, v.kind): v for v in CrdRegistry(files)}
    cold = {(v.api_version, v.kind): v for v in CachedCrdRegistry(files, DiskCache(tmp_path))}
    assert any(name.startswith("crd-") for name in os.listdir(tmp_path))
    from trainspec.check.schema import crds as crds_module

    monkeypatch.setattr(crds_module, "_load_yaml_documents", lambda text: pytest.fail("parsed YAML on a warm cache"))
    warm = {(v.api_version, v.kind): v for v in CachedCrdRegistry(files, DiskCache(tmp_path))}
    for found in (cold, warm):
        assert found.keys() == plain.keys()
        # Files the package ships JSON data for come from that data, which has no descriptions.
        assert all(
            _same(found[key].schema, plain[key].schema) and found[key].scope == plain[key].scope for key in plain
        )


def test_damaged_cache_entries_are_ignored(crds: Path, tmp_path: Path) -> None:
    files = crd_files([crds / "kueue"])
    reference = {(v.api_version, v.kind): v.schema for v in CrdRegistry(files)}
    CachedCrdRegistry(files, DiskCache(tmp_path)).load_all()
    for entry in tmp_path.iterdir():
        entry.write_text('{"format": 1, "data": [{"nonsense": true}]}' if entry.name.startswith("crd-a") else "{")
    again = {(v.api_version, v.kind): v.schema for v in CachedCrdRegistry(files, DiskCache(tmp_path))}
    assert set(again) <= set(reference) and all(_same(again[k], reference[k]) for k in again)
    assert len(again) >= len(reference) - 4  # at most the one damaged-but-valid-JSON file lost its kinds


def test_verdicts_are_reused_and_keyed_by_content(
    write, crds: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = write("tj.yaml", V21_TRAINJOB)
    first = check(str(manifest), "--crds", str(crds))
    import trainspec.check as check_package

    monkeypatch.setattr(check_package, "check_manifest", lambda *a, **k: pytest.fail("verdict not reused"))
    assert check(str(manifest), "--crds", str(crds)) == first
    monkeypatch.undo()
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    # A different CRD file content is a different key: a stricter copy gives a new verdict.
    stricter = tmp_path / "crds"
    shutil.copytree(crds / "trainer", stricter)
    path = stricter / "trainer.kubeflow.org_trainjobs.yaml"
    marker = "                  numNodes:\n"
    assert path.read_text().count(marker) == 1
    path.write_text(path.read_text().replace(marker, marker + "                    maximum: 1\n"))
    _, stricter_found = check(str(manifest), "--crds", str(stricter))
    assert len(stricter_found) == len(first[1]) + 1
    _, again = check(str(manifest), "--crds", str(stricter))
    assert again == stricter_found


def test_no_cache_writes_nothing(write, crds: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("TRAINSPEC_NO_CACHE", "1")
    manifest = write("tj.yaml", V21_TRAINJOB)
    status, found = check(str(manifest), "--crds", str(crds))
    assert status == 1 and found
    assert not (tmp_path / "cache").exists()
    monkeypatch.delenv("TRAINSPEC_NO_CACHE")
    assert check(str(manifest), "--crds", str(crds)) == (status, found)
    assert any((tmp_path / "cache" / "trainspec").iterdir())
