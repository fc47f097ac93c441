"""examples/cluster: every failing job reports exactly its codes, every passing job is clean,
and the notes point at the right lines of the Kueue objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.checkcmd.conftest import CLUSTER, KUEUE, RUNTIMES, check, codes, expected, line_of
from tests.conftest import run_cli
from trainspec.compiler.pipeline import compile_paths
from trainspec.dsl.diagnostics import CODES

FAIL = sorted((CLUSTER / "jobs" / "fail").iterdir())
OK = CLUSTER / "jobs" / "ok"


def rel(path: Path) -> str:
    return path.relative_to(CLUSTER.parent.parent).as_posix()


@pytest.mark.parametrize("path", FAIL, ids=[p.name for p in FAIL])
def test_failing_job_reports_exactly_its_codes(path: Path) -> None:
    want = expected(path)
    assert want, f"{path.name} states no '# expect:' line"
    assert path.name.split("-")[0] in {code for code, _, _ in want}
    status, found = check(str(RUNTIMES), rel(path), "--cluster", str(KUEUE))
    assert status == 1
    assert codes(found) == {(code, rel(path), line, col) for code, line, col in want}
    assert all(d["code"] in CODES and d["message"] for d in found)


def test_every_preflight_code_has_a_failing_example() -> None:
    covered = {code for path in FAIL for code, _, _ in expected(path)}
    assert {f"TS51{i}" for i in range(10)} <= covered


def test_all_failing_jobs_together_with_crds(crds: Path) -> None:
    """One run over everything: no CRD or webhook finding beyond the expected ones."""
    status, found = check(str(RUNTIMES), rel(CLUSTER / "jobs"), "--cluster", str(KUEUE), "--crds", str(crds))
    want = {(code, rel(path), line, col) for path in FAIL for code, line, col in expected(path)}
    assert status == 1
    assert codes(found, errors_only=False) == want


def test_passing_jobs_compile_clean_and_check_clean(crds: Path) -> None:
    result = compile_paths([str(RUNTIMES), str(OK)])
    assert result.ok and result.diagnostics == []
    status, found = check(str(RUNTIMES), str(OK), "--cluster", str(KUEUE), "--crds", str(crds))
    assert (status, found) == (0, [])


def test_failing_specs_compile_clean() -> None:
    """Their problems are only visible against the cluster: validate alone accepts them."""
    specs = [str(p) for p in FAIL if p.read_text().count("trainspec.dev/")]
    result = compile_paths([str(RUNTIMES), *specs])
    assert result.ok and result.diagnostics == []


def _one(path: Path, code: str) -> dict:
    _, found = check(str(RUNTIMES), rel(path), "--cluster", str(KUEUE))
    [diagnostic] = [d for d in found if d["code"] == code]
    return diagnostic


def _notes(diagnostic: dict) -> set[tuple[str, int, int]]:
    return {(r["file"], r["line"], r["column"]) for r in diagnostic["related"]}


QUEUES, FLAVORS, NAMESPACES, TOPOLOGY = (
    KUEUE / n for n in ("queues.yaml", "flavors.yaml", "namespaces.yaml", "topology.yaml")
)


def test_never_admissible_message_and_quota_lines() -> None:
    d = _one(CLUSTER / "jobs/fail/TS514-never-admissible.yaml", "TS514")
    assert (
        "needs 64 nvidia.com/gpu on flavor h100; ClusterQueue team-nlp can reach at most 48 "
        "(nominal 32 + 16 borrowable in cohort gpu-pool, borrowingLimit 16)"
    ) in d["message"]
    gpu = line_of(QUEUES, "{name: nvidia.com/gpu, nominalQuota: 32, borrowingLimit: 16}", "32")
    ib = line_of(QUEUES, "{name: rdma/ib, nominalQuota: 32, borrowingLimit: 16}", "32")
    a100 = line_of(FLAVORS, "nvidia.com/gpu.product: NVIDIA-A100", "NVIDIA-A100")
    assert _notes(d) == {(rel(QUEUES), *gpu), (rel(QUEUES), *ib), (rel(FLAVORS), *a100)}


def test_notes_point_at_the_kueue_objects() -> None:
    held = _one(CLUSTER / "jobs/fail/TS512-queue-held.yaml", "TS512")
    assert _notes(held) == {(rel(QUEUES), *line_of(QUEUES, "stopPolicy: Hold", "Hold"))}
    missing = _one(CLUSTER / "jobs/fail/TS510-missing-clusterqueue.yaml", "TS510")
    assert _notes(missing) == {(rel(QUEUES), *line_of(QUEUES, "clusterQueue: vision-old", "vision-old"))}
    selector = _one(CLUSTER / "jobs/fail/TS511-namespace-not-selected.yaml", "TS511")
    vision_selector = line_of(QUEUES, 'matchLabels: {kueue.example.com/gpu-tenant: "true", team: vision}')
    sandbox_labels = line_of(NAMESPACES, "team: sandbox")
    assert _notes(selector) == {
        (rel(QUEUES), vision_selector[0] - 1, 3),  # the namespaceSelector key
        (rel(NAMESPACES), sandbox_labels[0] - 1, 3),
    }  # the labels key
    flavor = _one(CLUSTER / "jobs/fail/TS516-no-flavor.yaml", "TS516")
    assert _notes(flavor) == {
        (rel(FLAVORS), *line_of(FLAVORS, "NVIDIA-H100-80GB-HBM3", "NVIDIA")),
        (rel(FLAVORS), *line_of(FLAVORS, "NVIDIA-A100-SXM4-80GB", "NVIDIA")),
    }
    level = _one(CLUSTER / "jobs/fail/TS518-topology-level.yaml", "TS518")
    assert _notes(level) == {(rel(TOPOLOGY), *line_of(TOPOLOGY, "levels:"))}
    shape = _one(CLUSTER / "jobs/fail/TS517-pod-too-big.yaml", "TS517")
    assert "needs 16 nvidia.com/gpu; a node of flavor h100 has 8" in shape["message"]
    assert _notes(shape) == {(rel(FLAVORS), *line_of(FLAVORS, 'node-allocatable: "cpu=192', '"cpu'))}


def test_examples_check_clean_against_the_shared_crds_as_a_process(crds: Path) -> None:
    """``trainspec check examples/ --crds ...``: every compiled example passes (cluster/ is ignored)."""
    proc = run_cli("check", "examples/", "--crds", str(crds))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("0 errors, 0 warnings")


def test_failing_example_as_a_process_prints_located_text() -> None:
    path = CLUSTER / "jobs/fail/TS514-never-admissible.yaml"
    proc = run_cli("check", rel(RUNTIMES), rel(path), "--cluster", rel(KUEUE))
    assert proc.returncode == 1
    [(code, line, col)] = expected(path)
    assert (
        f"{rel(path)}:{line}:{col}: error[{code}]: spec.nodes: PodSet node (8 pods) can never be admitted"
        in proc.stdout
    )
    assert f"  note: {rel(QUEUES)}:" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
