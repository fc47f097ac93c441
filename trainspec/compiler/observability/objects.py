"""The objects a job's ``observability`` block adds beside the job's own: PodMonitor, dashboard ConfigMap."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainspec.compiler.lower.dialects import Lowered
    from trainspec.compiler.plan import JobPlan


def lowered_objects(plan: JobPlan) -> list[Lowered]:
    """The PodMonitor (when asked and a metrics port exists) then the dashboard ConfigMap (when
    asked), each with its provenance: the job's ``observability`` block, else the runtime's."""
    from trainspec.compiler.lower.dialects import Lowered
    from trainspec.compiler.observability.settings import settings
    from trainspec.compiler.provenance import FieldSources, SpecRef

    chosen = settings(plan)
    resolved = plan.resolved
    owner = (
        SpecRef(resolved.loaded, ("spec", "observability"))
        if resolved.job.spec.observability is not None
        else SpecRef(resolved.loaded, ())
    )
    out: list[Lowered] = []
    if chosen.pod_monitor and chosen.metrics_port is not None:  # without a port: TS435 (rules)
        from trainspec.compiler.observability.podmonitor import pod_monitor

        out.append(Lowered(pod_monitor(plan), FieldSources(default=owner)))
    if chosen.dashboard:
        from trainspec.compiler.observability.dashboard import dashboard_configmap

        out.append(Lowered(dashboard_configmap(plan), FieldSources(default=owner)))
    return out
