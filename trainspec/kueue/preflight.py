"""The Kueue pre-flight checklist for one TrainJob against the Kueue objects in Git.

Each problem is a :class:`Finding` at a field of the TrainJob manifest (the caller maps it to
the job spec's line for compiled specs) with notes pointing at the Kueue objects involved:

* TS510 the queue chain is broken: no LocalQueue of that name in the job's namespace, or it
  points to a missing ClusterQueue, or the ClusterQueue names a missing ResourceFlavor, or
  the targeted Kueue release refuses the ClusterQueue's ``flavorFungibility`` spelling;
* TS511 the ClusterQueue's ``namespaceSelector`` does not select the job's namespace (a
  warning when the Namespace object is not among the cluster files);
* TS512 the LocalQueue or ClusterQueue is held (``stopPolicy: Hold``/``HoldAndDrain``);
* TS513 the priority class names no WorkloadPriorityClass (Kueue creates no Workload);
* TS514 the quota math says never: ``needs N on flavor f; can reach at most M (...)``, when
  no choice of flavors holds the job; a warning when one does but Kueue's flavor assigner,
  with the ClusterQueue's flavor order and ``flavorFungibility``, never reaches it on an idle
  cluster (:mod:`.assigner`);
* TS515 a requested resource is covered by no resource group;
* TS516 no flavor accepts the PodSet (nodeSelector, affinity, taints, TAS);
* TS517 one pod is larger than a node of the flavor (node shape annotation), or, without a
  node shape, larger than the flavor's nominal quota (a warning);
* TS518 the topology request does not fit the flavor's Topology (missing level or Topology,
  inconsistent TAS annotations);
* TS519 more than 18 PodSets.

A job whose runtime is in neither the inputs nor the cluster files is counted from the TrainJob
alone (:mod:`.partial`: ``numNodes`` x ``resourcesPerNode``, each finding noting what that leaves
out), or, when the TrainJob gives no resources, gets a TS509 warning: never passed over silently.

:func:`kueue_label_problems` adds the Kueue webhook's rules on the job's own labels (TS503):
queue name format, a positive max-exec-time, no elastic/min-parallelism keys on a TrainJob.

A job without a queue label is checked against a LocalQueue named ``default`` in its namespace
if there is one (Kueue's LocalQueue defaulting); otherwise Kueue does not manage it at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from trainspec.dsl import codes
from trainspec.dsl.codes import Code
from trainspec.dsl.diagnostics import Related, Severity
from trainspec.k8s.wellknown import (
    ELASTIC_JOB_ANNOTATION,
    JOB_MIN_PARALLELISM_ANNOTATION,
    MAX_EXEC_TIME_LABEL,
    MAX_EXEC_TIME_SECONDS,
    METADATA_NAME_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
)
from trainspec.kueue.assigner import assign
from trainspec.kueue.cluster_files import Cluster, ClusterQueue
from trainspec.kueue.fungibility import version_problem
from trainspec.kueue.podset_findings import PodSetFindings, label_int
from trainspec.kueue.podsets import MAX_PODSETS, PodSet, trainjob_podsets
from trainspec.kueue.quota import fmt

QUEUE_LABEL = QUEUE_NAME_LABEL
PRIORITY_LABEL = PRIORITY_CLASS_LABEL
MAX_EXEC_LABEL = MAX_EXEC_TIME_LABEL
ELASTIC_KEYS = (ELASTIC_JOB_ANNOTATION, JOB_MIN_PARALLELISM_ANNOTATION)
_HELD = ("Hold", "HoldAndDrain")


@dataclass(frozen=True)
class Finding:
    """A pre-flight problem at ``path`` of the TrainJob manifest."""

    code: Code
    message: str
    path: tuple
    severity: Severity = Severity.ERROR
    hint: str | None = None
    related: tuple[Related, ...] = ()
    #: Notes at fields of the TrainJob itself, (message, path): the caller places them as it places the finding.
    notes: tuple[tuple[str, tuple], ...] = ()


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Kubernetes label-selector semantics (``{}`` matches everything)."""
    for key, value in _map(selector.get("matchLabels")).items():
        if labels.get(str(key)) != str(value):
            return False
    for expression in selector.get("matchExpressions") or []:
        expression = _map(expression)
        key, operator = str(expression.get("key")), expression.get("operator")
        values = [str(v) for v in expression.get("values") or []]
        ok = {
            "In": key in labels and labels.get(key) in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }.get(str(operator), False)
        if not ok:
            return False
    return True


