"""The Kueue pre-flight of a TrainJob whose runtime is not known, from the TrainJob alone.

A job on a runtime trainspec does not define (Kubeflow Trainer's ``torch-distributed``, the
runtime most users start with, or any runtime the cluster has) names it by reference only; when
neither the inputs nor the cluster files hold it, the runtime's replicated jobs are unknown. The
TrainJob still gives the shape of its trainer pods: ``trainer.numNodes`` pods (the runtime's count
when unset, at least 1) of ``trainer.resourcesPerNode`` each. That is a lower bound of what
Kueue reserves, so a quota it already exceeds can never admit the job.

What it cannot know, and every finding's note says: pods the runtime adds (initializers, an MPI
launcher), resources the runtime's containers ask for beyond the TrainJob's, and the runtime's
nodeSelector and tolerations. The pods are taken to tolerate every taint, so a flavor is never
refused on the runtime's account; the TrainJob's own runtime patches (nodeSelector, topology
annotations) are applied as Kueue applies them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Severity
from trainspec.k8s.wellknown import NODE
from trainspec.kueue.cluster_files import ClusterQueue
from trainspec.kueue.podsets import PodSet, _pod_patches, _required_terms, pod_requests

#: Stands in for the runtime's tolerations, which are not known: a toleration of every taint.
_ANY_TAINT = {"operator": "Exists"}


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def own_podset(trainjob: Mapping[str, Any]) -> PodSet | None:
    """The trainer PodSet as the TrainJob alone gives it, or None when it gives no resources."""
    trainer = _map(_map(trainjob.get("spec")).get("trainer"))
    resources = trainer.get("resourcesPerNode")
    nodes = trainer.get("numNodes", 1)
    if not isinstance(resources, dict) or not isinstance(nodes, int) or isinstance(nodes, bool):
        return None
    pod: dict[str, Any] = {"containers": [{"name": NODE, "resources": resources}]}
    requests = pod_requests(pod)
    if not requests:
        return None
    annotations: dict[str, str] = {}
    annotation_paths: dict[str, tuple] = {}
    tolerations: list[Any] = []
    for patch, path in _pod_patches(trainjob).get(NODE, []):
        for key, value in _map(_map(patch.get("metadata")).get("annotations")).items():
            annotations[str(key)] = str(value)
            annotation_paths[str(key)] = (*path, "metadata", "annotations", str(key))
        patch_spec = _map(patch.get("spec"))
        if isinstance(patch_spec.get("nodeSelector"), dict):
            pod["nodeSelector"] = {**_map(pod.get("nodeSelector")), **patch_spec["nodeSelector"]}
        if isinstance(patch_spec.get("affinity"), dict):
            pod["affinity"] = patch_spec["affinity"]
        if isinstance(patch_spec.get("tolerations"), list):
            tolerations = list(patch_spec["tolerations"])
    counted_at: tuple = ("spec", "trainer", "numNodes") if "numNodes" in trainer else ("spec", "runtimeRef", "name")
    return PodSet(
        name=NODE,
        count=max(nodes, 0),
        requests=requests,
        node_selector={str(k): str(v) for k, v in _map(pod.get("nodeSelector")).items()},
        tolerations=(*(_map(t) for t in tolerations), _ANY_TAINT),
        affinity_terms=_required_terms(pod),
        annotations=annotations,
        count_path=counted_at,
        resources_path=("spec", "trainer", "resourcesPerNode"),
        annotation_paths=annotation_paths,
    )


def runtime_name(trainjob: Mapping[str, Any]) -> str:
    """The name of the runtime ``trainjob`` refers to, for messages."""
    return str(_map(_map(trainjob.get("spec")).get("runtimeRef")).get("name") or "?")


def partial_note(trainjob: Mapping[str, Any]) -> str:
    """What a finding of the TrainJob-only pre-flight could not count."""
    return (
        f"counted from the TrainJob alone (numNodes x resourcesPerNode): runtime {runtime_name(trainjob)} is in "
        "neither the inputs nor the cluster files, so pods it adds (initializers, an MPI launcher), resources "
        "its containers ask for beyond the TrainJob's, and its nodeSelector and tolerations are not counted"
    )


def not_done_message(trainjob: Mapping[str, Any]) -> tuple[str, str]:
    """(message, hint) of the warning that the pre-flight was not done."""
    name = runtime_name(trainjob)
    message = (
        f"Kueue pre-flight not done: runtime {name} is in neither the inputs nor the cluster files, and the "
        "TrainJob gives no trainer.resourcesPerNode, so nothing tells what its pods ask for"
    )
    hint = (
        f"pass the cluster's runtimes with --cluster (kubectl get clustertrainingruntime {name} -o yaml), or set "
        "the job's resourcesPerNode"
    )
    return message, hint


def from_the_trainjob_alone(check: Any, cq: ClusterQueue, trainjob: Mapping[str, Any]) -> None:
    """The quota math of the pre-flight's ``check`` over the trainer pods the TrainJob gives, each
    finding with the note of what that leaves out; a TS509 warning when it gives too little to count."""
    at: tuple = ("spec", "runtimeRef", "name")
    podset = own_podset(trainjob)
    if podset is None:
        message, hint = not_done_message(trainjob)
        check.add(codes.PREFLIGHT_SKIPPED, message, at, severity=Severity.WARNING, hint=hint)
        return
    start = len(check.out)
    check.check_quota(cq, [podset])
    note = (partial_note(trainjob), at)
    check.out[start:] = [replace(finding, notes=(*finding.notes, note)) for finding in check.out[start:]]


__all__ = ["from_the_trainjob_alone", "not_done_message", "own_podset", "partial_note", "runtime_name"]
