"""Which flavor each PodSet takes: Kueue's flavor assigner on an idle ClusterQueue.

Modelled on kubernetes-sigs/kueue ``pkg/scheduler/flavorassigner`` (``findFlavorForPodSets``,
``shouldTryNextFlavor``, ``isPreferred``) and the scheduler's retry bookkeeping
(``LastTriedFlavorIdx``), unchanged in these respects from Kueue 0.14 to 0.19:

* PodSets are assigned in order; for each resource group a PodSet touches, the group's flavors
  are scanned in their listed order. A flavor that is not a candidate (:func:`~trainspec.kueue.quota.flavor_problem`)
  or cannot hold the PodSet plus what earlier PodSets took from it is passed over.
* A flavor that fits without borrowing ends the scan. One that fits only by borrowing ends it
  too, unless ``flavorFungibility.whenCanBorrow`` is ``TryNextFlavor``: then the scan goes on
  and, if no later flavor fits without borrowing, the flavor with the lowest borrowing level
  is taken (the first of equals). ``whenCanPreempt`` and ``preference`` only matter when a
  flavor fits after preempting other workloads; on an idle cluster nothing is preempted, so
  they never change the outcome here.
* Kueue records where each scan stopped. When a PodSet finds no flavor, the job is not
  admitted and, if some PodSet before it stopped short of its group's last flavor, it is
  retried at once with those PodSets scanning on from the flavor after; PodSets from the
  failing one on start over. A scan that reached the last flavor starts over too. When no
  scan stopped short, the next try would repeat the first: the job stays pending.

:func:`assign` plays these tries until one admits the job, the tries repeat, or a bound is
hit, and separately searches whether any choice of candidate flavors holds every PodSet (the
certain "never" is when none does; otherwise an unadmitted job is a consequence of the flavor
order and the fungibility policy on an idle cluster, which other workloads' usage could
change). Live usage is unknown offline.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction

from trainspec.kueue.cluster_files import Cluster, ClusterQueue, ResourceGroup
from trainspec.kueue.podsets import PodSet
from trainspec.kueue.quota import Capacity, CohortTree, capacity, flavor_problem

#: Tries of the same job before giving up on deciding (real jobs settle in one to three).
MAX_TRIES = 256
#: Partial assignments the feasibility search may visit before it gives up (None: not decided).
SEARCH_BUDGET = 50_000

Key = tuple[int, int]  # (PodSet index, resource group index)


@dataclass(frozen=True)
class Shortfall:
    """A candidate flavor that cannot hold the PodSet: ``needs`` of ``resource`` > ``capacity``."""

    flavor: str
    resource: str
    needs: Fraction
    capacity: Capacity


@dataclass
class PodSetResult:
    """How one PodSet fared in one try: flavor per group, or why not."""

    podset: PodSet
    flavors: dict[int, str] = field(default_factory=dict)  # group index -> flavor taken
    #: group index -> borrowing level of the flavor taken (0: within the ClusterQueue's nominal quota)
    levels: dict[int, int] = field(default_factory=dict)
    #: group index -> (flavor, borrowing level) of every flavor scanned that could hold the PodSet
    fits: dict[int, list[tuple[str, int]]] = field(default_factory=dict)
    uncovered: list[str] = field(default_factory=list)
    #: group index -> (flavor, reason, flavor field) for every flavor that is not a candidate
    rejected: dict[int, list[tuple[str, str, tuple]]] = field(default_factory=dict)
    #: group index -> shortfalls of the candidates, when no candidate fits
    short: dict[int, list[Shortfall]] = field(default_factory=dict)
    #: indexes of the groups the PodSet needs but got no flavor in
    missing: list[int] = field(default_factory=list)

    @property
    def placed(self) -> bool:
        """Whether Kueue would give this PodSet a flavor in every group it touches."""
        return self.podset.count <= 0 or (not self.uncovered and not self.missing)


@dataclass
class Outcome:
    """What Kueue's flavor assigner does with a job on an idle ClusterQueue."""

    #: The first try: every PodSet scans each group from its first flavor (complete reasons).
    first: list[PodSetResult]
    #: The try that admits the job; None when no try does (or ``settled`` is False).
    admitted: list[PodSetResult] | None
    tries: int
    #: False when the tries hit MAX_TRIES before repeating: Kueue's outcome is not decided here.
    settled: bool
    #: Whether some choice of candidate flavors holds every PodSet (None: the search gave up).
    feasible: bool | None = None
    #: Such a choice, (PodSet index, group) -> flavor, when ``feasible``.
    witness: dict[Key, str] = field(default_factory=dict)

    @property
    def results(self) -> list[PodSetResult]:
        """The admitting try, else the first: the flavors the other checks look at."""
        return self.admitted if self.admitted is not None else self.first


