"""The reads :class:`trainspec.Client` adds to ``trainspec.kube``: every TrainJob of a namespace with
its state, a job's Events, the runtimes, and the lines ``submit`` prints, typed.

The API calls go through ``trainspec.kube.reading.retried`` (the status commands' backoff, and the
same located diagnostics); the objects come back as plain dicts and are typed here. Needs no
``kubernetes`` import of its own: the connected ``KubeApi`` is passed in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from trainspec.client.results import Applied, Event, JobState, RuntimeInfo, parse_api_time
from trainspec.k8s import wellknown as W
from trainspec.kube import reading, resources as R
from trainspec.kube.reading import POLICY, name_of
from trainspec.kube.retry import call
from trainspec.kube.session import CommandError, api_diagnostic
from trainspec.kube.state import JobView, view

#: Core v1 Events: what ``kubectl get events`` lists (events.k8s.io/v1 shows the same objects).
EVENT = R.Resource("v1", "Event", "events")
#: The replicated jobs Kubeflow Trainer's runtimes name (their Jobs' and pods' names start with
#: ``<trainjob>-<replicated job>-<index>``).
REPLICATED_JOBS = (W.NODE, W.LAUNCHER, W.DATASET_INITIALIZER, W.MODEL_INITIALIZER)


def _items(listed: Any) -> list[dict[str, Any]]:
    return [item for item in (listed or {}).get("items") or [] if isinstance(item, dict)]


def _meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


# -- TrainJobs --------------------------------------------------------------------------------------


def views(kube: Any, namespace: str | None) -> list[JobView]:
    """The :class:`~trainspec.kube.state.JobView` of every TrainJob of ``namespace`` (None: every
    namespace), by namespace and name: what ``trainspec list`` and ``trainspec status`` show."""
    return [v for _, v in _listed(kube, namespace)]


def states(kube: Any, namespace: str | None) -> list[JobState]:
    """Every TrainJob of ``namespace`` (None: every namespace) with its state, by namespace and name
    (:meth:`trainspec.Client.list`: the rows of ``trainspec list``, typed)."""
    return [JobState.of(job, v) for job, v in _listed(kube, namespace)]


def _listed(kube: Any, namespace: str | None) -> list[tuple[dict[str, Any], JobView]]:
    """Each TrainJob with its view. One pod list and one Workload list per namespace, not per job."""
    what = f"list TrainJobs in namespace {namespace}" if namespace else "list TrainJobs in every namespace"
    listed = reading.retried(kube, lambda: kube.list(R.TRAINJOB, namespace), what)
    jobs = sorted(_items(listed), key=lambda j: (_meta(j).get("namespace") or "", _meta(j).get("name") or ""))
    if not jobs and namespace:  # the API server lists nothing in a namespace that does not exist: TS720
        reading.missing_namespace(kube, namespace, what)
    pods: dict[str, list[dict[str, Any]]] = {}
    loads: dict[str, list[dict[str, Any]]] = {}
    out = []
    for job in jobs:
        ns = str(_meta(job).get("namespace") or "")
        if ns not in pods:
            pods[ns] = _items(reading.retried(kube, lambda ns=ns: kube.list(R.POD, ns), f"list the pods of {ns}"))
            loads[ns] = _workloads(kube, ns)
        name = name_of(job)
        mine = [p for p in pods[ns] if (_meta(p).get("labels") or {}).get(W.JOBSET_NAME_LABEL) == name]
        out.append((job, view(job, workloads=loads[ns], pods=mine)))
    return out


def _workloads(kube: Any, namespace: str) -> list[dict[str, Any]]:
    """The namespace's Kueue Workloads; [] without Kueue (its CRD missing) or without the right to read them."""
    what = f"list Kueue workloads in namespace {namespace}"
    try:
        return _items(call(lambda: kube.list(R.WORKLOAD, namespace), POLICY, what=what, log=_quiet))
    except Exception as exc:
        if getattr(exc, "status", None) in (403, 404):
            return []
        raise CommandError(api_diagnostic(exc, kube, what=what)) from None


