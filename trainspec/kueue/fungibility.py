"""``flavorFungibility`` in words: the Kueue-version rules and the story of a missed assignment.

The mechanics are in :mod:`.assigner`; this module only says things about them:

* :func:`version_problem`: a spelling the targeted Kueue release's API server refuses. Kueue
  0.14 serves only ``v1beta1``, whose enums are ``Borrow``/``TryNextFlavor`` and
  ``Preempt``/``TryNextFlavor`` and which has no ``preference``; ``MayStopSearch`` and
  ``preference`` arrived with 0.15 (``v1beta2``), where ``v1beta1`` keeps accepting the old
  words as deprecated synonyms of ``MayStopSearch``. (``Borrow`` in a ``v1beta2`` object is
  already a schema error of the CRD check.)
* :func:`missed`: why Kueue's flavor assigner never admits a job that the quota could hold.
"""

from __future__ import annotations

from trainspec.kueue.assigner import Outcome, PodSetResult
from trainspec.kueue.cluster_files import MAY_STOP_SEARCH, ClusterQueue
from trainspec.kueue.quota import fmt

#: The first Kueue release with ``MayStopSearch`` and ``preference`` (and ``v1beta2``).
MAY_STOP_SEARCH_SINCE = (0, 15)
_OLD_WORD = {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}


def version_problem(cq: ClusterQueue, kueue: tuple[int, int] | None) -> tuple[str, tuple] | None:
    """Why Kueue ``kueue`` (None: the newest known) refuses ``cq``'s flavorFungibility, and where."""
    if kueue is None or kueue >= MAY_STOP_SEARCH_SINCE:
        return None
    shown = f"{kueue[0]}.{kueue[1]}"
    for key, value in cq.fungibility.written:
        at = ("spec", "flavorFungibility", key)
        if key in _OLD_WORD and value == MAY_STOP_SEARCH:
            return (
                (
                    f"Kueue {shown}'s API server rejects ClusterQueue {cq.name}: flavorFungibility.{key} "
                    f"{MAY_STOP_SEARCH} is new in Kueue 0.15; {shown} knows {_OLD_WORD[key]} and TryNextFlavor"
                ),
                at,
            )
        if key == "preference":
            return (
                (
                    f"Kueue {shown}'s API server rejects ClusterQueue {cq.name}: flavorFungibility.preference "
                    "is new in Kueue 0.15 (an unknown field under strict validation)"
                ),
                at,
            )
    return None


def _choice(cq: ClusterQueue, result: PodSetResult, group: int) -> str:
    """How PodSet ``result`` came to take its flavor in ``group``."""
    flavor, level = result.flavors[group], result.levels[group]
    if level == 0:
        return f"PodSet {result.podset.name} takes {flavor}, the first flavor that holds it"
    if cq.fungibility.borrow_tries_next:
        return (
            f"PodSet {result.podset.name} takes {flavor}: every flavor that holds it borrows and "
            "whenCanBorrow is TryNextFlavor, so it takes the one borrowing least and, having scanned "
            "them all, is never moved on a retry"
        )
    return f"PodSet {result.podset.name} takes {flavor}, the first flavor that holds it (by borrowing)"


def _why_not(result: PodSetResult, group: int) -> str:
    short = [
        f"needs {fmt(s.needs)} {s.resource} on {s.flavor}, at most {fmt(s.capacity.maximum)}"
        for s in result.short.get(group, [])
    ]
    rejected = [f"{flavor}: {why}" for flavor, why, _ in result.rejected.get(group, [])]
    return "; ".join(short + rejected)


def missed(cq: ClusterQueue, outcome: Outcome) -> tuple[PodSetResult, str] | None:
    """The PodSet Kueue's assigner never places, and why, when the quota could hold the job."""
    results = outcome.first
    failing = next((r for r in results if not r.placed), None)
    if failing is None or not failing.missing:
        return None
    index = results.index(failing)
    # The choices that block it: those that differ from a fitting assignment (all, without one).
    wrong = [
        _choice(cq, result, group)
        for earlier, result in enumerate(results[:index])
        for group in sorted(result.flavors)
        if not outcome.witness or outcome.witness.get((earlier, group)) != result.flavors[group]
    ]
    group = failing.missing[0]
    steps = "; ".join(wrong) if wrong else "the PodSets before it take their flavors"
    podset = failing.podset
    message = (
        f"Kueue's flavor assigner never admits the job on an idle ClusterQueue {cq.name}: {steps}; then "
        f"PodSet {podset.name} ({podset.count} pods) fits no flavor ({_why_not(failing, group)})"
    )
    if outcome.witness:
        placed = ", ".join(
            f"{results[i].podset.name} on {flavor}" for (i, _), flavor in sorted(outcome.witness.items())
        )
        message += f". The quota can hold the job ({placed})"
    return failing, message


__all__ = ["MAY_STOP_SEARCH_SINCE", "missed", "version_problem"]
