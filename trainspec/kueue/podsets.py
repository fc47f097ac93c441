"""The PodSets Kueue builds for a TrainJob: one per replicatedJob of the runtime's JobSet.

Kueue builds the child JobSet in memory from the runtime plus the TrainJob's overrides, then
turns each replicatedJob into a PodSet of ``replicas x min(parallelism, completions)`` pods:

* the trainer job (ancestor label ``trainer``) runs ``numNodes`` pods (TrainJob
  ``spec.trainer.numNodes``, else the runtime's ``mlPolicy.numNodes``, else 1);
* MPI: ``launcher`` is one pod and ``node`` ``numNodes - 1`` when ``runLauncherAsNode``
  (``numNodes`` otherwise);
* other jobs (the sharding stage ``dataset-initializer``, a ``model-initializer``...) keep
  their Job template's parallelism/completions (1 by default). Initializer quota is reserved
  at admission like any other PodSet.

Per-pod requests follow Kueue: the maximum of (sum of containers plus restartable init
containers) and each plain init container (plus the sidecars started before it); pod-level
``spec.resources`` replaces the container sum for the resources it names; ``overhead`` is
added; a limit stands in for a missing request. ``trainer.resourcesPerNode`` is merged key by
key into container ``node`` (Trainer >= 2.3) or replaces its resources (earlier releases).
Runtime patches (``runtimePatches``, Trainer >= 2.2) and ``podTemplateOverrides`` (2.1) add
pod labels, annotations, nodeSelector, tolerations and affinity; Kueue's own patch is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from trainspec.k8s.wellknown import (
    ANCESTOR_LABEL as ANCESTOR,
    ANCESTOR_MODEL,
    ANCESTOR_TRAINER,
    DATASET_INITIALIZER,
    KUEUE_PATCH_MANAGER as KUEUE_MANAGER,
    LAUNCHER,
    NODE,
)
from trainspec.kueue.cluster_files import quantity

#: Kueue's limit on PodSets per Workload (so replicatedJobs per JobSet).
MAX_PODSETS = 18
_PATCH_RJOBS = ("trainingRuntimeSpec", "template", "spec", "replicatedJobs")


@dataclass(frozen=True)
class PodSet:
    """One PodSet: its pods, what one pod requests and where it may be scheduled."""

    name: str
    count: int
    #: Requests of ONE pod, exact, in base units (cores, bytes, devices).
    requests: dict[str, Fraction]
    node_selector: dict[str, str]
    tolerations: tuple[Mapping[str, Any], ...]
    #: Required node-affinity terms (ORed); each is a tuple of matchExpressions (ANDed).
    affinity_terms: tuple[tuple[Mapping[str, Any], ...], ...]
    annotations: dict[str, str]
    #: TrainJob field paths that decide this PodSet's size, its resources and its annotations.
    count_path: tuple
    resources_path: tuple
    annotation_paths: dict[str, tuple]

    def total(self) -> dict[str, Fraction]:
        """What the whole PodSet requests (count x one pod)."""
        return {name: value * self.count for name, value in self.requests.items()}


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _resources_of(container: Mapping[str, Any]) -> dict[str, Fraction]:
    """A container's requests, with limits standing in for missing requests (as in Kubernetes)."""
    resources = _map(container.get("resources"))
    out: dict[str, Fraction] = {}
    for source in (_map(resources.get("limits")), _map(resources.get("requests"))):
        for name, value in source.items():
            try:
                out[str(name)] = quantity(value)
            except ValueError:
                continue  # an invalid quantity is a CRD (TS500) finding, not a quota one
    return out


def _add(into: dict[str, Fraction], more: Mapping[str, Fraction]) -> None:
    for name, value in more.items():
        into[name] = into.get(name, Fraction(0)) + value