def _quiet(_: str) -> None:
    pass


# -- Events -----------------------------------------------------------------------------------------


def events(
    kube: Any, namespace: str, job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], workloads: Iterable[Any]
) -> list[Event]:
    """The Events of the TrainJob, its JobSet, Jobs and pods (replaced ones too) and its Kueue Workloads,
    oldest first (by when each was last seen)."""
    name = name_of(dict(job))
    uid = _meta(job).get("uid")
    pod_list = list(pods)
    loads = [w for w in workloads if isinstance(w, dict)]
    rjobs = {*REPLICATED_JOBS, *((_meta(p).get("labels") or {}).get(W.REPLICATED_JOB_LABEL) for p in pod_list)}
    child = re.compile(rf"^{re.escape(name)}-(?:{'|'.join(sorted(re.escape(r) for r in rjobs if r))})-\d+")
    uids = {u for u in (_meta(o).get("uid") for o in (*pod_list, *loads)) if u}
    workload_names = {_meta(w).get("name") for w in loads}

    def mine(ref: Mapping[str, Any]) -> bool:
        kind, other, other_uid = ref.get("kind"), str(ref.get("name") or ""), ref.get("uid")
        if other_uid and other_uid in uids:
            return True
        if kind == "TrainJob":  # one of the same name deleted earlier is another job
            return other == name and (not other_uid or not uid or other_uid == uid)
        if kind == "JobSet":
            return other == name
        if kind in ("Job", "Pod"):
            return child.match(other) is not None
        if kind == "Workload":  # Kueue names it trainjob-<name>-<hash>
            return other in workload_names or other.startswith(f"trainjob-{name}-")
        return False

    listed = reading.retried(kube, lambda: kube.list(EVENT, namespace), f"list the Events of namespace {namespace}")
    found = [_event(e) for e in _items(listed) if mine(e.get("involvedObject") or e.get("regarding") or {})]
    earliest = datetime.min.replace(tzinfo=timezone.utc)
    # Stable: events seen at the same time keep the API's order (by object, then as recorded).
    return sorted(found, key=lambda e: (e.time is None, e.time or earliest))


def _event(obj: Mapping[str, Any]) -> Event:
    ref = obj.get("involvedObject") or obj.get("regarding") or {}
    source = obj.get("source") or {}
    first = parse_api_time(obj.get("firstTimestamp")) or parse_api_time(obj.get("eventTime"))
    last = (
        parse_api_time(obj.get("lastTimestamp"))
        or parse_api_time(obj.get("eventTime"))
        or first
        or parse_api_time(_meta(obj).get("creationTimestamp"))
    )
    count = obj.get("count") or (obj.get("series") or {}).get("count") or 1
    return Event(
        time=last,
        type=str(obj.get("type") or "Normal"),
        reason=str(obj.get("reason") or ""),
        message=str(obj.get("message") or obj.get("note") or ""),
        kind=str(ref.get("kind") or ""),
        name=str(ref.get("name") or ""),
        count=int(count) if isinstance(count, int) else 1,
        first_time=first or last,
        source=str(obj.get("reportingComponent") or source.get("component") or ""),
    )


# -- runtimes ---------------------------------------------------------------------------------------


def runtimes(kube: Any, namespace: str) -> list[RuntimeInfo]:
    """The namespace's TrainingRuntimes, then the ClusterTrainingRuntimes, each by name."""
    out = []
    for resource, ns in ((R.TRAINING_RUNTIME, namespace), (R.CLUSTER_TRAINING_RUNTIME, None)):
        where = f" in namespace {ns}" if ns else ""
        listed = reading.retried(
            kube, lambda resource=resource, ns=ns: kube.list(resource, ns), f"list {resource.kind}s{where}"
        )
        out.extend(sorted((runtime_info(r, resource.kind) for r in _items(listed)), key=lambda r: r.name))
    return out


