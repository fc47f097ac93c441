"""What the pre-flight says of one PodSet once flavors are assigned: why it never fits (TS514,
TS516), whether a pod fits a node (TS517), whether its topology request matches (TS518).

A part of the pre-flight's checker (:mod:`.preflight`), composed into it, not inherited: the checker hands it
the ``cluster`` and its ``add``, so findings land in the checker's list in order.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Related, Severity
from trainspec.k8s.wellknown import NODE_ALLOCATABLE, PODSET_SLICE_SIZE_ANNOTATION
from trainspec.kueue.assigner import Outcome, PodSetResult
from trainspec.kueue.cluster_files import Cluster, ClusterQueue
from trainspec.kueue.fungibility import missed
from trainspec.kueue.quota import TOPOLOGY_KEYS, fmt

_REQUIRED, _PREFERRED, _UNCONSTRAINED, _SLICE, _LAYERS = TOPOLOGY_KEYS
_SLICE_SIZE = PODSET_SLICE_SIZE_ANNOTATION

_DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() also takes '²', which int() refuses


def label_int(text: object, limit: int) -> int | None:
    """A label or annotation value as a decimal integer in 1..``limit``, else None.

    The digits are counted before they are converted, so any value is read in linear time.
    """
    if not isinstance(text, str) or not _DIGITS.fullmatch(text):
        return None
    digits = text.lstrip("0")
    if not digits or len(digits) > len(str(limit)):
        return None
    value = int(digits)
    return value if value <= limit else None


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class Record(Protocol):
    """Where the checks put a finding: the pre-flight's ``add``."""

    def __call__(
        self,
        code: Code,
        message: str,
        path: tuple,
        *,
        related: tuple[Related, ...] = (),
        hint: str | None = None,
        severity: Severity = Severity.ERROR,
    ) -> None: ...


