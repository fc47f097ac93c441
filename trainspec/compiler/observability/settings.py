"""A job's effective ``observability`` settings: the job's block over its runtime's over the defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from trainspec.dsl.record import Record, field

if TYPE_CHECKING:
    from trainspec.compiler.resolve import ResolvedJob
    from trainspec.dsl.spec.models import Runtime


class Settings(Record):
    """What a job's pods expose and what is emitted beside the job's object."""

    team: str
    metrics_port: int | None
    pod_monitor: bool
    dashboard: bool
    pod_monitor_labels: dict[str, str] = field(default_factory=dict)


def metrics_port(runtime: Runtime) -> int | None:
    """The rank-0 metrics port the runtime's trainer containers declare, if any."""
    block = runtime.spec.observability
    return block.metrics_port if block is not None else None


class _Planned(Protocol):
    """A job plan as far as its settings go (:class:`trainspec.compiler.plan.JobPlan`)."""

    @property
    def resolved(self) -> ResolvedJob: ...

    @property
    def observability(self) -> Settings | None: ...


def settings(plan: _Planned) -> Settings:
    """The settings the plan pass decided for ``plan``'s job (computed here for a plan built by hand)."""
    return plan.observability if plan.observability is not None else settings_of(plan.resolved)


def settings_of(resolved: ResolvedJob) -> Settings:
    """The job's settings; the team defaults to the job's namespace (one namespace per team is the
    usual multi-tenant layout, and it is always a valid label value)."""
    job = resolved.job.spec.observability
    runtime = resolved.runtime.spec.spec.observability

    def pick(name: str, default: object) -> object:
        for block in (job, runtime):
            value = getattr(block, name, None) if block is not None else None
            if value is not None:
                return value
        return default

    return Settings(
        team=str(pick("team", resolved.namespace)),
        metrics_port=runtime.metrics_port if runtime is not None else None,
        pod_monitor=bool(pick("pod_monitor", False)),
        dashboard=bool(pick("dashboard", False)),
        pod_monitor_labels=dict(runtime.pod_monitor_labels) if runtime is not None else {},
    )
