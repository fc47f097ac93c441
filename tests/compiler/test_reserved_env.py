"""TS303 per framework: a job's env names are reserved only where the runtime's Trainer plugin sets
them (torch: PET_*, mpi/deepspeed: OMPI_MCA_*, jax: JAX_*), exactly those names, not whole prefixes;
trainspec's own TRAINSPEC_* contract names are reserved always. Located at the env key."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import trainspec


def job(runtime: str, env: dict[str, str], secret_env: tuple[str, ...] = ()) -> str:
    lines = "".join(f"    {name}: '1'\n" for name in env)
    secrets = "".join(f"    {name}: {{secret: s, key: k}}\n" for name in secret_env)
    return (
        textwrap.dedent(f"""\
        apiVersion: trainspec.dev/v1alpha1
        kind: TrainingJob
        metadata: {{name: j, namespace: ns}}
        spec:
          runtime: {runtime}
          queue: q
          command: [python, train.py]
        """)
        + ("  env:\n" + lines if env else "")
        + ("  secretEnv:\n" + secrets if secrets else "")
    )


def ts303(tmp_path: Path, text: str) -> list:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    return [d for d in trainspec.validate(path, project=None) if d.code == "TS303"]


NAMES = (
    "PET_NNODES",
    "OMPI_MCA_orte_default_hostfile",
    "JAX_PROCESS_ID",
    "DMLC_TASK_ID",
    "JAX_PLATFORMS",
    "PET_RDZV_BACKEND",
    "OMPI_MCA_btl",
)


@pytest.mark.parametrize(
    ("runtime", "reserved"),
    [
        ("trainspec-torch", {"PET_NNODES"}),
        ("torch-distributed", {"PET_NNODES"}),  # Kubeflow Trainer's own, resolved from the catalog
        ("trainspec-mpi", {"OMPI_MCA_orte_default_hostfile"}),
        ("trainspec-deepspeed", {"OMPI_MCA_orte_default_hostfile"}),
        ("trainspec-jax", {"JAX_PROCESS_ID"}),
    ],
)
def test_reserved_names_follow_the_framework(tmp_path: Path, runtime: str, reserved: set[str]) -> None:
    found = ts303(tmp_path, job(runtime, dict.fromkeys(NAMES, "1")))
    assert {d.path.rsplit(".", 1)[-1] for d in found} == reserved
    assert all(d.is_error for d in found)


def test_the_diagnostic_sits_on_the_env_key_and_names_the_plugin(tmp_path: Path) -> None:
    (found,) = ts303(tmp_path, job("trainspec-torch", {"A": "1", "PET_MASTER_PORT": "1"}))
    assert (found.line, found.column, found.path) == (10, 5, "spec.env.PET_MASTER_PORT")
    assert "torch" in found.message and "webhook" in found.message
    (found,) = ts303(tmp_path, job("trainspec-jax", {"JAX_COORDINATOR_ADDRESS": "1"}))
    assert "JAX plugin" in found.message and "rejects" not in found.message  # Trainer accepts it, then overrides


def test_secret_env_names_count_too(tmp_path: Path) -> None:
    (found,) = ts303(tmp_path, job("trainspec-torch", {}, secret_env=("PET_MASTER_ADDR",)))
    assert found.path == "spec.secretEnv.PET_MASTER_ADDR"


def test_trainspec_contract_names_are_reserved_for_every_framework(tmp_path: Path) -> None:
    for runtime in ("trainspec-torch", "trainspec-jax", "no-such-runtime"):
        (found,) = ts303(tmp_path, job(runtime, {"TRAINSPEC_CHECKPOINT_DIR": "/x"}))
        assert found.path == "spec.env.TRAINSPEC_CHECKPOINT_DIR", runtime


def test_an_unknown_runtime_reserves_no_framework_names(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(job("no-such-runtime", {"PET_NNODES": "1"}))
    codes = {d.code for d in trainspec.validate(path, project=None)}
    assert "TS303" not in codes and "TS305" in codes