class _Preflight:
    def __init__(self, cluster: Cluster, trainjob: Mapping[str, Any], kueue: tuple[int, int] | None = None) -> None:
        self.cluster = cluster
        self.podsets = PodSetFindings(cluster, self.add)  # the per-PodSet checks, findings recorded here
        self.kueue = kueue
        meta = _map(trainjob.get("metadata"))
        self.labels = {str(k): str(v) for k, v in _map(meta.get("labels")).items()}
        self.namespace = str(meta.get("namespace") or "default")
        self.out: list[Finding] = []

    def add(
        self,
        code: Code,
        message: str,
        path: tuple,
        *,
        related: tuple[Related, ...] = (),
        hint: str | None = None,
        severity: Severity = Severity.ERROR,
    ) -> None:
        self.out.append(Finding(code, message, path, severity, hint, related))

    # -- queue, namespace, stop policy, priority ------------------------------------------------

    def cluster_queue(self) -> ClusterQueue | None:
        queue_path: tuple = ("metadata", "labels", QUEUE_LABEL)
        queue = self.labels.get(QUEUE_LABEL)
        if queue is None:
            if (self.namespace, "default") not in self.cluster.local_queues:
                return None  # not managed by Kueue at all
            queue, queue_path = "default", ("metadata", "namespace")
        lq = self.cluster.local_queues.get((self.namespace, queue))
        if lq is None:
            elsewhere = [q for (ns, name), q in sorted(self.cluster.local_queues.items()) if name == queue]
            here = sorted(name for ns, name in self.cluster.local_queues if ns == self.namespace)
            self.add(
                codes.NO_ACTIVE_QUEUE,
                f"no LocalQueue {queue!r} in namespace {self.namespace}",
                queue_path,
                related=tuple(
                    q.obj.related(f"a LocalQueue {queue!r} exists in namespace {q.namespace}", ("metadata", "name"))
                    for q in elsewhere
                ),
                hint=f"LocalQueues in {self.namespace}: {', '.join(here)}"
                if here
                else f"namespace {self.namespace} has no LocalQueue in the cluster files",
            )
            return None
        if lq.stop_policy in _HELD:
            held_at = lq.obj.related("stopPolicy set here", ("spec", "stopPolicy"))
            self.add(
                codes.QUEUE_HELD,
                f"LocalQueue {self.namespace}/{queue} is held (stopPolicy: {lq.stop_policy}): it admits nothing",
                queue_path,
                related=(held_at,),
            )
        cq = self.cluster.cluster_queues.get(lq.cluster_queue or "")
        if cq is None:
            self.add(
                codes.NO_ACTIVE_QUEUE,
                f"LocalQueue {self.namespace}/{queue} points to ClusterQueue {lq.cluster_queue!r}, "
                "which does not exist",
                queue_path,
                related=(lq.obj.related("clusterQueue set here", ("spec", "clusterQueue")),),
            )
            return None
        refused = version_problem(cq, self.kueue)
        if refused is not None:
            self.add(
                codes.NO_ACTIVE_QUEUE,
                refused[0],
                queue_path,
                related=(cq.obj.related("flavorFungibility set here", refused[1]),),
                hint="write the policy in the words of the targeted Kueue release (--target kueue=X.Y)",
            )
            return None
        if cq.stop_policy in _HELD:
            self.add(
                codes.QUEUE_HELD,
                f"ClusterQueue {cq.name} is held (stopPolicy: {cq.stop_policy}): it admits nothing",
                queue_path,
                related=(cq.obj.related("stopPolicy set here", ("spec", "stopPolicy")),),
            )
        missing = [(fq, group) for group in cq.groups for fq in group.flavors if fq.flavor not in self.cluster.flavors]
        for fq, _ in missing:
            self.add(
                codes.NO_ACTIVE_QUEUE,
                f"ClusterQueue {cq.name} uses ResourceFlavor {fq.flavor!r}, which does not exist: "
                "Kueue keeps the ClusterQueue inactive",
                queue_path,
                related=(cq.obj.related("flavor listed here", (*fq.path, "name")),),
            )
        self.check_namespace(cq)
        return None if missing else cq

    def check_namespace(self, cq: ClusterQueue) -> None:
        path = ("metadata", "namespace")
        where = (cq.obj.related("namespaceSelector of the ClusterQueue", ("spec", "namespaceSelector")),)
        if cq.namespace_selector is None:
            self.add(
                codes.NAMESPACE_NOT_SELECTED,
                f"ClusterQueue {cq.name} has no namespaceSelector, so it admits no namespace",
                path,
                related=(cq.obj.related(f"ClusterQueue {cq.name}"),),
                hint="namespaceSelector: {} admits all",
            )
            return
        namespace = self.cluster.namespaces.get(self.namespace)
        if namespace is None:
            if (
                selector_matches(cq.namespace_selector, {METADATA_NAME_LABEL: self.namespace})
                and not cq.namespace_selector.get("matchExpressions")
                and set(_map(cq.namespace_selector.get("matchLabels"))) <= {METADATA_NAME_LABEL}
            ):
                return  # decided without the Namespace's own labels
            self.add(
                codes.NAMESPACE_NOT_SELECTED,
                f"Namespace {self.namespace} is not among the cluster files: cannot tell whether "
                f"ClusterQueue {cq.name}'s namespaceSelector admits it",
                path,
                related=where,
                severity=Severity.WARNING,
                hint=f"add the Namespace {self.namespace} manifest to the cluster files",
            )
            return
        if not selector_matches(cq.namespace_selector, namespace.labels):
            shown = ", ".join(f"{k}={v}" for k, v in sorted(namespace.labels.items()))
            self.add(
                codes.NAMESPACE_NOT_SELECTED,
                f"ClusterQueue {cq.name}'s namespaceSelector does not select namespace "
                f"{self.namespace} (labels: {shown})",
                path,
                related=(*where, namespace.obj.related(f"Namespace {self.namespace}", ("metadata", "labels"))),
            )

    def check_priority(self) -> None:
        name = self.labels.get(PRIORITY_LABEL)
        if name is not None and name not in self.cluster.priority_classes:
            known = ", ".join(sorted(self.cluster.priority_classes)) or "none"
            self.add(
                codes.NO_PRIORITY_CLASS,
                f"no WorkloadPriorityClass {name!r}: Kueue does not create a Workload for the job "
                "(event WorkloadPriorityClassNotFound)",
                ("metadata", "labels", PRIORITY_LABEL),
                hint=f"WorkloadPriorityClasses in the cluster files: {known}",
            )

    # -- PodSets and quota --------------------------------------------------------------------

    def check_quota(self, cq: ClusterQueue, podsets: list[PodSet]) -> None:
        outcome = assign(self.cluster, cq, podsets)
        never = outcome.admitted is None and outcome.feasible is False  # no choice of flavors holds it
        for result in outcome.results:
            podset = result.podset
            if podset.count <= 0:
                continue  # an empty PodSet reserves nothing
            groups_at = (cq.obj.related(f"resource groups of ClusterQueue {cq.name}", ("spec", "resourceGroups")),)
            if never and result.uncovered:
                needed = ", ".join(
                    f"{fmt(podset.requests.get(r, Fraction(podset.count)))} {r}" for r in result.uncovered
                )
                self.add(
                    codes.RESOURCE_NOT_COVERED,
                    f"PodSet {podset.name} requests {needed} per pod, which no resource group of "
                    f"ClusterQueue {cq.name} covers: Kueue never admits it",
                    podset.resources_path,
                    related=groups_at,
                    hint="add the resource to a resource group (coveredResources), or "
                    "exclude it in the Kueue configuration (resources.excludeResourcePrefixes)",
                )
            for index in result.missing if never else ():
                self.podsets.group_failure(cq, result, index)
            self.podsets.check_pod_fit(cq, result)
            self.podsets.check_topology(result)
        if outcome.admitted is None and not never and outcome.settled:
            self.podsets.assigner_misses(cq, outcome)


