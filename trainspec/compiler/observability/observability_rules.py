"""Diagnostics of the ``observability`` block, one rule of the rules pass (:data:`trainspec.compiler.rules.RULES`).

* TS435 (error): a PodMonitor is asked for but the runtime declares no ``metricsPort``: a
  PodMonitor only scrapes declared container ports, so it would find nothing.
* TS436 (warning): the job's ``podLabels`` set a label trainspec writes on every trainer pod
  (``trainspec.dev/job``, ``/namespace``, ``/team``, ``/runtime``); trainspec's value is kept, so
  dashboards never show one job's pods as another's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from trainspec.dsl import codes

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan
    from trainspec.dsl.diagnostics import Diagnostic


def observability_problems(plan: JobPlan) -> Iterator[Diagnostic]:
    """TS435 and TS436 for one planned job."""
    from trainspec.compiler.lower.labels import OBSERVABILITY_LABELS, pod_labels
    from trainspec.compiler.observability.settings import settings
    from trainspec.compiler.resolve import related_at
    from trainspec.dsl.diagnostics import Severity

    resolved = plan.resolved
    job = resolved.loaded
    runtime = resolved.runtime
    chosen = settings(plan)
    if chosen.pod_monitor and chosen.metrics_port is None:
        block = resolved.job.spec.observability
        related = (
            (related_at(runtime.loaded, ("spec", "observability"), f"runtime {runtime.name} declares no metricsPort"),)
            if not runtime.builtin
            else ()
        )
        if block is not None and block.pod_monitor:
            path: tuple = ("spec", "observability", "podMonitor")
        else:
            path = ("spec", "runtime")
        yield job.diagnostic(
            codes.PODMONITOR_NO_PORT,
            path,
            f"a PodMonitor needs the port rank 0 serves metrics on, and runtime {runtime.name} "
            "declares none (spec.observability.metricsPort)",
            hint="set observability.metricsPort on the runtime (the training image's metrics port), "
            "or set podMonitor: false",
            related=related,
        )
    for key in OBSERVABILITY_LABELS:
        if key in resolved.job.spec.pod_labels:
            yield job.diagnostic(
                codes.POD_LABEL_OVERRIDDEN,
                ("spec", "podLabels", key),
                f"{key} is set by trainspec on every trainer pod; "
                f"this value is replaced by {pod_labels(plan).get(key)!r}",
                hint="remove it (set observability.team for the team label)",
                severity=Severity.WARNING,
                at_key=True,
            )
