"""Fields a controller writes into a job's spec after creation, per kind: a GitOps sync leaves them alone.

Kueue merges the admitted flavor into each pod set's template when it admits a job (node
selectors, tolerations, labels and annotations, scheduling gates) and restores them when it
suspends it. Where the template sits in a map, server-side apply merges Kueue's keys with
trainspec's. Where it sits in an *atomic* list (KubeRay's ``workerGroupSpecs``) or the field is
an atomic list itself (``tolerations``), an apply of trainspec's manifest would replace Kueue's
values. So:

* Flux: run objects carry ``kustomize.toolkit.fluxcd.io/ssa: IfNotPresent``: a run is created once
  and never updated (a change of what it runs is a new run anyway, :mod:`trainspec.compiler.runs`).
* Argo CD: these paths are ``ignoreDifferences`` (jq paths) in the ``argocd-cm`` snippet, and run
  objects carry ``RespectIgnoreDifferences=true``, so a sync sends the live values for them.

Paths are tuples; ``"*"`` stands for every element of a list or every value of a map.
"""

from __future__ import annotations

from trainspec.k8s import wellknown as W

Path = tuple[str, ...]

#: What Kueue writes into a pod template it admits (jobframework's PodSetInfo merge).
_TEMPLATE_FIELDS: tuple[Path, ...] = (
    ("metadata", "labels"),
    ("metadata", "annotations"),
    ("spec", "nodeSelector"),
    ("spec", "tolerations"),
    ("spec", "schedulingGates"),
)

#: Where each kind keeps the pod templates Kueue admits.
_TEMPLATES: dict[tuple[str, str], tuple[Path, ...]] = {
    (W.RAY_GROUP, "RayJob"): (
        ("spec", "rayClusterSpec", "headGroupSpec", "template"),
        ("spec", "rayClusterSpec", "workerGroupSpecs", "*", "template"),
    ),
    (W.KUBEFLOW_GROUP, "PyTorchJob"): (("spec", "pytorchReplicaSpecs", "*", "template"),),
    (W.KUBEFLOW_GROUP, "JAXJob"): (("spec", "jaxReplicaSpecs", "*", "template"),),
    (W.KUBEFLOW_GROUP, "MPIJob"): (("spec", "mpiReplicaSpecs", "*", "template"),),
}


def controller_fields() -> dict[tuple[str, str], tuple[Path, ...]]:
    """``(group, kind) -> paths`` of the fields Kueue writes into a run object's pod templates.

    TrainJob has none: Kueue writes its own ``runtimePatches`` entry, a list keyed by ``manager``
    that server-side apply merges entry by entry.
    """
    return {
        key: tuple((*template, *field) for template in templates for field in _TEMPLATE_FIELDS)
        for key, templates in _TEMPLATES.items()
    }


def jq_path(path: Path) -> str:
    """``("spec", "a", "*", "b")`` -> ``.spec.a[].b`` (a map's ``*`` is ``[]`` in jq as well)."""
    return "".join("[]" if part == "*" else f".{part}" for part in path)


__all__ = ["controller_fields", "jq_path"]
