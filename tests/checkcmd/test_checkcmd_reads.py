"""Files are read once (issue 26): a CRD file's text, scanned for its kind, is what it is parsed
from (and hashed from, for the cache and the shipped-data look-up); the shipped index is read
once; a CRD file another one already answers for is not parsed at all."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.checkcmd.conftest import check
from trainspec.check.schema.crds import CrdRegistry


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each file is read (as text or bytes) while the test runs."""
    counted: Counter[str] = Counter()
    read_text, read_bytes = Path.read_text, Path.read_bytes

    def text(self: Path, *args: Any, **kwargs: Any) -> str:
        counted[str(self.resolve())] += 1
        return read_text(self, *args, **kwargs)

    def data(self: Path) -> bytes:
        counted[str(self.resolve())] += 1
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_text", text)
    monkeypatch.setattr(Path, "read_bytes", data)
    return counted


@pytest.mark.parametrize("option", [[], ["--crds", "CRDS"]], ids=["shipped", "--crds"])
def test_every_crd_file_is_read_once(
    crds: Path, reads: Counter[str], monkeypatch: pytest.MonkeyPatch, option: list[str]
) -> None:
    monkeypatch.setenv("TRAINSPEC_NO_CACHE", "1")
    args = [str(crds) if a == "CRDS" else a for a in option]
    code, _ = check("examples/ddp-cpu.yaml", "examples/mpijob.yaml", "examples/elastic-pytorchjob.yaml", *args)
    assert code == 0
    crd_reads = {path: n for path, n in reads.items() if path.endswith((".json", ".yaml")) and "/examples/" not in path}
    assert crd_reads and max(crd_reads.values()) == 1, crd_reads


def test_a_crd_file_another_one_answers_for_is_not_parsed(crds: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    read_versions = CrdRegistry._read_versions

    def spy(self: CrdRegistry, entry: Any, text: str | None = None) -> Any:
        parsed.append(entry.path.parent.name)
        return read_versions(self, entry, text)

    monkeypatch.setattr(CrdRegistry, "_read_versions", spy)
    registry = CrdRegistry(
        sorted((crds / "mpi-operator").glob("*.yaml")) + sorted((crds / "training-operator").glob("*.yaml"))
    )
    assert registry.lookup("kubeflow.org/v2beta1", "MPIJob") is not None
    assert parsed == ["mpi-operator"]  # the Training Operator's MPIJob (v1) CRD names the same kind
    assert registry.lookup("kubeflow.org/v1", "MPIJob") is not None  # parsed when asked for
    assert registry.served_versions("kubeflow.org", "MPIJob") == ["v1", "v2beta1"]