class _Job:
    """One job's PodSets against one ClusterQueue, with what every try shares."""

    def __init__(self, cluster: Cluster, cq: ClusterQueue, podsets: list[PodSet]) -> None:
        self.cluster, self.cq, self.podsets = cluster, cq, podsets
        self.tree = CohortTree(cluster)
        covers_pods = any("pods" in group.covered for group in cq.groups)
        flavors_of_cq = [cluster.flavors.get(fq.flavor) for group in cq.groups for fq in group.flavors]
        self.all_tas = bool(flavors_of_cq) and all(f is not None and f.topology_name for f in flavors_of_cq)
        self.covered = {name for group in cq.groups for name in group.covered}
        self.needs: list[dict[str, Fraction]] = []
        for podset in podsets:
            needs = {name: value for name, value in podset.total().items() if value > 0 and name != "pods"}
            if covers_pods:
                needs["pods"] = Fraction(podset.count)
            self.needs.append(needs)
        self._problems: dict[tuple[int, str], tuple[str, tuple] | None] = {}
        self._capacity: dict[tuple[str, str], Capacity] = {}

    def wanted(self, index: int, group: ResourceGroup) -> dict[str, Fraction]:
        needs = self.needs[index]
        return {name: needs[name] for name in group.covered if name in needs}

    def problem(self, index: int, flavor_name: str) -> tuple[str, tuple] | None:
        """Why the flavor is not a candidate for PodSet ``index`` (memoised: every try asks again)."""
        key = (index, flavor_name)
        if key not in self._problems:
            flavor = self.cluster.flavors.get(flavor_name)
            self._problems[key] = (
                ("no such ResourceFlavor", ())
                if flavor is None
                else flavor_problem(self.podsets[index], flavor, self.all_tas)
            )
        return self._problems[key]

    def capacity(self, flavor: str, resource: str) -> Capacity:
        key = (flavor, resource)
        if key not in self._capacity:
            self._capacity[key] = capacity(self.cluster, self.cq, flavor, resource, self.tree)
        return self._capacity[key]

    def groups_of(self, index: int) -> Iterator[tuple[int, ResourceGroup, dict[str, Fraction]]]:
        for g, group in enumerate(self.cq.groups):
            wanted = self.wanted(index, group)
            if wanted:
                yield g, group, wanted


def _scan(
    job: _Job,
    result: PodSetResult,
    index: int,
    g: int,
    group: ResourceGroup,
    wanted: dict[str, Fraction],
    used: dict[tuple[str, str], Fraction],
    begin: int,
) -> tuple[int, int] | None:
    """Scan the group's flavors from ``begin``: (flavor index taken, where the scan stopped) or None.

    Where it stopped is -1 when the scan reached the group's last flavor (Kueue's "start over").
    """
    best: tuple[int, int] | None = None  # (flavor index, borrowing level)
    last = -1
    for fi in range(begin, len(group.flavors)):
        last = fi
        name = group.flavors[fi].flavor
        problem = job.problem(index, name)
        if problem:
            result.rejected.setdefault(g, []).append((name, *problem))
            continue
        short = [
            Shortfall(name, r, used.get((name, r), Fraction(0)) + amount, job.capacity(name, r))
            for r, amount in wanted.items()
        ]
        short = [s for s in short if s.needs > s.capacity.maximum]
        if short:
            result.short.setdefault(g, []).extend(short)
            continue
        # The flavor's level is its worst resource's: Kueue keeps the worst mode of the flavor.
        level = max(
            job.tree.borrowing_level(job.cq, name, r, used.get((name, r), Fraction(0)) + amount)
            for r, amount in wanted.items()
        )
        result.fits.setdefault(g, []).append((name, level))
        if level == 0 or not job.cq.fungibility.borrow_tries_next:
            best = (fi, level)
            break
        if best is None or level < best[1]:  # strictly better: of equal levels the first stays
            best = (fi, level)
    if best is None:
        return None
    result.flavors[g] = group.flavors[best[0]].flavor
    result.levels[g] = best[1]
    return best[0], -1 if last == len(group.flavors) - 1 else last