def kueue_label_problems(trainjob: Mapping[str, Any]) -> list[Finding]:
    """Kueue webhook rules on a TrainJob's own labels and annotations (TS503); no cluster needed."""
    from trainspec.k8s.name_rules import subdomain_problem

    meta = _map(trainjob.get("metadata"))
    labels, annotations = _map(meta.get("labels")), _map(meta.get("annotations"))
    out: list[Finding] = []
    queue = labels.get(QUEUE_LABEL)
    if isinstance(queue, str) and subdomain_problem(queue):
        out.append(
            Finding(
                codes.WEBHOOK_RULE,
                f"queue name {queue!r} {subdomain_problem(queue)}",
                ("metadata", "labels", QUEUE_LABEL),
            )
        )
    max_exec = labels.get(MAX_EXEC_LABEL)
    # Kueue reads it with strconv.ParseInt(v, 10, 32) and silently ignores what fails or is <= 0.
    if max_exec is not None and label_int(max_exec, MAX_EXEC_TIME_SECONDS) is None:
        shown = repr(max_exec) if len(str(max_exec)) <= 40 else f"{str(max_exec)[:40]!r}..."
        out.append(
            Finding(
                codes.WEBHOOK_RULE,
                f"{MAX_EXEC_LABEL} must be a whole number of seconds from 1 to "
                f"{MAX_EXEC_TIME_SECONDS} (Kueue ignores anything else), got {shown}",
                ("metadata", "labels", MAX_EXEC_LABEL),
            )
        )
    for key in ELASTIC_KEYS:
        if key in annotations or key in labels:
            where = "annotations" if key in annotations else "labels"
            out.append(
                Finding(
                    codes.WEBHOOK_RULE,
                    f"{key} is only accepted on batch Jobs and Ray workloads; Kueue's webhook "
                    "rejects it on a TrainJob (no partial or elastic admission)",
                    ("metadata", where, key),
                )
            )
    return out


