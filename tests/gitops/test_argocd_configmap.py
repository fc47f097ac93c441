"""``health_customizations()`` and ``trainspec gitops argocd-health``: the argocd-cm snippet.

The ConfigMap is what a user applies or merges into ``argocd-cm``: its name, namespace and labels
are the ones Argo CD reads, it holds one key per job kind, and each value is the package's script,
byte for byte, as a literal block a reader can review in a pull request.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_cli
from trainspec.cli.main import main
from trainspec.gitops.argocd import HEALTH_SCRIPTS, health_customizations

HEALTH_DIR = ROOT / "trainspec" / "gitops" / "health"
KEYS = {
    "resource.customizations.health.trainer.kubeflow.org_TrainJob": "trainjob.lua",
    "resource.customizations.health.ray.io_RayJob": "rayjob.lua",
    "resource.customizations.health.kubeflow.org_PyTorchJob": "kubeflow-job.lua",
    "resource.customizations.health.kubeflow.org_JAXJob": "kubeflow-job.lua",
    "resource.customizations.health.kubeflow.org_MPIJob": "kubeflow-job.lua",
}


def test_the_configmap_is_argocd_cm_with_one_key_per_kind() -> None:
    configmap = yaml.safe_load(health_customizations())
    assert configmap["apiVersion"] == "v1" and configmap["kind"] == "ConfigMap"
    assert configmap["metadata"] == {
        "name": "argocd-cm",
        "namespace": "argocd",
        "labels": {"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"},
    }
    assert set(configmap["data"]) == set(KEYS) and len(HEALTH_SCRIPTS) == len(KEYS)


@pytest.mark.parametrize(("key", "name"), KEYS.items())
def test_each_script_is_the_package_file_byte_for_byte(key: str, name: str) -> None:
    text = health_customizations()
    assert yaml.safe_load(text)["data"][key].encode("utf-8") == (HEALTH_DIR / name).read_bytes()
    # A literal block: the script reads in the ConfigMap as it does in its file.
    assert f"\n  {key}: |\n    -- Argo CD health check for " in text


def test_the_output_is_the_same_every_time_with_keys_sorted() -> None:
    text = health_customizations()
    assert text == health_customizations()
    keys = [line.split(":", 1)[0].strip() for line in text.splitlines() if line.startswith("  resource.")]
    assert keys == sorted(KEYS)
    assert text.startswith("apiVersion: v1\nkind: ConfigMap\nmetadata:\n")


def test_the_scripts_are_fit_for_a_literal_block() -> None:
    """No tabs, trailing blanks or missing final newline: any of them makes YAML quote the whole script."""
    for path in sorted(HEALTH_DIR.glob("*.lua")):
        text = path.read_text(encoding="utf-8")
        assert text.endswith("\n") and not text.endswith("\n\n"), path.name
        assert all(line == line.rstrip() and "\t" not in line for line in text.splitlines()), path.name
    assert {path.name for path in HEALTH_DIR.glob("*.lua")} == set(KEYS.values())


def test_the_docs_show_the_real_output_trimmed() -> None:
    """docs/gitops-health.md's console block: every line it shows is in the output, in order."""
    doc = (ROOT / "docs" / "gitops-health.md").read_text(encoding="utf-8")
    block = doc.split("```console\n", 1)[1].split("```", 1)[0].splitlines()
    assert block[0] == "$ trainspec gitops argocd-health"
    shown = [line for line in block[1:] if line.strip() != "..."]
    output = iter(health_customizations().splitlines())
    missing = [line for line in shown if line not in output]  # `in` on an iterator consumes it: order counts
    assert missing == [] and len(shown) > 15


def test_the_command_prints_the_configmap(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gitops", "argocd-health"]) == 0
    captured = capsys.readouterr()
    assert captured.out == health_customizations() and captured.err == ""


def test_the_command_as_a_user_runs_it() -> None:
    done = run_cli("gitops", "argocd-health")
    assert done.returncode == 0, done.stderr
    assert done.stdout == health_customizations()
    unknown = run_cli("gitops", "flux-health")
    assert unknown.returncode == 2 and "invalid choice: 'flux-health'" in unknown.stderr


def test_the_renderer_is_imported_only_when_the_command_runs() -> None:
    code = (
        "import sys; from trainspec.cli.main import build_parser; "
        "build_parser('gitops').parse_args(['gitops', 'argocd-health']); "
        "print(sorted(m for m in sys.modules if m.startswith('trainspec.gitops')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_an_installed_package_ships_the_scripts(tmp_path: Path) -> None:
    """Lay the package out as a wheel installs it (setuptools' build_py applies the pyproject
    ``package-data``; offline) and run the command from that copy."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "trainspec", src / "trainspec", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py", "--build-lib", str(site)],
        cwd=src,
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert sorted(p.name for p in (site / "trainspec" / "gitops" / "health").glob("*.lua")) == sorted(
        set(KEYS.values())
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)

    def run(*args: str) -> str:
        return subprocess.run(
            [sys.executable, *args], capture_output=True, text=True, cwd=tmp_path, env=env, check=True, timeout=60
        ).stdout

    assert run("-c", "import trainspec.gitops.argocd as a; print(a.__file__)").startswith(str(site))
    assert run("-m", "trainspec", "gitops", "argocd-health") == health_customizations()