def runtime_info(obj: Mapping[str, Any], kind: str | None = None) -> RuntimeInfo:
    """A runtime object, typed."""
    meta = _meta(obj)
    kind = kind or str(obj.get("kind") or "ClusterTrainingRuntime")
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    spec = obj.get("spec") or {}
    policy = spec.get("mlPolicy") or {}
    nodes = policy.get("numNodes")
    return RuntimeInfo(
        name=str(meta.get("name") or ""),
        kind=kind,
        scope="namespace" if kind == "TrainingRuntime" else "cluster",
        namespace=meta.get("namespace") if kind == "TrainingRuntime" else None,
        framework=labels.get(W.FRAMEWORK_LABEL),
        compiled_by_trainspec=labels.get(W.MANAGED_BY_LABEL) == W.MANAGED_BY_VALUE,
        ml_policy=policy_summary(policy),
        num_nodes=nodes if isinstance(nodes, int) else None,
        image=trainer_image(spec),
        labels=labels,
    )


def policy_summary(policy: Mapping[str, Any]) -> str:
    """``spec.mlPolicy`` in a few words: ``torch, 2 nodes, 8 processes per node``, ``mpi (OpenMPI), 1 node``."""
    kinds = sorted(k for k, v in policy.items() if k != "numNodes" and isinstance(v, dict))
    head = kinds[0] if kinds else "plain"
    settings = policy.get(head) if kinds else {}
    implementation = (settings or {}).get("mpiImplementation")
    parts = [head + (f" ({implementation})" if implementation else "")]
    nodes = policy.get("numNodes")
    if isinstance(nodes, int):
        parts.append(f"{nodes} node{'s' * (nodes != 1)}")
    procs = (settings or {}).get("numProcPerNode")
    if procs is not None:
        parts.append(f"{procs} processes per node")
    return ", ".join(parts)


def trainer_image(spec: Mapping[str, Any]) -> str | None:
    """The image of container ``node`` in the replicated job Trainer runs as the ``trainer`` step."""
    rjobs = ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []
    ordered = sorted(
        rjobs,
        key=lambda r: (
            (((r.get("template") or {}).get("metadata") or {}).get("labels") or {}).get(W.ANCESTOR_LABEL)
            != W.ANCESTOR_TRAINER
        ),
    )
    for rjob in ordered:
        pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in pod.get("containers") or []:
            if container.get("name") == W.NODE:
                return container.get("image")
    return None


# -- what submit did ---------------------------------------------------------------------------------


def applied(outcome: Any, kinds: Mapping[str, str]) -> Applied:
    """One of ``trainspec.kube.submit``'s outcomes (``trainjob.trainer.kubeflow.org/ml-dev/ddp created``), typed.

    ``kinds`` maps kubectl's ``kind.group`` to the kind (``trainjob.trainer.kubeflow.org`` to ``TrainJob``).
    """
    resource, _, rest = str(outcome.target).partition("/")
    namespace, _, name = rest.rpartition("/")
    action, dry_run = str(outcome.action), bool(outcome.dry_run)
    if action == "would be deleted":  # an earlier run, under a server dry run
        action, dry_run = "deleted", True
    kind = kinds.get(resource) or resource.partition(".")[0]
    return Applied(kind, namespace or None, name, action, dry_run, outcome.line(), str(outcome.why or ""))


def kinds_of(objects: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """kubectl's ``kind.group`` of each kind among ``objects`` and those trainspec applies, to the kind."""
    found = [(r.api_version, r.kind) for r in R.KINDS.values()]
    found += [(str(o.get("apiVersion") or ""), str(o.get("kind") or "")) for o in objects]
    out = {}
    for api_version, kind in found:
        group = api_version.rpartition("/")[0]
        out[kind.lower() + (f".{group}" if group else "")] = kind
    return out
