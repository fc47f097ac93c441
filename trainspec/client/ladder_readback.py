"""``trainspec ladder report``: what each rung of a ladder measured on the cluster, read back.

A rung on the cluster is the TrainJob ``compile --ladder`` names for it: the current run of the
rung's spec (``<job>-ladder-<rung>-<run id>``, labelled ``trainspec.dev/ladder`` and
``trainspec.dev/ladder-rung``). Its figures are rank 0's last progress report
(:mod:`trainspec.stages.reported_rates`):

* the TrainJob's ``status.trainerStatus`` metrics, which the rank-0
  :class:`~trainspec.stages.ProgressReporter` posts to Trainer's TrainJobStatus endpoint and a
  finished TrainJob keeps;
* else the last ``{"trainspecProgress": ...}`` line of the rank-0 pod's log (container ``node`` of
  node 0's newest pod), where the reporter prints when the cluster has no such endpoint and the
  script chose ``StdoutSink(format="json")``.

Each becomes a :class:`~trainspec.stages.step_rates.RankRate` of rank 0 and then the rung's
:class:`~trainspec.stages.step_rates.Measurement` through
:func:`~trainspec.stages.step_rates.combine`, with the rung's world size and the spec's global
batch: the same functions as the step logs of ``ladder run --local``, so the table
(:func:`trainspec.explain.ladder_scaling.analyse`) means the same. A rung without figures says why.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trainspec.compiler.pipeline import CompileResult
from trainspec.compiler.plan import JobPlan
from trainspec.explain.ladder_scaling import MeasuredRung
from trainspec.k8s import wellknown as W
from trainspec.kube import reading, resources as R
from trainspec.kube.errors import get_or_none
from trainspec.kube.session import CommandError
from trainspec.kube.state import JobView
from trainspec.kube.submit_plan import JobObjects, select_jobs
from trainspec.kube.times import parse_time
from trainspec.run.ladder_run import Ladder, rung_tag, spec_batch
from trainspec.stages.reported_rates import MEASUREMENT, PROGRESS_KEY, STEPS_PER_SECOND, reported_rate
from trainspec.stages.step_rates import combine

__all__ = ["WINDOW", "ClusterRung", "cluster_rungs", "read_rung", "read_rungs", "read_trainjob", "rung_end", "why"]

#: How a rung ended (:func:`rung_end`).
COMPLETE, DEADLINE, FAILED = "complete", "deadline", "failed"
#: Trainer's reason for a TrainJob past its ``activeDeadlineSeconds``; Kueue's (part of its eviction
#: reason) for a Workload past its maximum execution time (``kueue.x-k8s.io/max-exec-time-seconds``).
DEADLINE_EXCEEDED = "DeadlineExceeded"
MAX_EXEC_TIME = "MaximumExecutionTimeExceeded"
#: How the cluster's figures were taken (the table's last line).
WINDOW = "rank 0's last progress report of each rung, over its StepMetrics' recent steps"
#: Lines read from the end of the rank-0 pod's log for its last progress line.
LOG_TAIL = 5000
_TEXT_LINE = "trainspec progress: "
_NOT_FINISHED = "not finished"


@dataclass(frozen=True)
class ClusterRung:
    """One rung of a ladder and the objects ``submit`` applies for it."""

    plan: JobPlan
    tag: str
    objects: JobObjects

    @property
    def namespace(self) -> str:
        return self.objects.namespace

    @property
    def trainjob(self) -> str:
        """The TrainJob's name: the rung's current run."""
        return self.objects.name

    @property
    def run(self) -> str:
        """The run id compile gave the rung's TrainJob ("" when it has none)."""
        return str(((self.objects.trainjob.get("metadata") or {}).get("labels") or {}).get(W.RUN_LABEL) or "")

    def current(self, found: Mapping[str, Any] | None) -> bool:
        """Whether ``found`` (the TrainJob of the rung's name on the cluster) is this run of the rung."""
        labels = ((found or {}).get("metadata") or {}).get("labels") or {}
        return found is not None and str(labels.get(W.RUN_LABEL) or "") == self.run

    def measured(self, status: str, note: str | None = None, **more: Any) -> MeasuredRung:
        resolved = self.plan.resolved
        nodes = resolved.nodes.value
        return MeasuredRung(
            tag=self.tag,
            name=resolved.name,
            nodes=nodes,
            procs_per_node=resolved.procs_per_node.value,
            world_size=resolved.world_size,
            gpus=nodes * resolved.gpus_per_node.value,
            status=status,
            note=note,
            **more,
        )


