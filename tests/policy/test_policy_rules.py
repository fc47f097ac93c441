"""Project policy (TS600-TS605): each rule fails where it should, at the exact line:column, and passes
otherwise."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from trainspec.compiler.pipeline import compile_paths
from trainspec.compiler.policy import image_registry_name, registry_allowed
from trainspec.dsl.diagnostics import CODES, Diagnostic

DIGEST = "nvcr.io/nvidia/pytorch@sha256:" + "a" * 64

#: A job that satisfies every rule below; line numbers are part of the tests.
JOB_LINES = [
    "apiVersion: trainspec.dev/v1alpha1",  # 1
    "kind: TrainingJob",  # 2
    "metadata:",  # 3
    "  name: demo",  # 4
    "  namespace: team-a",  # 5
    "  labels: {team: a, cost-center: c1}",  # 6
    "spec:",  # 7
    "  runtime: trainspec-torch",  # 8
    f"  image: {DIGEST}",  # 9
    "  nodes: 2",  # 10
    "  resourcesPerNode: {gpu: 8}",  # 11
    "  queue: team-a",  # 12
    "  maxRunTime: 12h",  # 13
]

POLICY = """\
spec:
  policy:
    requireQueue: true
    requireMaxRunTime: true
    maxGpusPerJob: 16
    requiredLabels: [team, cost-center]
    images: {requireDigest: true, allowedRegistries: [nvcr.io/nvidia, ghcr.io/trainspec]}