def pod_requests(pod: Mapping[str, Any]) -> dict[str, Fraction]:
    """What one pod of this pod spec requests, the way Kueue counts it."""
    main: dict[str, Fraction] = {}
    for container in _list(pod.get("containers")):
        _add(main, _resources_of(_map(container)))
    sidecars: dict[str, Fraction] = {}
    peaks: list[dict[str, Fraction]] = []
    for init in _list(pod.get("initContainers")):
        init = _map(init)
        if init.get("restartPolicy") == "Always":  # a sidecar: runs alongside everything after it
            _add(sidecars, _resources_of(init))
            continue
        peak = dict(sidecars)
        _add(peak, _resources_of(init))
        peaks.append(peak)
    _add(main, sidecars)
    total = dict(main)
    for peak in peaks:
        for name, value in peak.items():
            total[name] = max(total.get(name, Fraction(0)), value)
    total.update(_resources_of(pod))  # pod-level resources, where set, are the pod's request
    for name, value in _map(pod.get("overhead")).items():
        try:
            _add(total, {str(name): quantity(value)})
        except ValueError:
            continue
    return dict(sorted(total.items()))


def _pod_patches(trainjob: Mapping[str, Any]) -> dict[str, list[tuple[dict[str, Any], tuple]]]:
    """Pod-template patches by replicatedJob name, in application order, with their paths."""
    spec = _map(trainjob.get("spec"))
    out: dict[str, list[tuple[dict[str, Any], tuple]]] = {}
    for i, patch in enumerate(_list(spec.get("runtimePatches"))):
        if _map(patch).get("manager") == KUEUE_MANAGER:
            continue  # Kueue fills its own entry at admission; it is empty in Git
        node: Any = patch
        for key in _PATCH_RJOBS:
            node = _map(node).get(key)
        for j, rjob in enumerate(_list(node)):
            template = _map(_map(_map(_map(rjob).get("template")).get("spec")).get("template"))
            path = ("spec", "runtimePatches", i, *_PATCH_RJOBS, j, "template", "spec", "template")
            out.setdefault(str(_map(rjob).get("name")), []).append((template, path))
    for i, override in enumerate(_list(spec.get("podTemplateOverrides"))):  # Trainer 2.1
        override = _map(override)
        template = {"metadata": _map(override.get("metadata")), "spec": _map(override.get("spec"))}
        for target in _list(override.get("targetJobs")):
            out.setdefault(str(_map(target).get("name")), []).append((template, ("spec", "podTemplateOverrides", i)))
    return out


def _counts(trainjob: Mapping[str, Any], runtime_spec: Mapping[str, Any]) -> tuple[int, Mapping[str, Any] | None]:
    policy = _map(runtime_spec.get("mlPolicy"))
    nodes = _int(_map(_map(trainjob.get("spec")).get("trainer")).get("numNodes"), _int(policy.get("numNodes"), 1))
    return nodes, policy.get("mpi") if isinstance(policy.get("mpi"), dict) else None