def cluster_rungs(result: CompileResult, ladder: Ladder, tags: Iterable[str] | None = None) -> list[ClusterRung]:
    """The ladder's rungs (only ``tags`` when given), smallest first, each with what submit applies
    for it (TS713 as a :class:`CommandError` for a job whose engine the cluster commands do not run)."""
    chosen = None if tags is None else set(tags)
    plans = [p for p in ladder.plans if chosen is None or rung_tag(p) in chosen]
    # Rung by rung: another job among the inputs (on another engine, say) is none of the climb's business.
    return [ClusterRung(p, rung_tag(p), _objects(result, p)) for p in plans]


def _objects(result: CompileResult, plan: JobPlan) -> JobObjects:
    (found,) = [j for j in select_jobs(result, plan.resolved.name) if j.namespace == plan.resolved.namespace]
    return found


def read_trainjob(kube: Any, rung: ClusterRung) -> dict[str, Any] | None:
    """The TrainJob of the rung's name as the cluster has it now (None: there is none)."""
    what = f"read TrainJob {rung.namespace}/{rung.trainjob}"
    found: dict[str, Any] | None = reading.retried(
        kube, lambda: get_or_none(kube, R.TRAINJOB, rung.namespace, rung.trainjob), what
    )
    return found


def read_rungs(kube: Any, rungs: Sequence[ClusterRung], stopped: Mapping[str, str] | None = None) -> list[MeasuredRung]:
    """Each rung as the cluster has it; ``stopped``: why a rung was not run (by tag), said in its note."""
    return [read_rung(kube, rung, (stopped or {}).get(rung.tag)) for rung in rungs]


def rung_end(view: JobView) -> str | None:
    """How a rung's TrainJob ended: ``complete``; ``deadline`` when it ran out its ``maxRunTime`` (Trainer's
    ``activeDeadlineSeconds``, or Kueue's maximum execution time deactivating its Workload), the way a
    rung of a long job ends after measuring for its whole time; ``failed`` (Kueue deactivation for another
    reason included: nothing restarts it); None while it has not ended."""
    if view.phase == "Complete":
        return COMPLETE
    if (view.phase == "Failed" and view.reason == DEADLINE_EXCEEDED) or (
        view.phase == "Deactivated" and (MAX_EXEC_TIME in view.reason or "maximum execution time" in view.message)
    ):
        return DEADLINE
    if view.phase in ("Failed", "Deactivated"):
        return FAILED
    return None


def why(view: JobView) -> str:
    """``Failed (DeadlineExceeded): TrainJob exceeded its active deadline``: the phase and what says why."""
    return view.label() + (f": {view.message}" if view.message else "")


def read_rung(kube: Any, rung: ClusterRung, stopped: str | None = None) -> MeasuredRung:
    """One rung: its figures when its TrainJob ended with them, else its state and why."""
    found = read_trainjob(kube, rung)
    where = f"TrainJob {rung.namespace}/{rung.trainjob}"
    if not rung.current(found):
        return rung.measured("not run", stopped or _absent(kube, rung, found))
    assert found is not None
    view = reading.job_view(kube, rung.namespace, rung.trainjob, found)
    end = rung_end(view)
    seconds = _seconds(found)
    if end == FAILED:
        return rung.measured("failed", f"{where}: {why(view)}", seconds=seconds)
    if end is None:
        return rung.measured(_NOT_FINISHED, f"{where} is {view.label()}: its figures are read once it has ended")
    metrics, source, problem = _metrics(kube, rung, found)
    if metrics is None:
        return rung.measured("no measurement", problem, seconds=seconds)
    rate, lacking = reported_rate(metrics)
    if rate is None:
        return rung.measured("no measurement", f"{lacking} (read from {source})", seconds=seconds)
    samples_per_step, tokens_per_sample = spec_batch(rung.plan)
    measurement = combine(
        [rate],
        rung.plan.resolved.world_size,
        samples_per_step=samples_per_step,
        tokens_per_sample=tokens_per_sample,
    )
    ran_out = (
        f"{where} ran out its maxRunTime ({why(view)}); the figures are its last report's" if end == DEADLINE else None
    )
    return rung.measured("measured", ran_out, measurement=measurement, seconds=seconds)


def _absent(kube: Any, rung: ClusterRung, found: Mapping[str, Any] | None) -> str:
    """Why the rung's current run is not on the cluster, naming an earlier run of it when there is one."""
    other = found if found is not None else reading.newest_run(kube, rung.namespace, rung.plan.resolved.name)
    climb = "trainspec ladder run SPEC climbs it"
    if other is None:
        return f"not on the cluster: {climb}"
    run = ((other.get("metadata") or {}).get("labels") or {}).get(W.RUN_LABEL) or "?"
    name = (other.get("metadata") or {}).get("name")
    return (
        f"not on the cluster: TrainJob {rung.namespace}/{name} is run {run} of an earlier version of the spec, "
        f"not measured against this one; {climb}"
    )