"""


def policy_findings(tmp_path: Path, lines: list[str], policy: str = POLICY) -> list[tuple[str, int, int, str]]:
    """(code, line, column, path) of every TS6xx diagnostic for the job ``lines`` under ``policy``."""
    job = tmp_path / "job.yaml"
    job.write_text("\n".join(lines) + "\n")
    project = tmp_path / "trainspec.yaml"
    project.write_text("apiVersion: trainspec.dev/v1alpha1\nkind: Project\n" + textwrap.dedent(policy))
    result = compile_paths([str(job)], project=str(project))
    found: list[Diagnostic] = [d for d in result.diagnostics if d.code.startswith("TS6")]
    assert all(d.file and d.file.endswith("job.yaml") and d.is_error for d in found)
    return [(d.code, d.line, d.column, d.path) for d in found]


def edit(replace: dict[int, str | None] | None = None, add: list[str] = ()) -> list[str]:
    """The job with line ``n`` replaced (or dropped for None), and ``add`` lines appended."""
    lines = list(JOB_LINES)
    for number, text in sorted((replace or {}).items(), reverse=True):
        if text is None:
            del lines[number - 1]
        else:
            lines[number - 1] = text
    return [*lines, *add]


def test_the_compliant_job_passes_every_rule(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, JOB_LINES) == []


def test_policy_codes_are_registered() -> None:
    assert [code for code in CODES if code.startswith("TS6")] == [f"TS60{i}" for i in range(6)]


# -- TS600 requireQueue ---------------------------------------------------------------------------


def test_ts600_job_without_queue(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, edit({12: None})) == [("TS600", 7, 1, "spec.queue")]


def test_ts600_project_default_queue_satisfies_the_rule(tmp_path: Path) -> None:
    policy = POLICY + "  defaults: {queue: shared}\n"
    assert policy_findings(tmp_path, edit({12: None}), policy) == []


def test_ts600_off_by_default(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, edit({12: None}), "spec: {}\n") == []


# -- TS601 requireMaxRunTime ----------------------------------------------------------------------


def test_ts601_job_without_deadline(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, edit({13: None})) == [("TS601", 7, 1, "spec.maxRunTime")]


def test_ts601_passes_with_a_deadline(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, edit({13: "  maxRunTime: 30m"})) == []


# -- TS602 maxGpusPerJob --------------------------------------------------------------------------


def test_ts602_too_many_gpus_points_at_nodes(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, edit({10: "  nodes: 3"})) == [("TS602", 10, 10, "spec.nodes")]


def test_ts602_without_nodes_points_at_the_gpus(tmp_path: Path) -> None:
    lines = edit({10: None, 11: "  resourcesPerNode: {gpu: 32}"})
    assert policy_findings(tmp_path, lines) == [("TS602", 10, 27, "spec.resourcesPerNode.gpu")]


def test_ts602_at_the_ceiling_passes(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, edit({10: "  nodes: 2"})) == []  # 2 x 8 = 16 = maxGpusPerJob


def test_ts602_message_says_how_many(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("\n".join(edit({10: "  nodes: 3"})) + "\n")
    project = tmp_path / "trainspec.yaml"
    project.write_text("apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec: {policy: {maxGpusPerJob: 16}}\n")
    (diag,) = [d for d in compile_paths([str(job)], project=str(project)).diagnostics if d.code == "TS602"]
    assert diag.message == (
        "24 GPUs (3 nodes x 8 GPUs per node), but the project allows at most 16 per job (policy.maxGpusPerJob)"
    )
    assert diag.hint == "ask for at most 2 nodes of 8 GPUs"


# -- TS603 requiredLabels -------------------------------------------------------------------------


def test_ts603_missing_label(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, edit({6: "  labels: {team: a}"})) == [("TS603", 6, 3, "metadata.labels")]


def test_ts603_no_labels_at_all_points_at_metadata(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, edit({6: None})) == [("TS603", 3, 1, "metadata.labels")]


def test_ts603_passes_with_the_labels(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, edit({6: "  labels: {cost-center: c9, team: b, extra: x}"})) == []


# -- TS604 images.requireDigest -------------------------------------------------------------------


def test_ts604_tagged_image(tmp_path: Path) -> None:
    lines = edit({9: "  image: nvcr.io/nvidia/pytorch:25.01-py3"})
    assert policy_findings(tmp_path, lines) == [("TS604", 9, 10, "spec.image")]


def test_ts604_inherited_image_points_at_the_runtime_reference(tmp_path: Path) -> None:
    policy = "spec: {policy: {images: {requireDigest: true}}}\n"
    assert policy_findings(tmp_path, edit({9: None}), policy) == [("TS604", 8, 12, "spec.runtime")]


def test_ts604_sharding_image_is_checked_too(tmp_path: Path) -> None:
    lines = edit(add=["  data: {source: s3://bucket/data/}"])
    # The project's stage image (the built-in runtime names none) is tagged, not pinned.
    policy = (
        "spec: {defaults: {stageImage: registry.example.com/trainspec:0.1.0}, "
        "policy: {images: {requireDigest: true}}}\n"
    )
    assert policy_findings(tmp_path, lines, policy) == [("TS604", 14, 3, "spec.data")]


def test_ts604_passes_with_a_digest(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, JOB_LINES, "spec: {policy: {images: {requireDigest: true}}}\n") == []


# -- TS605 images.allowedRegistries ---------------------------------------------------------------


def test_ts605_image_from_another_registry(tmp_path: Path) -> None:
    lines = edit({9: "  image: quay.io/acme/train@sha256:" + "b" * 64})
    assert policy_findings(tmp_path, lines) == [("TS605", 9, 10, "spec.image")]


def test_ts605_prefix_must_end_at_a_path_boundary(tmp_path: Path) -> None:
    lines = edit({9: "  image: nvcr.io/nvidia-lookalike/train@sha256:" + "c" * 64})
    assert policy_findings(tmp_path, lines) == [("TS605", 9, 10, "spec.image")]


def test_ts605_passes_for_an_allowed_registry(tmp_path: Path) -> None:
    assert policy_findings(tmp_path, edit({9: "  image: ghcr.io/trainspec/train@sha256:" + "d" * 64})) == []


@pytest.mark.parametrize(
    ("image", "full"),
    [
        ("pytorch/pytorch:2.1", "docker.io/pytorch/pytorch:2.1"),
        ("ubuntu", "docker.io/library/ubuntu"),
        ("nvcr.io/nvidia/pytorch:25.01-py3", "nvcr.io/nvidia/pytorch:25.01-py3"),
        ("localhost/train:1", "localhost/train:1"),
        ("registry:5000/train:1", "registry:5000/train:1"),
    ],
)
def test_image_registry_name(image: str, full: str) -> None:
    assert image_registry_name(image) == full


@pytest.mark.parametrize(
    ("image", "prefixes", "allowed"),
    [
        ("pytorch/pytorch:2.1", ["docker.io/pytorch"], True),
        ("pytorch/pytorch:2.1", ["docker.io/pytorch/"], True),
        ("pytorch/pytorch:2.1", ["docker.io/library"], False),
        ("nvcr.io/nvidia/pytorch:25.01", ["nvcr.io"], True),
        ("nvcr.io.evil.com/x:1", ["nvcr.io"], False),
        ("nvcr.io/nvidia-x/y:1", ["nvcr.io/nvidia"], False),
    ],
)
def test_registry_allowed(image: str, prefixes: list[str], allowed: bool) -> None:
    assert registry_allowed(image, prefixes) is allowed


# -- enforced by the commands -----------------------------------------------------------------------


def test_validate_and_compile_refuse_a_violation(run_cli, tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("\n".join(edit({12: None})) + "\n")
    project = tmp_path / "trainspec.yaml"
    project.write_text("apiVersion: trainspec.dev/v1alpha1\nkind: Project\nspec: {policy: {requireQueue: true}}\n")
    code, out, _ = run_cli("validate", str(job), "--project", str(project))
    assert code == 1
    assert ":7:1: error[TS600]: spec.queue: the project requires a Kueue queue for every job" in out
    code, out, err = run_cli("compile", str(job), "--project", str(project), "-o", "-")
    assert code == 1 and out == "" and "error[TS600]" in err


def test_python_specs_are_located_at_the_constructor(tmp_path: Path) -> None:
    spec = tmp_path / "job.py"
    spec.write_text(
        textwrap.dedent("""\
        from trainspec import TrainingJob

        job = TrainingJob(
            name="demo", namespace="team-a", runtime="trainspec-torch", nodes=1,
        )
        """)
    )
    project = tmp_path / "trainspec.yaml"
    project.write_text(
        "apiVersion: trainspec.dev/v1alpha1\nkind: Project\n"
        "spec: {policy: {requireQueue: true, requireMaxRunTime: true}}\n"
    )
    found = [
        (d.code, d.line, d.path)
        for d in compile_paths([str(spec)], project=str(project)).diagnostics
        if d.code.startswith("TS6")
    ]
    assert found == [("TS600", 3, "spec.queue"), ("TS601", 3, "spec.maxRunTime")]