def trainjob_podsets(
    trainjob: Mapping[str, Any], runtime: Mapping[str, Any], *, merge_resources: bool = True
) -> list[PodSet]:
    """The PodSets of ``trainjob`` on ``runtime`` (both manifest dicts), in replicatedJob order.

    ``merge_resources`` is Trainer >= 2.3 behaviour for ``trainer.resourcesPerNode``; pass
    False for 2.1/2.2 (the job's resources replace the runtime container's).
    """
    spec = _map(trainjob.get("spec"))
    trainer = _map(spec.get("trainer"))
    runtime_spec = _map(runtime.get("spec"))
    nodes, mpi = _counts(trainjob, runtime_spec)
    launcher_as_node = bool(mpi and mpi.get("runLauncherAsNode"))
    patches = _pod_patches(trainjob)
    count_at_job = "numNodes" in trainer
    out: list[PodSet] = []
    rjobs = _list(_map(_map(runtime_spec.get("template")).get("spec")).get("replicatedJobs"))
    for rjob in map(_map, rjobs):
        name = str(rjob.get("name", ""))
        job_template = _map(rjob.get("template"))
        job_spec = _map(job_template.get("spec"))
        ancestor = _map(_map(job_template.get("metadata")).get("labels")).get(ANCESTOR)
        template = _map(job_spec.get("template"))
        pod = dict(_map(template.get("spec")))
        is_trainer = ancestor == ANCESTOR_TRAINER
        gets_resources = is_trainer or (mpi is not None and name == NODE and launcher_as_node)

        count_path: tuple = ("spec", "runtimeRef", "name")
        if mpi is not None and name == LAUNCHER:
            count = 1
        elif mpi is not None and name == NODE:
            count = nodes - 1 if launcher_as_node else nodes
            count_path = ("spec", "trainer", "numNodes") if count_at_job else count_path
        elif is_trainer:
            count = nodes
            count_path = ("spec", "trainer", "numNodes") if count_at_job else count_path
        else:
            parallelism = _int(job_spec.get("parallelism"), 1)
            completions = _int(job_spec.get("completions"), parallelism)
            count = min(parallelism, completions)
            if ancestor in (DATASET_INITIALIZER, ANCESTOR_MODEL):
                count_path = ("spec", "initializer", ancestor.split("-")[0])
        count *= _int(rjob.get("replicas"), 1)

        resources_path: tuple = ("spec", "runtimeRef", "name")
        if gets_resources and isinstance(trainer.get("resourcesPerNode"), dict):
            pod["containers"] = [
                _with_job_resources(_map(c), trainer["resourcesPerNode"], merge_resources)
                for c in _list(pod.get("containers"))
            ]
            resources_path = ("spec", "trainer", "resourcesPerNode")

        labels = dict(_map(_map(template.get("metadata")).get("labels")))
        annotations = {str(k): str(v) for k, v in _map(_map(template.get("metadata")).get("annotations")).items()}
        annotation_paths = dict.fromkeys(annotations, ("spec", "runtimeRef", "name"))
        for patch, path in patches.get(name, []):
            meta = _map(patch.get("metadata"))
            labels.update(_map(meta.get("labels")))
            for key, value in _map(meta.get("annotations")).items():
                annotations[str(key)] = str(value)
                annotation_paths[str(key)] = (*path, "metadata", "annotations", str(key))
            patch_spec = _map(patch.get("spec"))
            if isinstance(patch_spec.get("nodeSelector"), dict):
                pod["nodeSelector"] = {**_map(pod.get("nodeSelector")), **patch_spec["nodeSelector"]}
            for key in ("tolerations", "affinity"):  # no merge key: a strategic merge replaces them
                if key in patch_spec:
                    pod[key] = patch_spec[key]

        out.append(
            PodSet(
                name=name,
                count=max(count, 0),
                requests=pod_requests(pod),
                node_selector={str(k): str(v) for k, v in _map(pod.get("nodeSelector")).items()},
                tolerations=tuple(_map(t) for t in _list(pod.get("tolerations"))),
                affinity_terms=_required_terms(pod),
                annotations=annotations,
                count_path=count_path,
                resources_path=resources_path,
                annotation_paths=annotation_paths,
            )
        )
    return out


def _with_job_resources(container: dict[str, Any], job: Mapping[str, Any], merge: bool) -> dict[str, Any]:
    if container.get("name") != NODE:
        return container
    if not merge:
        return {**container, "resources": dict(job)}
    current = _map(container.get("resources"))
    merged = {key: {**_map(current.get(key)), **_map(job.get(key))} for key in ("requests", "limits")}
    return {**container, "resources": {k: v for k, v in merged.items() if v}}


def _required_terms(pod: Mapping[str, Any]) -> tuple[tuple[Mapping[str, Any], ...], ...]:
    node_affinity = _map(_map(pod.get("affinity")).get("nodeAffinity"))
    required = _map(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    return tuple(
        tuple(_map(e) for e in _list(_map(term).get("matchExpressions")))
        for term in _list(required.get("nodeSelectorTerms"))
    )


__all__ = ["ANCESTOR", "MAX_PODSETS", "PodSet", "pod_requests", "trainjob_podsets"]