def _seconds(job: Mapping[str, Any]) -> float | None:
    """From the job's (last) start, its resume or its creation, to its end; None while it runs."""
    status = job.get("status") or {}
    conditions = status.get("conditions") or []
    end = next(
        (
            parse_time(c.get("lastTransitionTime"))
            for c in conditions
            if c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        ),
        None,
    )
    resumed = next(
        (
            parse_time(c.get("lastTransitionTime"))
            for c in conditions
            if c.get("type") == "Suspended" and c.get("status") == "False"
        ),
        None,
    )
    start = resumed or parse_time((job.get("metadata") or {}).get("creationTimestamp"))
    if end is None or start is None or end < start:
        return None
    return (end - start).total_seconds()


def _metrics(kube: Any, rung: ClusterRung, job: Mapping[str, Any]) -> tuple[dict[str, str] | None, str, str]:
    """Rank 0's last reported metrics, where they were read, and (without metrics) why there are none."""
    trainer = (job.get("status") or {}).get("trainerStatus") or {}
    reported = {str(m.get("name")): str(m.get("value")) for m in trainer.get("metrics") or [] if isinstance(m, dict)}
    if _measurement(reported):
        return reported, "the TrainJob's status.trainerStatus", ""
    logged, seen_text, unreadable = _last_logged(kube, rung, job)
    if logged is not None and _measurement(logged):
        return logged, "the rank-0 pod's log", ""
    # Neither has the figures: the reports that exist say what they lack.
    if reported:
        return reported, "the TrainJob's status.trainerStatus", ""
    if logged is not None:
        return logged, "the rank-0 pod's log", ""
    if seen_text:
        why = (
            "rank 0's progress went to its log as text lines (the cluster has no Trainer TrainJobStatus "
            'endpoint): report with ProgressReporter(StdoutSink(format="json"), metrics=meter) (StdoutSink from '
            "trainspec.stages.progress_report) so its log carries the figures, or turn on Trainer's TrainJobStatus "
            "feature gate"
        )
        return None, "", why
    fix = (
        "report from the training loop on rank 0 with trainspec.stages.ProgressReporter(metrics=meter), the "
        "loop timed with StepMetrics (docs/metrics.md)"
    )
    if unreadable:
        return None, "", f"the TrainJob has no progress status and {unreadable}; {fix}"
    return None, "", f"rank 0 never reported progress (no status.trainerStatus, no progress line in its log): {fix}"


def _measurement(metrics: Mapping[str, str]) -> bool:
    return STEPS_PER_SECOND in metrics and any(name in metrics for name in MEASUREMENT)


def _last_logged(kube: Any, rung: ClusterRung, job: Mapping[str, Any]) -> tuple[dict[str, str] | None, bool, str]:
    """The metrics of the last JSON progress line of the rank-0 pod's log, whether text progress
    lines were seen, and why the log could not be read ("" when it was)."""
    from trainspec.compiler.lower.dialects import dialect_for_kind

    dialect = dialect_for_kind("TrainJob")
    assert dialect is not None
    facts = dialect.launch_facts(dict(job))
    selector = ",".join(f"{k}={v}" for k, v in facts.log_selector.items())
    ns = rung.namespace
    try:
        pods = reading.retried(kube, lambda: kube.list_pods(ns, selector), f"list the rank-0 pod of {rung.trainjob}")
        if not pods:
            return None, False, "its rank-0 pod is gone (no log to read)"
        pod = max(pods, key=lambda p: ((p.get("metadata") or {}).get("creationTimestamp") or "", p["metadata"]["name"]))
        name = str(pod["metadata"]["name"])
        lines = reading.retried(
            kube,
            lambda: list(kube.stream_log(ns, name, facts.log_container, follow=False, tail_lines=LOG_TAIL)),
            f"read the log of pod {ns}/{name}",
        )
    except CommandError as exc:
        return None, False, "its rank-0 pod's log could not be read: " + "; ".join(d.message for d in exc.diagnostics)
    last: dict[str, str] | None = None
    seen_text = False
    for line in lines:
        at = line.find('{"' + PROGRESS_KEY + '"')
        if at < 0:
            seen_text = seen_text or _TEXT_LINE in line
            continue
        try:
            status = json.loads(line[at:])[PROGRESS_KEY]
            last = {str(m["name"]): str(m["value"]) for m in status.get("metrics") or []}
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a line cut short (a killed process) or not ours
    return last, seen_text, ""