def _try(job: _Job, start: dict[Key, int]) -> tuple[list[PodSetResult], dict[Key, int], bool]:
    """One scheduling attempt: the results, where each scan stopped, and whether it admits the job."""
    used: dict[tuple[str, str], Fraction] = {}
    results: list[PodSetResult] = []
    stops: dict[Key, int] = {}
    failed = False
    for index, podset in enumerate(job.podsets):
        result = PodSetResult(podset)
        results.append(result)
        if podset.count <= 0:
            continue  # an empty PodSet reserves nothing
        result.uncovered = sorted(name for name in job.needs[index] if name not in job.covered)
        stopped: dict[Key, int] = {}
        for g, group, wanted in job.groups_of(index):
            scanned = _scan(job, result, index, g, group, wanted, used, start.get((index, g), 0))
            if scanned is None:
                result.missing.append(g)
            else:
                stopped[(index, g)] = scanned[1]
        if not result.placed:
            failed = True  # Kueue stops here; the later PodSets are still tried, for the report
            continue
        for g, name in result.flavors.items():  # a PodSet that gets no flavor reserves nothing
            for r, amount in job.wanted(index, job.cq.groups[g]).items():
                used[(name, r)] = used.get((name, r), Fraction(0)) + amount
        if not failed:
            stops.update(stopped)
    return results, stops, not failed


def _plainly_short(job: _Job, group: ResourceGroup, items: list[tuple[int, dict[str, Fraction]]]) -> bool:
    """Cheap proofs that no choice fits: a PodSet no flavor holds alone, or a resource the
    PodSets together need more of than all the flavors they may use hold (so the search
    below only runs on close calls)."""
    usable: set[str] = set()
    for index, wanted in items:
        alone = [
            q.flavor
            for q in group.flavors
            if not job.problem(index, q.flavor)
            and all(a <= job.capacity(q.flavor, r).maximum for r, a in wanted.items())
        ]
        if not alone:
            return True
        usable.update(alone)
    for resource in group.covered:
        need = sum((wanted.get(resource, Fraction(0)) for _, wanted in items), Fraction(0))
        if need > sum((job.capacity(f, resource).maximum for f in usable), Fraction(0)):
            return True
    return False


def _place(
    job: _Job,
    group: ResourceGroup,
    items: list[tuple[int, dict[str, Fraction]]],
    k: int,
    used: dict[tuple[str, str], Fraction],
    choice: list[str],
    budget: list[int],
) -> bool | None:
    """Place PodSets ``items[k:]`` on ``group``'s flavors, depth first: True (``choice`` holds the
    flavors), False (no placement), or None (the visit ``budget`` ran out)."""
    if k == len(items):
        return True
    index, wanted = items[k]
    for quotas in group.flavors:
        name = quotas.flavor
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if job.problem(index, name) or any(
            used.get((name, r), Fraction(0)) + a > job.capacity(name, r).maximum for r, a in wanted.items()
        ):
            continue
        for r, a in wanted.items():
            used[(name, r)] = used.get((name, r), Fraction(0)) + a
        choice.append(name)
        found = _place(job, group, items, k + 1, used, choice, budget)
        if found is not False:
            return found
        choice.pop()
        for r, a in wanted.items():
            used[(name, r)] -= a
    return False


def _search(job: _Job) -> tuple[bool | None, dict[Key, str]]:
    """Whether some choice of candidate flavors holds every PodSet, ignoring order and policy.

    Resource groups share no flavor, so each group is searched on its own (depth first, in
    PodSet and flavor order, within SEARCH_BUDGET visits).
    """
    if any(name not in job.covered for needs in job.needs for name in needs):
        return False, {}
    witness: dict[Key, str] = {}
    budget = [SEARCH_BUDGET]
    for g, group in enumerate(job.cq.groups):
        items = [
            (index, wanted)
            for index, podset in enumerate(job.podsets)
            if podset.count > 0 and (wanted := job.wanted(index, group))
        ]
        if _plainly_short(job, group, items):
            return False, {}
        choice: list[str] = []
        found = _place(job, group, items, 0, {}, choice, budget)
        if found is not True:
            return found, {}
        witness.update({(index, g): name for (index, _), name in zip(items, choice, strict=True)})
    return True, witness


def assign(cluster: Cluster, cq: ClusterQueue, podsets: list[PodSet]) -> Outcome:
    """Play Kueue's flavor assignment of ``podsets`` on an idle ``cq`` until it admits or repeats."""
    job = _Job(cluster, cq, podsets)
    start: dict[Key, int] = {}
    seen: set[tuple[tuple[Key, int], ...]] = {()}
    first: list[PodSetResult] | None = None
    settled = False
    tries = 0
    while tries < MAX_TRIES:
        tries += 1
        results, stops, admitted = _try(job, start)
        first = first if first is not None else results
        if admitted:
            return Outcome(first, results, tries, True, True)
        start = {key: stop + 1 for key, stop in stops.items() if stop != -1}
        state = tuple(sorted(start.items()))
        if state in seen:  # () is "nothing pending": the job waits, the next try is the first again
            settled = True
            break
        seen.add(state)
    assert first is not None
    feasible, witness = _search(job)
    return Outcome(first, None, tries, settled, feasible, witness)


__all__ = ["MAX_TRIES", "SEARCH_BUDGET", "Outcome", "PodSetResult", "Shortfall", "assign"]
