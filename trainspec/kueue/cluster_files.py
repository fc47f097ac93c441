"""The Kueue configuration in the cluster files, read with positions (see :mod:`.located`).

:func:`load_cluster` picks out the Kueue objects a pre-flight needs, from
``kueue.x-k8s.io/v1beta2`` or ``v1beta1`` (``spec.cohort`` there is ``spec.cohortName`` here),
plus core ``Namespace`` objects for the namespace selectors.

Node shapes: Kueue itself only knows node capacity with TAS, from live Nodes. A GitOps repo
has no Nodes, so a ResourceFlavor may declare the allocatable resources of one of its nodes in
the annotation ``trainspec.dev/node-allocatable`` (``"cpu=192,memory=2Ti,nvidia.com/gpu=8"``).
The annotation is harmless on a cluster and lets the pre-flight check that one pod fits a node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from os import PathLike
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.diagnostics import Diagnostic, Severity
from trainspec.dsl.framework.quantity import quantity_value
from trainspec.k8s.wellknown import KUEUE_GROUP, KUEUE_VERSION, KUEUE_VERSIONS, METADATA_NAME_LABEL, NODE_ALLOCATABLE
from trainspec.kueue.located import Located, read_inputs


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# -- the Kueue objects ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Quota:
    """One resource of one flavor in a ClusterQueue or Cohort (exact values, base units)."""

    resource: str
    nominal: Fraction
    borrowing_limit: Fraction | None
    lending_limit: Fraction | None
    path: tuple


@dataclass(frozen=True)
class FlavorQuotas:
    flavor: str
    quotas: dict[str, Quota]
    path: tuple


@dataclass(frozen=True)
class ResourceGroup:
    """Resources that must all come from the same flavor, and the flavors to try, in order."""

    covered: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]
    path: tuple


MAY_STOP_SEARCH = "MayStopSearch"
TRY_NEXT_FLAVOR = "TryNextFlavor"
#: v1beta1 spellings (Kueue <= 0.14 knows only these) and the v1beta2 value they convert to.
LEGACY_FUNGIBILITY = {"Borrow": MAY_STOP_SEARCH, "Preempt": MAY_STOP_SEARCH}


@dataclass(frozen=True)
class Fungibility:
    """``spec.flavorFungibility`` of a ClusterQueue, with the CRD's defaults filled in.

    ``when_can_borrow``/``when_can_preempt`` hold the v1beta2 meaning (``Borrow`` and
    ``Preempt`` read as ``MayStopSearch``, as Kueue's conversion does); ``written`` keeps the
    fields exactly as the file spells them, for the rules that depend on the Kueue version.
    """

    when_can_borrow: str = MAY_STOP_SEARCH
    when_can_preempt: str = TRY_NEXT_FLAVOR
    preference: str | None = None
    written: tuple[tuple[str, str], ...] = ()

    @property
    def borrow_tries_next(self) -> bool:
        """``whenCanBorrow: TryNextFlavor``: a flavor that needs borrowing does not end the search."""
        return self.when_can_borrow == TRY_NEXT_FLAVOR


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    cohort: str | None
    cohort_path: tuple
    #: None = the field is absent, which selects no namespace at all.
    namespace_selector: Mapping[str, Any] | None
    groups: tuple[ResourceGroup, ...]
    stop_policy: str | None
    obj: Located
    fungibility: Fungibility = Fungibility()


@dataclass(frozen=True)
class Cohort:
    name: str
    parent: str | None
    groups: tuple[ResourceGroup, ...]
    obj: Located | None  # None: a cohort only named by ClusterQueues (no quota of its own)


@dataclass(frozen=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str | None
    stop_policy: str | None
    obj: Located


@dataclass(frozen=True)
class ResourceFlavor:
    name: str
    node_labels: dict[str, str]
    node_taints: tuple[Mapping[str, Any], ...]
    tolerations: tuple[Mapping[str, Any], ...]
    topology_name: str | None
    #: Allocatable resources of one node (annotation ``trainspec.dev/node-allocatable``).
    node_shape: dict[str, Fraction] | None
    obj: Located


@dataclass(frozen=True)
class Topology:
    name: str
    levels: tuple[str, ...]
    obj: Located


@dataclass(frozen=True)
class Namespace:
    name: str
    #: Labels including the automatic ``kubernetes.io/metadata.name``.
    labels: dict[str, str]
    obj: Located


@dataclass
class Cluster:
    """The Kueue configuration found in the cluster files, by name."""

    cluster_queues: dict[str, ClusterQueue] = field(default_factory=dict)
    local_queues: dict[tuple[str, str], LocalQueue] = field(default_factory=dict)
    flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    priority_classes: dict[str, Located] = field(default_factory=dict)
    cohorts: dict[str, Cohort] = field(default_factory=dict)
    topologies: dict[str, Topology] = field(default_factory=dict)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    #: Every object of the cluster files (Kueue or not), for the CRD check.
    objects: list[Located] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)

    def cohort(self, name: str) -> Cohort:
        """The named cohort; one only named by ClusterQueues is implicit (no quota, no parent)."""
        return self.cohorts.get(name) or Cohort(name, None, (), None)


def quantity(value: Any) -> Fraction:
    """A quantity field (``32``, ``"3Ti"``, ``"500m"``) as an exact number; raise ValueError.

    The package's one parser (:mod:`trainspec.dsl.framework.quantity`): bounded like every other quantity.
    """
    return quantity_value(value)


def load_cluster(paths: Iterable[str | PathLike[str]]) -> Cluster:
    """Read the cluster files under ``paths`` and index their Kueue objects (first definition wins)."""
    objects, problems = read_inputs(paths)  # `-`: standard input
    cluster = Cluster(objects=objects, problems=problems)
    for obj in objects:
        group, _, version = obj.api_version.rpartition("/")
        if obj.api_version == "v1" and obj.kind == "Namespace":
            labels = _labels(obj, ("metadata", "labels"))
            labels.setdefault(METADATA_NAME_LABEL, obj.name)
            cluster.namespaces.setdefault(obj.name, Namespace(obj.name, labels, obj))
        elif group == KUEUE_GROUP and version in KUEUE_VERSIONS:
            _add_kueue(cluster, obj, version)
    return cluster


def _add_kueue(cluster: Cluster, obj: Located, version: str) -> None:
    spec = _map(obj.data.get("spec"))
    name = obj.name
    if obj.kind == "ClusterQueue":
        cohort_field = "cohortName" if version == KUEUE_VERSION else "cohort"
        cluster.cluster_queues.setdefault(
            name,
            ClusterQueue(
                name=name,
                cohort=_str(spec.get(cohort_field)),
                cohort_path=("spec", cohort_field),
                namespace_selector=spec["namespaceSelector"]
                if isinstance(spec.get("namespaceSelector"), dict)
                else None,
                groups=_groups(cluster, obj, spec),
                stop_policy=_str(spec.get("stopPolicy")),
                obj=obj,
                fungibility=_fungibility(spec.get("flavorFungibility")),
            ),
        )
    elif obj.kind == "Cohort":
        cluster.cohorts.setdefault(name, Cohort(name, _str(spec.get("parentName")), _groups(cluster, obj, spec), obj))
    elif obj.kind == "LocalQueue":
        namespace = obj.namespace or "default"
        cluster.local_queues.setdefault(
            (namespace, name),
            LocalQueue(namespace, name, _str(spec.get("clusterQueue")), _str(spec.get("stopPolicy")), obj),
        )
    elif obj.kind == "ResourceFlavor":
        cluster.flavors.setdefault(
            name,
            ResourceFlavor(
                name=name,
                node_labels=_labels(obj, ("spec", "nodeLabels")),
                node_taints=tuple(t for t in _list(spec.get("nodeTaints")) if isinstance(t, dict)),
                tolerations=tuple(t for t in _list(spec.get("tolerations")) if isinstance(t, dict)),
                topology_name=_str(spec.get("topologyName")),
                node_shape=_node_shape(cluster, obj),
                obj=obj,
            ),
        )
    elif obj.kind == "WorkloadPriorityClass":
        cluster.priority_classes.setdefault(name, obj)
    elif obj.kind == "Topology":
        levels = tuple(str(_map(level).get("nodeLabel", "")) for level in _list(spec.get("levels")))
        cluster.topologies.setdefault(name, Topology(name, levels, obj))


def _fungibility(value: Any) -> Fungibility:
    written = tuple((str(k), v) for k, v in _map(value).items() if isinstance(v, str))
    fields = dict(written)

    def policy(key: str, default: str) -> str:
        spelled = fields.get(key) or default
        return LEGACY_FUNGIBILITY.get(spelled, spelled)

    return Fungibility(
        policy("whenCanBorrow", MAY_STOP_SEARCH),
        policy("whenCanPreempt", TRY_NEXT_FLAVOR),
        fields.get("preference"),
        written,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _labels(obj: Located, path: tuple) -> dict[str, str]:
    node: Any = obj.data
    for part in path:
        node = _map(node).get(part)
    # A bare `true` is a YAML boolean; Kubernetes would reject it, the CRD check says so.
    return {str(k): (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in _map(node).items()}


def _groups(cluster: Cluster, obj: Located, spec: Mapping[str, Any]) -> tuple[ResourceGroup, ...]:
    groups: list[ResourceGroup] = []
    for g, group in enumerate(_list(spec.get("resourceGroups"))):
        group = _map(group)
        gpath = ("spec", "resourceGroups", g)
        flavors: list[FlavorQuotas] = []
        for f, flavor in enumerate(_list(group.get("flavors"))):
            flavor = _map(flavor)
            fpath = (*gpath, "flavors", f)
            quotas: dict[str, Quota] = {}
            for r, entry in enumerate(_list(flavor.get("resources"))):
                entry = _map(entry)
                rpath = (*fpath, "resources", r)
                values: dict[str, Fraction | None] = {}
                for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
                    values[key] = _quantity_field(cluster, obj, entry, key, rpath)
                resource = str(entry.get("name", ""))
                quotas[resource] = Quota(
                    resource,
                    values["nominalQuota"] or Fraction(0),
                    values["borrowingLimit"],
                    values["lendingLimit"],
                    rpath,
                )
            flavors.append(FlavorQuotas(str(flavor.get("name", "")), quotas, fpath))
        covered = tuple(str(c) for c in _list(group.get("coveredResources")))
        groups.append(ResourceGroup(covered, tuple(flavors), gpath))
    return tuple(groups)


def _quantity_field(cluster: Cluster, obj: Located, entry: Mapping[str, Any], key: str, path: tuple) -> Fraction | None:
    if entry.get(key) is None:
        return None
    try:
        return quantity(entry[key])
    except ValueError as exc:
        mark = obj.mark((*path, key))
        cluster.problems.append(
            Diagnostic(
                code=codes.CRD_SCHEMA,
                message=f"{obj.describe()}: {key} is not a quantity ({exc})",
                file=obj.file,
                line=mark.line,
                column=mark.column,
                path=".".join(str(p) for p in (*path, key)),
            )
        )
        return None


def _node_shape(cluster: Cluster, obj: Located) -> dict[str, Fraction] | None:
    text = _map(_map(obj.data.get("metadata")).get("annotations")).get(NODE_ALLOCATABLE)
    if not isinstance(text, str):
        return None
    shape: dict[str, Fraction] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, eq, value = item.partition("=")
        try:
            if not eq or not name.strip():
                raise ValueError("expected name=quantity")
            shape[name.strip()] = quantity(value.strip())
        except ValueError as exc:
            mark = obj.mark(("metadata", "annotations", NODE_ALLOCATABLE))
            cluster.problems.append(
                Diagnostic(
                    code=codes.POD_LARGER_THAN_NODE,
                    severity=Severity.WARNING,
                    file=obj.file,
                    line=mark.line,
                    column=mark.column,
                    message=f"{obj.describe()}: cannot read {item!r} in annotation {NODE_ALLOCATABLE} ({exc}); "
                    "node shape ignored",
                    hint='write it as "cpu=192,memory=2Ti,nvidia.com/gpu=8"',
                )
            )
            return None
    return shape


__all__ = [
    "KUEUE_GROUP",
    "LEGACY_FUNGIBILITY",
    "MAY_STOP_SEARCH",
    "NODE_ALLOCATABLE",
    "Cluster",
    "ClusterQueue",
    "Cohort",
    "FlavorQuotas",
    "Fungibility",
    "LocalQueue",
    "Located",
    "Namespace",
    "Quota",
    "ResourceFlavor",
    "ResourceGroup",
    "TRY_NEXT_FLAVOR",
    "Topology",
    "load_cluster",
    "quantity",
]
