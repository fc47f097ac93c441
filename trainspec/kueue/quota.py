"""The quota math: which flavors can take a PodSet, and how much a ClusterQueue can ever hold.

Which flavor each PodSet actually takes (flavor order, ``flavorFungibility``, Kueue's retries)
is :mod:`.assigner`; this module answers its two questions. A flavor is a *candidate* for a
PodSet when

* the pod's nodeSelector and required node affinity, restricted to the label keys the flavor
  declares in ``nodeLabels``, match those labels;
* the pod's tolerations plus the flavor's ``tolerations`` tolerate every NoSchedule/NoExecute
  taint in the flavor's ``nodeTaints``;
* TAS agrees: a PodSet asking for a topology needs a flavor with ``topologyName``; a PodSet
  without one never takes a TAS flavor, unless every flavor of the ClusterQueue is TAS.

Capacity of (flavor f, resource r) for a ClusterQueue, as Kueue computes "potential available":

* no cohort: ``nominalQuota``;
* in a cohort: ``min(nominal + borrowingLimit [if set], guaranteed + potential(cohort))`` with
  ``guaranteed = max(0, nominal - lendingLimit)`` when lendingLimit is set, else 0;
  ``potential(cohort)`` is the cohort's subtree quota (its own Cohort quota plus, for each child
  ClusterQueue or cohort, ``subtree - guaranteed``), or, below a parent cohort, again
  ``guaranteed + potential(parent)`` capped by the cohort's own borrowingLimit.

On an idle cluster (no other workload) what is available is exactly this potential, so a
PodSet fits a flavor or it does not: nothing is ever preempted. The *borrowing level* of a fit
(:meth:`CohortTree.borrowing_level`) is what ``flavorFungibility.whenCanBorrow`` looks at.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from trainspec.dsl.framework.quantity import format_quantity
from trainspec.k8s.wellknown import TOPOLOGY_ANNOTATIONS
from trainspec.kueue.cluster_files import Cluster, ClusterQueue, Quota, ResourceFlavor, ResourceGroup
from trainspec.kueue.podsets import PodSet

#: required, preferred, unconstrained, slice-required, slice-required-constraints (in this order).
TOPOLOGY_KEYS = TOPOLOGY_ANNOTATIONS
_HARD_EFFECTS = ("NoSchedule", "NoExecute")
#: Below this, a whole amount reads better as a plain number (192 cores, 8 GPUs) than in Ki.
_BINARY_FROM = 2**20


def fmt(value: Fraction) -> str:
    """A quantity for messages, in the package's canonical form: ``64``, ``3Ti``, ``500m``.

    Whole amounts of at least 1Mi that a binary suffix divides are written with it (memory
    reads as ``3Ti``); everything else as Kubernetes writes a decimal quantity.
    """
    binary = value.denominator == 1 and abs(value) >= _BINARY_FROM and value.numerator % 2**20 == 0
    return format_quantity(value, binary)


def wants_topology(podset: PodSet) -> bool:
    return any(key in podset.annotations for key in TOPOLOGY_KEYS)


# -- flavor candidates ----------------------------------------------------------------------------


def _tolerates(tolerations: list[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    for toleration in tolerations:
        effect = toleration.get("effect")
        if effect and effect != taint.get("effect"):
            continue
        key, operator = toleration.get("key"), toleration.get("operator", "Equal")
        if operator == "Exists" and not key:
            return True
        if key != taint.get("key"):
            continue
        if operator == "Exists" or str(toleration.get("value", "")) == str(taint.get("value", "")):
            return True
    return False


def _expression_matches(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = expression.get("key"), expression.get("operator")
    if not isinstance(key, str):
        return True  # a malformed expression is a schema problem, not a reason to drop the flavor
    values = [str(v) for v in expression.get("values") or []]
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return True  # Gt/Lt on a flavor label: not decidable offline, do not exclude the flavor


def flavor_problem(podset: PodSet, flavor: ResourceFlavor, all_tas: bool) -> tuple[str, tuple] | None:
    """Why ``flavor`` is not a candidate for ``podset``, and the flavor field that decides it."""
    for key, value in flavor.node_labels.items():
        wanted = podset.node_selector.get(key)
        if wanted is not None and wanted != value:
            return (
                f"nodeSelector {key}={wanted} does not match the flavor's node label {key}={value}",
                ("spec", "nodeLabels", key),
            )
    if podset.affinity_terms:
        relevant = [[e for e in term if e.get("key") in flavor.node_labels] for term in podset.affinity_terms]
        if not any(all(_expression_matches(e, flavor.node_labels) for e in term) for term in relevant):
            return "required node affinity does not match the flavor's node labels", ("spec", "nodeLabels")
    tolerations = [*podset.tolerations, *flavor.tolerations]
    for index, taint in enumerate(flavor.node_taints):
        if taint.get("effect") in _HARD_EFFECTS and not _tolerates(tolerations, taint):
            shown = f"{taint.get('key')}{'=' + str(taint['value']) if taint.get('value') else ''}"
            why = f"pods do not tolerate the flavor's taint {shown}:{taint.get('effect')}"
            return why, ("spec", "nodeTaints", index)
    if wants_topology(podset) and not flavor.topology_name:
        return "the PodSet asks for a topology but the flavor has no topologyName (not a TAS flavor)", ("spec",)
    if flavor.topology_name and not wants_topology(podset) and not all_tas:
        return (
            "a TAS flavor (topologyName set) only takes PodSets with topology annotations",
            ("spec", "topologyName"),
        )
    return None


# -- capacity -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Capacity:
    """How much of (flavor, resource) a ClusterQueue can ever use, and why."""

    nominal: Fraction
    maximum: Fraction
    explanation: str
    quota: Quota | None


Node = tuple[str, str]  # ("cq", name) or ("cohort", name)


class CohortTree:
    """Subtree quotas, potential capacity and borrowing levels over ClusterQueues and Cohorts.

    Every value is memoised per (node, flavor, resource): a subtree's quota is read by each of
    its ancestors, and without the memo a chain of cohorts with lending limits costs
    ``2**depth`` evaluations.
    """

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.children: dict[str, list[Node]] = {}
        for cq in cluster.cluster_queues.values():
            if cq.cohort:
                self.children.setdefault(cq.cohort, []).append(("cq", cq.name))
        for cohort in cluster.cohorts.values():
            if cohort.parent and not self._cycle(cohort.name):
                self.children.setdefault(cohort.parent, []).append(("cohort", cohort.name))
        self._memo: dict[tuple[str, Node, str, str], Fraction] = {}
        self._heights: dict[str, int] = {}

    def _cycle(self, name: str) -> bool:
        seen = {name}
        parent = self.cluster.cohort(name).parent
        while parent:
            if parent in seen:
                return True
            seen.add(parent)
            parent = self.cluster.cohort(parent).parent
        return False

    def quota(self, node: Node, flavor: str, resource: str) -> Quota | None:
        kind, name = node
        groups: tuple[ResourceGroup, ...]
        groups = self.cluster.cluster_queues[name].groups if kind == "cq" else self.cluster.cohort(name).groups
        for group in groups:
            for quotas in group.flavors:
                if quotas.flavor == flavor and resource in quotas.quotas:
                    return quotas.quotas[resource]
        return None

    def parent(self, node: Node) -> str | None:
        kind, name = node
        if kind == "cq":
            return self.cluster.cluster_queues[name].cohort
        return None if self._cycle(name) else self.cluster.cohort(name).parent

    def subtree(self, node: Node, flavor: str, resource: str) -> Fraction:
        key = ("subtree", node, flavor, resource)
        if key not in self._memo:
            quota = self.quota(node, flavor, resource)
            total = quota.nominal if quota else Fraction(0)
            if node[0] == "cohort":
                for child in self.children.get(node[1], []):
                    total += self.subtree(child, flavor, resource) - self.guaranteed(child, flavor, resource)
            self._memo[key] = total
        return self._memo[key]

    def guaranteed(self, node: Node, flavor: str, resource: str) -> Fraction:
        """What ``node`` keeps for its own subtree (Kueue's local quota): subtree - lendingLimit."""
        quota = self.quota(node, flavor, resource)
        if quota is None or quota.lending_limit is None:
            return Fraction(0)
        return max(Fraction(0), self.subtree(node, flavor, resource) - quota.lending_limit)

    def potential(self, node: Node, flavor: str, resource: str) -> Fraction:
        key = ("potential", node, flavor, resource)
        if key not in self._memo:
            parent = self.parent(node)
            subtree = self.subtree(node, flavor, resource)
            value = subtree
            if parent:
                value = self.guaranteed(node, flavor, resource) + self.potential(("cohort", parent), flavor, resource)
                quota = self.quota(node, flavor, resource)
                if quota is not None and quota.borrowing_limit is not None:
                    value = min(value, subtree + quota.borrowing_limit)
            self._memo[key] = value
        return self._memo[key]

    def height(self, cohort: str) -> int:
        """Kueue's height of a cohort: 1 over ClusterQueues, one more per level of child cohorts."""
        if cohort not in self._heights:
            self._heights[cohort] = 0  # a guard: cycles are cut in __init__, this keeps recursion finite
            children = self.children.get(cohort, [])
            height = min(len(children), 1)
            for kind, name in children:
                if kind == "cohort":
                    height = max(height, self.height(name) + 1)
            self._heights[cohort] = height
        return self._heights[cohort]

    def borrowing_level(self, cq: ClusterQueue, flavor: str, resource: str, amount: Fraction) -> int:
        """How far up the cohort tree ``amount`` of (flavor, resource) must come from, on an idle cluster.

        0 when the ClusterQueue's own nominal quota holds it (or it has no cohort); else the
        height of the lowest cohort on its path whose subtree quota holds what the nodes below
        it do not keep for themselves: Kueue's borrowing level, which ``whenCanBorrow`` and the
        flavor preference compare.
        """
        node: Node = ("cq", cq.name)
        quota = self.quota(node, flavor, resource)
        if not cq.cohort or amount <= (quota.nominal if quota else Fraction(0)):
            return 0
        remaining = amount - self.guaranteed(node, flavor, resource)
        cohort: str | None = cq.cohort
        last = cq.cohort
        seen: set[str] = set()
        while cohort and cohort not in seen:
            seen.add(cohort)
            last = cohort
            if remaining <= self.subtree(("cohort", cohort), flavor, resource):
                return self.height(cohort)
            remaining -= self.guaranteed(("cohort", cohort), flavor, resource)
            cohort = self.parent(("cohort", cohort))
        return self.height(last)  # it does not fit at all; the caller has already said so


def capacity(
    cluster: Cluster, cq: ClusterQueue, flavor: str, resource: str, tree: CohortTree | None = None
) -> Capacity:
    """The most of ``resource`` on ``flavor`` that ``cq`` can ever hold."""
    tree = tree or CohortTree(cluster)
    quota = tree.quota(("cq", cq.name), flavor, resource)
    nominal = quota.nominal if quota else Fraction(0)
    maximum = tree.potential(("cq", cq.name), flavor, resource)
    if not cq.cohort:
        return Capacity(nominal, maximum, f"nominal {fmt(nominal)}, no cohort", quota)
    limit = f", borrowingLimit {fmt(quota.borrowing_limit)}" if quota and quota.borrowing_limit is not None else ""
    extra = maximum - nominal
    if extra > 0:
        text = f"nominal {fmt(nominal)} + {fmt(extra)} borrowable in cohort {cq.cohort}{limit}"
    else:
        text = f"nominal {fmt(nominal)}{limit}; cohort {cq.cohort} has nothing more to lend"
    return Capacity(nominal, maximum, text, quota)


__all__ = [
    "TOPOLOGY_KEYS",
    "Capacity",
    "CohortTree",
    "capacity",
    "flavor_problem",
    "fmt",
    "wants_topology",
]
