"""Argo CD health checks for the job kinds trainspec compiles, as an ``argocd-cm`` ConfigMap.

Argo CD judges a custom resource's health with a Lua script stored in ``argocd-cm`` under
``resource.customizations.health.<group>_<kind>``. Without one, a TrainJob, RayJob or Kubeflow job
has no health at all: it never counts toward its Application's, which stays Healthy when the job
fails. The scripts live in ``trainspec/gitops/health/`` (each says at its top what it reports for
each state and why); :func:`health_customizations` wraps them in a ConfigMap to apply, or to merge
into an existing ``argocd-cm``. See docs/gitops-health.md.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

from trainspec.k8s import wellknown as W

#: (API group, kind) -> the script in trainspec/gitops/health/ that judges it. The Kubeflow kinds share
#: one: the Training Operator and the MPI operator write the same conditions.
HEALTH_SCRIPTS: dict[tuple[str, str], str] = {
    (W.TRAINER_GROUP, "TrainJob"): "trainjob.lua",
    (W.RAY_GROUP, "RayJob"): "rayjob.lua",
    (W.KUBEFLOW_GROUP, "PyTorchJob"): "kubeflow-job.lua",
    (W.KUBEFLOW_GROUP, "JAXJob"): "kubeflow-job.lua",
    (W.KUBEFLOW_GROUP, "MPIJob"): "kubeflow-job.lua",
}

CONFIGMAP_NAME = "argocd-cm"
NAMESPACE = "argocd"
#: Argo CD reads only the ConfigMap carrying this label pair (its installation manifests set it).
LABELS = {"app.kubernetes.io/name": CONFIGMAP_NAME, "app.kubernetes.io/part-of": "argocd"}

# PyYAML alone: trainspec.compiler.emit has the same dumper style but imports the whole compiler,
# eight times this command's cost. libyaml's dumper when it is built, else PyYAML's.
_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[misc]  # the base is libyaml's dumper when built, else PyYAML's: Any
    """Safe dumper that writes multi-line strings (the scripts) as literal ``|`` blocks."""


def _represent_str(dumper: Any, value: str) -> Any:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def health_key(group: str, kind: str) -> str:
    """The ``argocd-cm`` key of the health check of ``group/kind`` (no ``group_`` for core kinds)."""
    return f"resource.customizations.health.{group}_{kind}" if group else f"resource.customizations.health.{kind}"


def health_script(name: str) -> str:
    """The text of the health script ``name`` (a file name in ``trainspec/gitops/health/``)."""
    return resources.files("trainspec.gitops").joinpath("health", name).read_text(encoding="utf-8")


def health_configmap() -> dict[str, Any]:
    """The ``argocd-cm`` ConfigMap with one health check per job kind, keys sorted."""
    scripts = {name: health_script(name) for name in sorted(set(HEALTH_SCRIPTS.values()))}
    data = {health_key(group, kind): scripts[name] for (group, kind), name in HEALTH_SCRIPTS.items()}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": CONFIGMAP_NAME, "namespace": NAMESPACE, "labels": dict(sorted(LABELS.items()))},
        "data": dict(sorted(data.items())),
    }


def health_customizations() -> str:
    """The ``argocd-cm`` ConfigMap as a YAML document, each script a literal block; the same bytes every time."""
    return yaml.dump(
        health_configmap(),
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 16,
    )


def ignore_differences_key(group: str, kind: str) -> str:
    """The ``argocd-cm`` key of the diff exclusions of ``group/kind``."""
    return f"resource.customizations.ignoreDifferences.{group}_{kind}"


def ignore_differences() -> dict[str, str]:
    """``argocd-cm`` keys: per job kind, the jq paths of the fields Kueue writes (trainspec.gitops.controller_fields).

    With ``RespectIgnoreDifferences=true`` (which trainspec puts on every run object under
    ``--gitops argocd``) a sync sends the live values there instead of undoing Kueue's admission;
    a client-side diff no longer shows Kueue's ``runtimePatches`` entry as drift.
    """
    from trainspec.gitops.controller_fields import controller_fields, jq_path
    from trainspec.k8s.wellknown import COMPILER_PATCH_MANAGER

    paths: dict[tuple[str, str], list[str]] = {
        (W.TRAINER_GROUP, "TrainJob"): [
            f'.spec.runtimePatches[] | select(.manager != "{COMPILER_PATCH_MANAGER}")',
            ".spec.runtimePatches[].time",
        ]
    }
    for key, found in controller_fields().items():
        paths[key] = [jq_path(path) for path in found]
    return {
        ignore_differences_key(group, kind): yaml.dump({"jqPathExpressions": found}, Dumper=_Dumper, sort_keys=False)
        for (group, kind), found in sorted(paths.items())
    }


def argocd_cm() -> str:
    """Everything trainspec's job kinds need in ``argocd-cm``: health checks and Kueue's fields."""
    configmap = health_configmap()
    configmap["data"] = dict(sorted({**configmap["data"], **ignore_differences()}.items()))
    return yaml.dump(configmap, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1 << 16)