class PodSetFindings:
    """The per-PodSet checks of the pre-flight, against ``cluster``, each finding handed to ``add``."""

    def __init__(self, cluster: Cluster, add: Record) -> None:
        self.cluster = cluster
        self.add = add

    def assigner_misses(self, cq: ClusterQueue, outcome: Outcome) -> None:
        """TS514 (warning): the quota holds the job, Kueue's scan of the flavors never gets there."""
        found = missed(cq, outcome)
        if found is None:
            return
        result, message = found
        written = dict(cq.fungibility.written)
        policy_at = ("spec", "flavorFungibility", "whenCanBorrow") if "whenCanBorrow" in written else ("spec",)
        policy = cq.obj.related(
            f"flavorFungibility of ClusterQueue {cq.name}: whenCanBorrow "
            f"{cq.fungibility.when_can_borrow}"
            f"{'' if written else ' (the default)'}",
            policy_at,
        )
        flavors = cq.obj.related("the flavors, in the order Kueue tries them", cq.groups[result.missing[0]].path)
        self.add(
            codes.NEVER_ADMITTED,
            message,
            result.podset.count_path,
            severity=Severity.WARNING,
            related=(policy, flavors),
            hint="order the flavors so that the PodSets' first fits leave room for the rest, set "
            "flavorFungibility.whenCanBorrow: MayStopSearch (a PodSet stopped before the last flavor moves "
            "on at the next try), or give the flavors room wherever the PodSets land; on a busy cluster "
            "other workloads' usage and preemption (not known offline) can change the order",
        )

    def group_failure(self, cq: ClusterQueue, result: PodSetResult, index: int) -> None:
        podset = result.podset
        rejected = [
            self.cluster.flavors[f].obj.related(f"flavor {f}: {why}", at)
            if f in self.cluster.flavors
            else cq.obj.related(f"flavor {f}: {why}")
            for f, why, at in result.rejected.get(index, [])
        ]
        short = result.short.get(index, [])
        if not short:
            self.add(
                codes.NO_FLAVOR_ACCEPTS,
                f"no flavor of ClusterQueue {cq.name} accepts PodSet {podset.name}: "
                + "; ".join(f"{f}: {why}" for f, why, _ in result.rejected.get(index, [])),
                podset.resources_path,
                related=tuple(rejected),
                hint="make the runtime's nodeSelector/tolerations match a flavor of the queue",
            )
            return
        first = short[0]
        notes = [
            cq.obj.related(
                f"flavor {s.flavor}: needs {fmt(s.needs)} {s.resource}, at most "
                f"{fmt(s.capacity.maximum)} ({s.capacity.explanation})",
                (*s.capacity.quota.path, "nominalQuota") if s.capacity.quota else (),
            )
            for s in short
        ]
        self.add(
            codes.NEVER_ADMITTED,
            f"PodSet {podset.name} ({podset.count} pods) can never be admitted: needs "
            f"{fmt(first.needs)} {first.resource} on flavor {first.flavor}; ClusterQueue {cq.name} can reach "
            f"at most {fmt(first.capacity.maximum)} ({first.capacity.explanation})",
            podset.count_path,
            related=(*notes, *rejected),
            hint="run fewer or smaller pods, raise the nominal quota, or join a cohort that can lend the rest",
        )

    def check_pod_fit(self, cq: ClusterQueue, result: PodSetResult) -> None:
        podset = result.podset
        for index, flavor_name in result.flavors.items():
            flavor = self.cluster.flavors[flavor_name]
            for resource in cq.groups[index].covered:
                need = podset.requests.get(resource)
                if not need:
                    continue
                if flavor.node_shape is not None:
                    has = flavor.node_shape.get(resource)
                    if has is not None and need > has:
                        self.add(
                            codes.POD_LARGER_THAN_NODE,
                            f"one pod of PodSet {podset.name} needs {fmt(need)} {resource}; a node of "
                            f"flavor {flavor.name} has {fmt(has)}: the pods can never be scheduled",
                            podset.resources_path,
                            related=(
                                flavor.obj.related(
                                    f"node shape of flavor {flavor.name}", ("metadata", "annotations", NODE_ALLOCATABLE)
                                ),
                            ),
                        )
                    continue
                quota = next(
                    (fq.quotas.get(resource) for fq in cq.groups[index].flavors if fq.flavor == flavor_name), None
                )
                if quota is not None and need > quota.nominal:
                    self.add(
                        codes.POD_LARGER_THAN_NODE,
                        f"one pod of PodSet {podset.name} needs {fmt(need)} {resource}, more than the "
                        f"nominal quota of flavor {flavor.name} in ClusterQueue {cq.name} "
                        f"({fmt(quota.nominal)}): it only runs on borrowed quota",
                        podset.resources_path,
                        severity=Severity.WARNING,
                        related=(cq.obj.related("nominal quota", (*quota.path, "nominalQuota")),),
                        hint=f"declare the node shape in annotation {NODE_ALLOCATABLE} on "
                        f"ResourceFlavor {flavor.name} to check that a pod fits a node",
                    )

    def check_topology(self, result: PodSetResult) -> None:
        podset = result.podset
        notes = podset.annotations
        modes = [key for key in (_REQUIRED, _PREFERRED, _UNCONSTRAINED) if key in notes]
        at = podset.annotation_paths.get((modes or [_SLICE])[0], podset.resources_path)
        if len(modes) > 1:
            self.add(
                codes.TOPOLOGY_MISMATCH, f"PodSet {podset.name} sets {' and '.join(modes)}; at most one is allowed", at
            )
        if (_SLICE in notes) != (_SLICE_SIZE in notes):
            self.add(codes.TOPOLOGY_MISMATCH, f"PodSet {podset.name}: {_SLICE} and {_SLICE_SIZE} need each other", at)
        size = notes.get(_SLICE_SIZE)
        if size is not None and label_int(size, podset.count) is None:
            self.add(
                codes.TOPOLOGY_MISMATCH,
                f"PodSet {podset.name}: slice size {size!r} must be an integer from 1 to the PodSet's "
                f"{podset.count} pods",
                at,
            )
        levels = [(notes[key], key) for key in (_REQUIRED, _PREFERRED, _SLICE) if key in notes]
        try:
            layers = json.loads(notes.get(_LAYERS, "[]"))
            levels += [(str(_map(layer).get("topology")), _LAYERS) for layer in layers]
        except (ValueError, TypeError):
            self.add(codes.TOPOLOGY_MISMATCH, f"PodSet {podset.name}: {_LAYERS} is not a JSON list", at)
        for flavor_name in dict.fromkeys(result.flavors.values()):
            flavor = self.cluster.flavors[flavor_name]
            if not flavor.topology_name:
                continue
            topology = self.cluster.topologies.get(flavor.topology_name)
            if topology is None:
                self.add(
                    codes.TOPOLOGY_MISMATCH,
                    f"ResourceFlavor {flavor.name} uses Topology {flavor.topology_name!r}, which does not exist",
                    at,
                    related=(flavor.obj.related("topologyName set here", ("spec", "topologyName")),),
                )
                continue
            for level, key in levels:
                if level not in topology.levels:
                    self.add(
                        codes.TOPOLOGY_MISMATCH,
                        f"PodSet {podset.name} asks for topology level {level!r} ({key}), which "
                        f"Topology {topology.name} of flavor {flavor.name} does not have "
                        f"(levels: {', '.join(topology.levels)})",
                        podset.annotation_paths.get(key, at),
                        related=(topology.obj.related(f"levels of Topology {topology.name}", ("spec", "levels")),),
                    )


__all__ = ["PodSetFindings", "label_int"]