def preflight(
    cluster: Cluster,
    trainjob: Mapping[str, Any],
    runtime: Mapping[str, Any] | None,
    *,
    merge_resources: bool = True,
    kueue_version: tuple[int, int] | None = None,
) -> list[Finding]:
    """Every pre-flight finding for ``trainjob`` (a manifest dict) on ``runtime`` (None: unknown).

    ``kueue_version`` is the targeted Kueue minor release (``(0, 14)``); None means the newest
    trainspec knows. It decides which ``flavorFungibility`` spellings the API server accepts.
    """
    check = _Preflight(cluster, trainjob, kueue_version)
    cq = check.cluster_queue()
    managed = cq is not None or QUEUE_LABEL in check.labels or (check.namespace, "default") in cluster.local_queues
    if managed:
        check.check_priority()
    if runtime is not None and managed:
        podsets = trainjob_podsets(trainjob, runtime, merge_resources=merge_resources)
        if len(podsets) > MAX_PODSETS:
            check.add(
                codes.TOO_MANY_PODSETS,
                f"the job has {len(podsets)} PodSets (replicatedJobs); a Kueue Workload holds at most {MAX_PODSETS}",
                ("spec", "runtimeRef", "name"),
            )
        elif cq is not None:
            check.check_quota(cq, podsets)
    elif managed and cq is not None:
        from trainspec.kueue.partial import from_the_trainjob_alone

        from_the_trainjob_alone(check, cq, trainjob)
    return check.out


__all__ = [
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "Finding",
    "kueue_label_problems",
    "label_int",
    "preflight",
    "selector_matches",
]
