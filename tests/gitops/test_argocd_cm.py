"""``trainspec gitops argocd-cm``: the health checks and, per job kind, Kueue's fields as ignoreDifferences."""

from __future__ import annotations

import contextlib
import io

import yaml

from trainspec.cli.main import main
from trainspec.gitops.argocd import argocd_cm, health_configmap
from trainspec.gitops.controller_fields import controller_fields, jq_path


def test_the_configmap_holds_the_health_checks_and_the_ignored_differences() -> None:
    configmap = yaml.safe_load(argocd_cm())
    data = configmap["data"]
    assert configmap["metadata"]["name"] == "argocd-cm"
    health = health_configmap()["data"]
    assert {k: v for k, v in data.items() if ".health." in k} == health
    ignored = {k: yaml.safe_load(v)["jqPathExpressions"] for k, v in data.items() if ".ignoreDifferences." in k}
    assert set(ignored) == {
        "resource.customizations.ignoreDifferences.trainer.kubeflow.org_TrainJob",
        "resource.customizations.ignoreDifferences.ray.io_RayJob",
        "resource.customizations.ignoreDifferences.kubeflow.org_PyTorchJob",
        "resource.customizations.ignoreDifferences.kubeflow.org_JAXJob",
        "resource.customizations.ignoreDifferences.kubeflow.org_MPIJob",
    }
    assert (
        ".spec.rayClusterSpec.workerGroupSpecs[].template.spec.nodeSelector"
        in ignored["resource.customizations.ignoreDifferences.ray.io_RayJob"]
    )
    assert ignored["resource.customizations.ignoreDifferences.trainer.kubeflow.org_TrainJob"][0] == (
        '.spec.runtimePatches[] | select(.manager != "trainspec.dev/compiler")'
    )
    for (group, kind), paths in controller_fields().items():
        assert ignored[f"resource.customizations.ignoreDifferences.{group}_{kind}"] == [jq_path(p) for p in paths]
    assert list(data) == sorted(data)


def test_the_command_prints_it() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["gitops", "argocd-cm"]) == 0
    assert out.getvalue() == argocd_cm()


def test_jq_paths() -> None:
    assert jq_path(("spec", "pytorchReplicaSpecs", "*", "template")) == ".spec.pytorchReplicaSpecs[].template"
